package gcpolicy

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// The dashboard at 10,000 runs holds more than any fixed limit tuned on 1,200: the soft limit must follow
// the live heap up, or the collector runs without pause (docs/BENCHMARKS.md, "The collector's settings").
func TestDashboardSoftLimitIsNeverBelowTheLiveHeap(t *testing.T) {
	defer Dashboard.Apply(noEnv)()

	var held [][]byte
	for step := 0; step < 12; step++ {
		// 12 steps of 10 MiB: from far below the old fixed limit to twice it.
		for range 10 {
			held = append(held, make([]byte, 1<<20))
		}
		live, limit := collect(t)
		if limit < int64(live) {
			t.Fatalf("with %d MiB held: soft limit %d MiB is below the live heap of %d MiB", len(held), limit>>20, live>>20)
		}
	}

	// And the collector does not spin: garbage a third the size of what is live takes a collection or two,
	// not one per allocation.
	before := gcCycles()
	for range 40 << 10 {
		sink = make([]byte, 1<<10)
	}
	if n := gcCycles() - before; n > 8 {
		t.Errorf("40 MiB of garbage beside %d MiB live took %d collections", len(held), n)
	}
	runtime.KeepAlive(held)
}

// A policy undone stops following: the next command's setting is not overwritten by the last one's.
func TestGCPolicyRestores(t *testing.T) {
	oldLimit := debug.SetMemoryLimit(-1)
	oldPercent := debug.SetGCPercent(100)
	debug.SetGCPercent(oldPercent)
	Policy{percent: 400, floor: 256 << 20, factor: 2}.Apply(noEnv)()
	for range 3 {
		runtime.GC()
	}
	if got := debug.SetMemoryLimit(-1); got != oldLimit {
		t.Errorf("memory limit after restore: %d, want %d", got, oldLimit)
	}
	if got := debug.SetGCPercent(oldPercent); got != oldPercent {
		t.Errorf("GOGC after restore: %d, want %d", got, oldPercent)
	}
}

// status turns GOGC off only while its soft limit paces the collector: with GOMEMLIMIT set by the user the
// limit is theirs, and GOGC off beside it would let the heap grow up to it.
func TestStatusKeepsGOGCUnderTheUsersMemoryLimit(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	undo := Status.Apply(func(k string) string { return map[string]string{"GOMEMLIMIT": "1GiB"}[k] })
	got := debug.SetGCPercent(100)
	undo()
	if got != 100 {
		t.Errorf("GOGC under the user's GOMEMLIMIT: %d, want 100", got)
	}
	undo = Status.Apply(noEnv)
	got = debug.SetGCPercent(-1)
	undo()
	if got != -1 {
		t.Errorf("GOGC under status's own limit: %d, want off (-1)", got)
	}
}

var sink []byte

// noEnv is an environment that sets neither GOGC nor GOMEMLIMIT. The tests are not parallel all the same:
// the collector's settings they apply are the process's.
func noEnv(string) string { return "" }

// collect runs a collection and waits until the policy has set the limit again after it (cleanups run on
// their own goroutine, after the collection returns), and returns the live heap and the limit then. Twice:
// the cleanup of a collection before the first may still be pending, and set a limit from what was live
// then once the first has begun.
func collect(t *testing.T) (uint64, int64) {
	t.Helper()
	collectOnce(t)
	return collectOnce(t)
}

func collectOnce(t *testing.T) (uint64, int64) {
	t.Helper()
	const unset = math.MaxInt64 - 1 // no limit the policy sets
	debug.SetMemoryLimit(unset)
	// A policy's sentinel made while a collection was under way outlives it: then the next one frees it.
	for range 10 {
		runtime.GC()
		live := liveHeap()
		for range 200 {
			if limit := debug.SetMemoryLimit(-1); limit != unset {
				return live, limit
			}
			time.Sleep(time.Millisecond)
		}
	}
	t.Fatal("the policy did not set the limit again after a collection")
	return 0, 0
}

