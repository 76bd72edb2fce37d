package gcpolicy

import (
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
		runtime.GC()
		live, limit := afterCleanups(t)
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

// afterCleanups waits until the limit has been set again after the last collection (cleanups run on their
// own goroutine, after the collection returns) and returns the live heap and the limit then.
func afterCleanups(t *testing.T) (uint64, int64) {
	t.Helper()
	live := liveHeap()
	for range 2000 {
		limit := debug.SetMemoryLimit(-1)
		if limit >= Dashboard.limitFor(live) {
			return live, limit
		}
		time.Sleep(time.Millisecond)
	}
	return live, debug.SetMemoryLimit(-1)
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

// Once the dashboard's limit paces the collector (a live heap over 28 MiB, where 1.5 times it or the 56 MiB
// floor is below twice it), GOGC is off: the runtime's collection every two minutes would mark the whole
// heap for nothing. A small heap keeps GOGC 100 under the floor.
func TestDashboardTurnsGOGCOffOnlyWhereItsLimitPaces(t *testing.T) {
	for _, c := range []struct {
		live    uint64
		percent int
	}{{0, 100}, {8 << 20, 100}, {28 << 20, 100}, {29 << 20, -1}, {165 << 20, -1}} {
		if got := gcPercentFor(c.live, Dashboard.limitFor(c.live)); got != c.percent {
			t.Errorf("%d MiB live: GOGC %d, want %d", c.live>>20, got, c.percent)
		}
	}
	// Applied: with 64 MiB held, GOGC is off after a collection that found the heap as it was (the one that
	// found it grown sets twice it, GOGC 100's own pace); undone, it is what it was.
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	undo := Dashboard.Apply(noEnv)
	held := make([][]byte, 64)
	for i := range held {
		held[i] = make([]byte, 1<<20)
	}
	// A few collections: under -race, or a loaded machine, one may still find the heap grown.
	got := 0
	for range 10 {
		runtime.GC()
		afterCleanups(t)
		time.Sleep(20 * time.Millisecond)
		if got = debug.SetGCPercent(-1); got == -1 {
			break
		}
		debug.SetGCPercent(got)
	}
	runtime.KeepAlive(held)
	undo()
	if got != -1 {
		t.Errorf("the dashboard with 64 MiB live: GOGC %d, want off", got)
	}
	if now := debug.SetGCPercent(100); now != 100 {
		t.Errorf("GOGC after the policy is undone: %d, want 100", now)
	}
	// The user's GOGC stays theirs.
	undo = Dashboard.Apply(func(k string) string { return map[string]string{"GOGC": "200"}[k] })
	runtime.GC()
	afterCleanups(t)
	got = debug.SetGCPercent(100)
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
