// Package gcpolicy tunes the collector for a long command: a soft memory limit that follows the live heap.
package gcpolicy

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Policy is how a long command tunes the collector. A fixed soft memory limit is tuned for one size of
// workspace and turns into a spinning collector on a bigger one: once the live heap passes it, every
// allocation starts a collection, forever (docs/BENCHMARKS.md, "The collector's settings"). So the limit
// here follows the live heap: after every collection it is set again to
// max(floor, factor × live, live + headroom) (plus the runtime's own memory, besides), never below what is live. Below floor/factor of live heap this is the fixed
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
	// besides puts what the runtime holds besides the heap (nonHeap) on top of factor's and headroom's
	// limit, so they pace the heap alone, as GOGC does. At 10,000 runs that is a third of what is live, most of it room
	// inside spans: counted inside a limit of 1.5 × live it left the heap a few MiB to grow, and a first
	// read ran the collector back to back, 114 times, for a quarter of its CPU. How fast a load may grow the
	// heap is also how sparse it leaves what stays live, and so the RSS after it: the room inside spans was
	// 42 MiB at 1.25, 66 at 1.5 and 116 at 2 (docs/BENCHMARKS.md, "Session 11").
	besides bool
	// offAtGOGCPace turns GOGC off at every heap size. With GOGC on, the runtime also collects every two
	// minutes whatever was allocated: marking the dashboard's 165 MB at 10,000 runs cost 0.5 s of CPU each
	// time, 0.4% of a core idle, and at 6 runs that collection and its wake-ups were a sixth of an idle
	// dashboard's CPU (docs/BENCHMARKS.md, "The collector's settings", "Session 10"). Where the soft limit is
	// above GOGC 100's goal (twice what is live) it is lowered to that goal, so a small heap keeps the pace
	// and the RSS it had under GOGC 100, without the timed collection.
	offAtGOGCPace bool
	// settleAfter, when set, is how long allocation must stay quiet after a load before the memory the
	// load left free goes back to the system (settleLater).
	settleAfter time.Duration
}

// Dashboard: the dashboard holds every run for as long as it runs. The 56 MiB floor is issue 16's tuning
// for its RSS goal at 1,200 runs, where the default GC let the heap reach twice what is live; above it the
// heap may grow by an eighth of what is live, at least 10 MiB, beside the runtime's own memory. How far the
// heap may grow at the end of a load is how much of its last garbage stays behind as room inside the spans
// of the runs it read last, in RSS for as long as the runs are shown; the 10 MiB keeps a load's early
// collections, of a small heap, as few as a quarter of live did (docs/BENCHMARKS.md, "Session 12: the
// collector's pace"). Once runs stop arriving (a first read, a fleet's first snapshots) and allocation is
// quiet for two seconds, what the load left free goes back to the system (settleLater).
var Dashboard = Policy{floor: 56 << 20, factor: 1.125, headroom: 10 << 20, besides: true, offAtGOGCPace: true, settleAfter: 2 * time.Second}

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
		first, _ := p.follow(collection{})
		rearm(p, st, first)
		undo = append(undo, func() {
			st.mu.Lock()
			defer st.mu.Unlock()
			st.stopped = true
			if st.settling != nil {
				st.settling.Stop()
			}
			debug.SetMemoryLimit(old)
		})
	}
	return func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
}

// collection is what a follow saw after a collection: the live heap, when, what the heap had allocated, and
// how many collections had been forced.
type collection struct {
	live, allocs, forced uint64
	at                   time.Time
}

// loading says whether a collection that found now after before was one of a load: the live heap grew by
// more than a tenth, or the collector ran again within a second after the heap allocated more than quiet
// (at a quarter of the live heap's pace a load's live heap grows by a few percent from one collection to
// the next). An idle dashboard is collected minutes or hours apart. A forced collection (settleLater's) is
// not a load's, and nor is the one the runtime may add right after it, with nothing allocated, to bring its
// memory under the limit: either would start settling again.
func loading(before, now collection) bool {
	if now.forced != before.forced {
		return false
	}
	return growing(before.live, now.live) ||
		now.at.Sub(before.at) < time.Second && now.allocs-before.allocs > quiet(now.live)
}