func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// status's limit follows the live heap by a fixed headroom: never below what is live, never twice it (which
// is what GOGC 100 allows).
func TestStatusSoftLimitIsTheLiveHeapAndAFixedHeadroom(t *testing.T) {
	for _, live := range []uint64{0, 8 << 20, 64 << 20, 1 << 30} {
		if got, want := Status.limitFor(live, 10<<20), int64(live)+26<<20; got != want {
			t.Errorf("status, %d MiB live: limit %d MiB, want %d MiB", live>>20, got>>20, want>>20)
		}
	}
}

// events' limit is never below what is live, lets a small heap grow a fixed 48 MiB, and a large one by as
// much as is live (GOGC 100's pace: a fixed headroom beside 200 MiB live would collect every few runs).
func TestEventsLimitFollowsTheLiveHeap(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ live, want int64 }{
		{0, 48 << 20},
		{20 << 20, 68 << 20},
		{48 << 20, 96 << 20},
		{200 << 20, 400 << 20},
	} {
		if got := Events.limitFor(uint64(c.live), 10<<20); got != c.want {
			t.Errorf("live %d MiB: limit %d MiB, want %d MiB", c.live>>20, got>>20, c.want>>20)
		}
	}
}

// The dashboard turns GOGC off at every heap size: under GOGC the runtime collects every two minutes,
// which marked 165 MB at 10,000 runs for nothing, and at 6 runs was a sixth of an idle dashboard's CPU. A
// small heap's limit is GOGC 100's pace (twice what is live, beside what the runtime holds besides), not
// the 56 MiB floor, so it collects and holds as it did under GOGC 100.
func TestDashboardTurnsGOGCOffAtGOGCsPace(t *testing.T) {
	for _, c := range []struct{ live, nonHeap, want uint64 }{
		{0, 0, 4<<20 + 1<<20},                      // GOGC 100's least goal, and the runtime's 1 MiB of headroom
		{8 << 20, 3 << 20, 3<<20 + 16<<20 + 1<<20}, // twice what is live
		{100 << 20, 10 << 20, 10<<20 + 200<<20 + 6<<20},
	} {
		if got := gogcPace(c.live, c.nonHeap); got != int64(c.want) {
			t.Errorf("%d MiB live, %d MiB besides: limit %d, want %d", c.live>>20, c.nonHeap>>20, got, c.want)
		}
	}
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	for _, mib := range []int{8, 64} {
		undo := Dashboard.Apply(noEnv)
		held := make([][]byte, mib)
		for i := range held {
			held[i] = make([]byte, 1<<20)
		}
		live, limit := collect(t)
		got := debug.SetGCPercent(-1)
		debug.SetGCPercent(got)
		if got != -1 {
			t.Errorf("the dashboard with %d MiB live: GOGC %d, want off", mib, got)
		}
		if mib == 8 {
			if want := Dashboard.limitFor(live, 0); limit >= want || limit < int64(2*live) {
				t.Errorf("8 MiB held, %d MiB live: limit %d MiB, want twice the live heap and more, below the floor's %d MiB",
					live>>20, limit>>20, want>>20)
			}
			// Garbage four times what is live takes about the collections GOGC 100 would (four), not one
			// per allocation: a limit too tight for the runtime's own memory would spin the collector.
			before := gcCycles()
			for range 4 * mib << 10 {
				sink = make([]byte, 1<<10)
			}
			if n := gcCycles() - before; n > 8 {
				t.Errorf("%d MiB of garbage beside %d MiB live took %d collections, want at most 8", 4*mib, mib, n)
			}
		}
		runtime.KeepAlive(held)
		undo()
	}
	if now := debug.SetGCPercent(100); now != 100 {
		t.Errorf("GOGC after the policy is undone: %d, want 100", now)
	}
	// The user's GOGC stays theirs.
	undo := Dashboard.Apply(func(k string) string { return map[string]string{"GOGC": "200"}[k] })
	collect(t)
	got := debug.SetGCPercent(100)
	undo()
	if got != 100 {
		t.Errorf("with GOGC=200 in the environment the policy set GOGC %d; it must leave it alone", got)
	}
}

