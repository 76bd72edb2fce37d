// Package gcpolicy tunes the collector for a long command: a soft memory limit that follows the live heap.
package gcpolicy

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Policy is how a long command tunes the collector. A fixed soft memory limit is tuned for one size of
// workspace and turns into a spinning collector on a bigger one: once the live heap passes it, every
// allocation starts a collection, forever (docs/BENCHMARKS.md, "The collector's settings"). So the limit
// here follows the live heap: after every collection it is set again to
// max(floor, factor × live), never below what is live. Below floor/factor of live heap this is the fixed
// limit it replaces; above, the heap may grow by factor-1 of what is live before the next collection, as
// GOGC would allow.
type Policy struct {
	// percent is the GOGC to set; 0 keeps the runtime's, -1 turns it off so the soft limit alone paces the
	// collector (never while GOMEMLIMIT in the environment overrides the limit). GOGC in the environment
	// overrides it.
	percent int
	// floor is the least soft limit, factor the multiple of the live heap it follows above that, headroom
	// what it lets the heap grow past the live heap, whatever that is: the limit is the largest of the three.
	// GOMEMLIMIT in the environment overrides them.
	floor    int64
	factor   float64
	headroom int64
	// growFactor, when set, replaces factor while the live heap grows by more than a tenth from one
	// collection to the next: while runs arrive, each collection marks a heap the next one marks again, grown,
	// so a heap allowed to double before it is marked again costs a third less marking over the load. Once
	// the live heap holds still, the next collection sets the limit back to factor, and the RSS with it.
	growFactor float64
	// offAtGOGCPace turns GOGC off at every heap size. With GOGC on, the runtime also collects every two
	// minutes whatever was allocated: marking the dashboard's 165 MB at 10,000 runs cost 0.5 s of CPU each
	// time, 0.4% of a core idle, and at 6 runs that collection and its wake-ups were a sixth of an idle
	// dashboard's CPU (docs/BENCHMARKS.md, "The collector's settings", "Session 10"). Where the soft limit is
	// above GOGC 100's goal (twice what is live) it is lowered to that goal, so a small heap keeps the pace
	// and the RSS it had under GOGC 100, without the timed collection.
	offAtGOGCPace bool
}

// Dashboard: the dashboard holds every run for as long as it runs. The 56 MiB floor is issue 16's tuning
// for its RSS goal at 1,200 runs, where the default GC let the heap reach twice what is live; above it the
// heap may grow by half of what is live.
// While runs arrive (a fleet's first snapshots, a local first read) it may grow by as much as is live.
var Dashboard = Policy{floor: 56 << 20, factor: 1.5, growFactor: 2, offAtGOGCPace: true}

// Status: status streams its document, and what it keeps of each run holds no pointer (status.statusRec, the
// history's samples, discovery's seen sets); the rest of its live heap is caches of a bounded size. So a
// collection costs about as much at 1,000 runs as at 100,000, and the heap need not grow in proportion to
// what is live. GOGC is off and the soft limit alone paces the collector: the process's memory may grow by
// a fixed 26 MiB past the live heap (the garbage of a few hundred runs read) before the next collection,
// whatever is live. The limit counts all the runtime's memory, not only the heap, so that is what peak RSS
// follows: 32 MiB put it at status's 40 MiB goal and past it in one round of three; 24 MiB doubled the
// collections. Under GOGC 100 beside this limit, a live heap of a few MiB was collected every few MiB
// allocated, and GOGC 100 alone let the heap grow by as much as was live (the figures of all are in
// docs/BENCHMARKS.md, "The collector's settings").
var Status = Policy{percent: -1, headroom: 26 << 20}

// Events: `runwatch events` holds every run it has written (to tell what changed) and the watcher's tree, so
// its live heap grows with the runs (~20 MiB at 1,000), and reading its first runs makes ~15 times that in
// garbage. Under GOGC 100 a host's events for a dashboard collected 25 times over its first 1,000 runs, an
// eighth of its CPU (issue 35). GOGC is off and the soft limit paces the collector: the process may grow
// 48 MiB past the live heap, or twice the live heap once that is larger (GOGC 100's pace, for a host of
// 10,000 runs), never less than what is live.
var Events = Policy{percent: -1, headroom: 48 << 20, factor: 2}

