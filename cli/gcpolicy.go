package cli

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// gcPolicy is how a long command tunes the collector. A fixed soft memory limit is tuned for one size of
// workspace and turns into a spinning collector on a bigger one: once the live heap passes it, every
// allocation starts a collection (the dashboard at 10,000 runs under a fixed 56 MiB used 152% of a core,
// forever). So the limit here follows the live heap: after every collection it is set again to
// max(floor, factor × live), never below what is live. Below floor/factor of live heap this is the fixed
// limit it replaces; above, the heap may grow by factor-1 of what is live before the next collection, as
// GOGC would allow.
type gcPolicy struct {
	// percent is the GOGC to set; 0 keeps the runtime's. GOGC in the environment overrides it.
	percent int
	// floor is the least soft limit, factor the multiple of the live heap it follows above that.
	// GOMEMLIMIT in the environment overrides both.
	floor  int64
	factor float64
}

// dashboardGC: the dashboard holds every run for as long as it runs. The 56 MiB floor is issue 16's tuning
// (≤ 80 MiB RSS at 1,200 runs, where the default GC let the heap reach twice what is live); above it the
// heap may grow by half of what is live.
var dashboardGC = gcPolicy{floor: 56 << 20, factor: 1.5}

// statusGC: status used GOGC 400 while it held every run until it printed (a collection then found little
// to free). It streams its document now and keeps a sort key a run, so the runtime's GOGC serves: over
// 10,000 runs GOGC 400 took 121 MiB and GOGC 100 60 MiB for the same CPU. The limit (twice what is live, at
// least 256 MiB) only matters if something makes the live heap grow that large.
var statusGC = gcPolicy{floor: 256 << 20, factor: 2}

// apply sets the policy for this process and returns what undoes it (tests run commands in one process).
func (p gcPolicy) apply() (restore func()) {
	var undo []func()
	if p.percent != 0 && os.Getenv("GOGC") == "" {
		old := debug.SetGCPercent(p.percent)
		undo = append(undo, func() { debug.SetGCPercent(old) })
	}
	if p.factor > 0 && os.Getenv("GOMEMLIMIT") == "" {
		old := debug.SetMemoryLimit(-1)
		stop := &atomic.Bool{}
		p.follow()
		rearm(p, stop)
		undo = append(undo, func() {
			stop.Store(true)
			debug.SetMemoryLimit(old)
		})
	}
	return func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
}

// follow sets the soft limit from the live heap of the last collection.
func (p gcPolicy) follow() {
	debug.SetMemoryLimit(p.limitFor(liveHeap()))
}

func (p gcPolicy) limitFor(live uint64) int64 {
	l := p.factor * float64(live)
	if l >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(p.floor, int64(l))
}

// rearm runs follow once after the next collection and arms itself again: a cleanup on an object nothing
// keeps runs after the collection that found it unreachable. An idle process allocates nothing, collects
// only when the runtime forces it (every two minutes) and so wakes no more for this.
func rearm(p gcPolicy, stop *atomic.Bool) {
	// 32 bytes without pointers: not the tiny allocator's (under 16 bytes), whose blocks are shared with
	// other objects and may never be freed.
	sentinel := new([32]byte)
	runtime.AddCleanup(sentinel, func(stop *atomic.Bool) {
		if stop.Load() {
			return
		}
		p.follow()
		rearm(p, stop)
	}, stop)
}

// liveHeap is the heap the last collection found live (runtime/metrics: what GOGC's goal is computed from).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