// A load is told by the live heap growing by more than a tenth, or by collections less than a second apart
// with the heap allocating between them: the collection the runtime adds right after settleLater's, with
// nothing allocated, is not one, or settling would start again after every settle.
func TestLoadingIsGrowthOrAllocationBetweenCloseCollections(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 7, 22, 0, 0, 0, time.UTC)
	const live = 100 << 20
	for _, c := range []struct {
		name         string
		before, now  collection
		wantsLoading bool
	}{
		{"grown by a fifth, minutes apart", collection{live: live, at: at}, collection{live: live * 6 / 5, allocs: 1 << 30, at: at.Add(5 * time.Minute)}, true},
		{"the first collection", collection{}, collection{live: live, allocs: 1 << 30, at: at}, true},
		{"held still, 100 MiB allocated in 200 ms", collection{live: live, allocs: 1 << 30, at: at}, collection{live: live + 1<<20, allocs: 1<<30 + 100<<20, at: at.Add(200 * time.Millisecond)}, true},
		{"held still, nothing allocated in 80 ms", collection{live: live, allocs: 1 << 30, at: at}, collection{live: live, allocs: 1<<30 + 4096, at: at.Add(80 * time.Millisecond)}, false},
		{"forced, after a load's", collection{live: live, allocs: 1 << 30, at: at}, collection{live: live + 1<<20, allocs: 1<<30 + 100<<20, forced: 1, at: at.Add(200 * time.Millisecond)}, false},
		{"held still, an idle hour's allocation", collection{live: live, allocs: 1 << 30, at: at}, collection{live: live, allocs: 1<<30 + 30<<20, at: at.Add(time.Hour)}, false},
	} {
		if got := loading(c.before, c.now); got != c.wantsLoading {
			t.Errorf("%s: loading %v, want %v", c.name, got, c.wantsLoading)
		}
	}
}

// The dashboard's heap may grow by an eighth of what is live, at least 10 MiB, and the runtime's own memory
// (most of it room inside spans) is on top of that, not inside it: counted inside, a load of 10,000 runs
// left the heap a few MiB to grow and collected 114 times.
func TestDashboardHeapGrowsAnEighthOfLiveAtLeast10MiB(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ live, besides, want int64 }{
		{120 << 20, 45 << 20, 45<<20 + 120<<20*9/8},    // an eighth of a big heap
		{60 << 20, 45 << 20, 45<<20 + 60<<20 + 10<<20}, // at least 10 MiB
		{32 << 20, 10 << 20, 56 << 20},                 // the floor
		{0, 10 << 20, 56 << 20},
	} {
		if got := Dashboard.limitFor(uint64(c.live), uint64(c.besides)); got != c.want {
			t.Errorf("limit %d MiB for %d MiB live beside %d MiB, want %d MiB", got>>20, c.live>>20, c.besides>>20, c.want>>20)
		}
	}
}

// After a load, once allocation is quiet, what the load left free goes back to the system: one forced
// collection, and none after it while the process stays idle.
func TestSettleHandsBackWhatALoadLeftFree(t *testing.T) {
	p := Dashboard
	p.settleAfter = 100 * time.Millisecond
	defer p.Apply(noEnv)()

	held := make([][]byte, 0, 32)
	for range 32 {
		held = append(held, make([]byte, 1<<20))
		for range 8 { // a load's garbage beside what it keeps
			sink = make([]byte, 1<<20)
		}
	}
	sink = nil
	forcedBefore := readUint64("/gc/cycles/forced:gc-cycles")
	deadline := time.Now().Add(10 * time.Second)
	for readUint64("/gc/cycles/forced:gc-cycles") == forcedBefore {
		if time.Now().After(deadline) {
			t.Fatalf("no collection handed memory back within 10 s of the load (free %d MiB)",
				readUint64("/memory/classes/heap/free:bytes")>>20)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // FreeOSMemory scavenges after its collection
	if free := readUint64("/memory/classes/heap/free:bytes"); free > 8<<20 {
		t.Errorf("after settling, %d MiB free is still held from the system", free>>20)
	}
	settled := readUint64("/gc/cycles/forced:gc-cycles")
	time.Sleep(10 * p.settleAfter)
	if n := readUint64("/gc/cycles/forced:gc-cycles") - settled; n != 0 {
		t.Errorf("idle after settling, %d more forced collections", n)
	}
	runtime.KeepAlive(held)
}