// Apply sets the policy for this process and returns what undoes it (tests run commands in one process).
// getenv is the environment the command runs in: GOGC and GOMEMLIMIT there are the user's, and win.
func (p Policy) Apply(getenv func(string) string) (restore func()) {
	var undo []func()
	limited := (p.factor > 0 || p.headroom > 0) && getenv("GOMEMLIMIT") == ""
	if p.percent != 0 && getenv("GOGC") == "" && (p.percent > 0 || limited) {
		old := debug.SetGCPercent(p.percent)
		undo = append(undo, func() { debug.SetGCPercent(old) })
	}
	if limited {
		if !p.offAtGOGCPace || getenv("GOGC") != "" {
			p.offAtGOGCPace = false // the user's GOGC stays theirs
		} else {
			old := debug.SetGCPercent(100)
			undo = append(undo, func() { debug.SetGCPercent(old) })
		}
		old := debug.SetMemoryLimit(-1)
		st := &following{}
		rearm(p, st, p.follow(0))
		undo = append(undo, func() {
			st.mu.Lock()
			defer st.mu.Unlock()
			st.stopped = true
			debug.SetMemoryLimit(old)
		})
	}
	return func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
}

// follow sets the soft limit from the live heap of the last collection (and GOGC off, offAtGOGCPace);
// before is the live heap it followed the last time, and it returns the one it follows now.
func (p Policy) follow(before uint64) uint64 {
	live := liveHeap()
	limit := p.limitAfter(before, live)
	if p.offAtGOGCPace {
		debug.SetGCPercent(-1) // first: a reader that sees the new limit sees it too
		limit = min(limit, gogcPace(live, nonHeap()))
	}
	debug.SetMemoryLimit(limit)
	return live
}

// limitAfter is the limit for a live heap of live bytes that was before at the collection before it: at
// growFactor while it grows by more than a tenth (a load), else limitFor.
func (p Policy) limitAfter(before, live uint64) int64 {
	if p.growFactor > 0 && live > before+before/10 {
		p.factor = p.growFactor
	}
	return p.limitFor(live)
}

// gogcMinHeap is the least heap goal of GOGC 100 (the runtime's heapMinimum).
const gogcMinHeap = 4 << 20

// gogcPace is the soft limit under which the runtime's heap goal, with GOGC off, is GOGC 100's: twice what
// is live, at least gogcMinHeap. The runtime takes what it holds besides the heap (nonHeap) off the limit,
// and 3% (at least 1 MiB) of what is left, before it sets the goal.
func gogcPace(live, nonHeap uint64) int64 {
	goal := max(2*live, gogcMinHeap)
	return int64(nonHeap + goal + max(goal*3/100, 1<<20))
}

// nonHeap is what the runtime holds that is not heap memory in use or free for it (stacks, its own
// structures, the unused part of heap spans): what it subtracts from the soft limit to set a heap goal.
func nonHeap() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	var v [4]uint64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = s[i].Value.Uint64()
		}
	}
	if held := v[1] + v[2] + v[3]; held < v[0] {
		return v[0] - held
	}
	return 0
}

func (p Policy) limitFor(live uint64) int64 {
	l := max(p.factor*float64(live), float64(live)+float64(p.headroom))
	if l >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(p.floor, int64(l))
}

// rearm runs follow once after the next collection and arms itself again: a cleanup on an object nothing
// keeps runs after the collection that found it unreachable. An idle process allocates little and, with
// GOGC off, is never collected on a timer, so this wakes nobody.
func rearm(p Policy, st *following, live uint64) {
	// 32 bytes without pointers: not the tiny allocator's (under 16 bytes), whose blocks are shared with
	// other objects and may never be freed.
	sentinel := new([32]byte)
	runtime.AddCleanup(sentinel, func(st *following) {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.stopped {
			return
		}
		rearm(p, st, p.follow(live))
	}, st)
}

// following is an applied policy's state: once stopped (undone), no follow is under way or to come, so
// what the undo restores stays.
type following struct {
	mu      sync.Mutex
	stopped bool
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