// quiet is what the heap may allocate in a second or two while the dashboard counts as idle.
func quiet(live uint64) uint64 { return max(live/16, 1<<20) }

// growing says whether the live heap grew by more than a tenth from one collection to the next.
func growing(before, live uint64) bool { return live > before+before/10 }

// follow sets the soft limit from the live heap of the last collection (and GOGC off, offAtGOGCPace);
// before is what it saw the last time, and it returns what it sees now and whether that was a load's.
func (p Policy) follow(before collection) (collection, bool) {
	now := collection{live: liveHeap(), allocs: readUint64("/gc/heap/allocs:bytes"),
		forced: readUint64("/gc/cycles/forced:gc-cycles"), at: time.Now()}
	besides := nonHeap()
	limit := p.limitFor(now.live, besides)
	if p.offAtGOGCPace {
		debug.SetGCPercent(-1) // first: a reader that sees the new limit sees it too
		limit = min(limit, gogcPace(now.live, besides))
	}
	debug.SetMemoryLimit(limit)
	return now, loading(before, now)
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

// limitFor is the limit for a live heap of live bytes beside nonHeap bytes of the runtime's own.
func (p Policy) limitFor(live, nonHeap uint64) int64 {
	l := max(p.factor*float64(live), float64(live)+float64(p.headroom))
	if p.besides {
		l += float64(nonHeap)
	}
	if l >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(p.floor, int64(l))
}

// rearm runs follow once after the next collection and arms itself again: a cleanup on an object nothing
// keeps runs after the collection that found it unreachable. An idle process allocates little and, with
// GOGC off, is never collected on a timer, so this wakes nobody.
func rearm(p Policy, st *following, last collection) {
	// 32 bytes without pointers: not the tiny allocator's (under 16 bytes), whose blocks are shared with
	// other objects and may never be freed.
	sentinel := new([32]byte)
	runtime.AddCleanup(sentinel, func(st *following) {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.stopped {
			return
		}
		now, load := p.follow(last)
		// A load's collection whose cleanup ran late, beside the settling collection, is not a new load.
		if p.settleAfter > 0 && load && now.allocs-st.handedBack > quiet(now.live) {
			st.settleLater(p.settleAfter, now.live)
		}
		rearm(p, st, now)
	}, st)
}

// settleLater hands back, once allocation has been quiet for d, the memory a load left free. With GOGC off
// the next collection waits until the heap reaches the soft limit, and the runtime returns free memory to
// the system only down to 95% of that limit: after a load (a first read, a fleet's first snapshots) the
// garbage of its last stretch stayed in RSS until the idle dashboard had allocated as much again, which at
// 10,000 runs took hours, and which of two RSS figures a load ended at was luck (docs/BENCHMARKS.md,
// "Dashboard memory at 10,000 runs"). The timer runs only after a load's collection (loading), so an idle
// dashboard has none. st.mu is held.
func (st *following) settleLater(d time.Duration, live uint64) {
	mark := readUint64("/gc/heap/allocs:bytes")
	var check func()
	check = func() {
		st.mu.Lock()
		if st.stopped {
			st.mu.Unlock()
			return
		}
		now := readUint64("/gc/heap/allocs:bytes")
		if now-mark > quiet(live) {
			mark = now
			st.settling = time.AfterFunc(d, check)
			st.mu.Unlock()
			return
		}
		st.settling, st.handedBack = nil, now
		st.mu.Unlock()
		// A collection, then every free page back: once, costing what one collection costs.
		debug.FreeOSMemory()
	}
	if st.settling != nil {
		st.settling.Stop()
	}
	st.settling = time.AfterFunc(d, check)
}

// readUint64 is the runtime metric name's value, 0 where the runtime has none.
func readUint64(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// following is an applied policy's state: once stopped (undone), no follow is under way or to come, so
// what the undo restores stays.
type following struct {
	mu      sync.Mutex
	stopped bool
	// settling is the pending check for a quiet heap after a load (settleLater), nil when none is;
	// handedBack is what the heap had allocated when memory was last handed back.
	settling   *time.Timer
	handedBack uint64
}

// liveHeap is the heap the last collection found live (runtime/metrics: what GOGC's goal is computed from).
func liveHeap() uint64 { return readUint64("/gc/heap/live:bytes") }
