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
// their own goroutine, after the collection returns), and returns the live heap and the limit then.
func collect(t *testing.T) (uint64, int64) {
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
// is what GOGC 100 allows), and the dashboard's policy is as it was.
func TestStatusSoftLimitIsTheLiveHeapAndAFixedHeadroom(t *testing.T) {
	for _, live := range []uint64{0, 8 << 20, 64 << 20, 1 << 30} {
		if got, want := Status.limitFor(live), int64(live)+26<<20; got != want {
			t.Errorf("status, %d MiB live: limit %d MiB, want %d MiB", live>>20, got>>20, want>>20)
		}
	}
	for live, want := range map[uint64]int64{0: 56 << 20, 32 << 20: 56 << 20, 64 << 20: 96 << 20} {
		if got := Dashboard.limitFor(live); got != want {
			t.Errorf("dashboard, %d MiB live: limit %d MiB, want %d MiB", live>>20, got>>20, want>>20)
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
		if got := Events.limitFor(uint64(c.live)); got != c.want {
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
			if want := Dashboard.limitFor(live); limit >= want || limit < int64(2*live) {
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

// While runs arrive the dashboard's live heap grows from one collection to the next, and its limit is twice
// it, so a load marks the growing heap fewer times (docs/BENCHMARKS.md, "Fleet first frame"); once it holds
// still, the limit is 1.5 times it again.
func TestDashboardLimitDoublesOnlyWhileTheHeapGrows(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		before, live uint64
		want         int64
	}{
		{0, 8 << 20, 56 << 20},           // the floor, however it grew
		{40 << 20, 100 << 20, 200 << 20}, // a load
		{100 << 20, 109 << 20, 163.5 * (1 << 20)},
		{100 << 20, 100 << 20, 150 << 20}, // loaded: as before
		{120 << 20, 100 << 20, 150 << 20},
	} {
		if got := Dashboard.limitAfter(c.before, c.live); got != c.want {
			t.Errorf("live %d MiB after %d MiB: limit %.1f MiB, want %.1f MiB", c.live>>20, c.before>>20,
				float64(got)/(1<<20), float64(c.want)/(1<<20))
		}
	}
	if got := Events.limitAfter(10<<20, 100<<20); got != Events.limitFor(100<<20) {
		t.Errorf("events follows its own factor while its heap grows: %d, want %d", got, Events.limitFor(100<<20))
	}
}
