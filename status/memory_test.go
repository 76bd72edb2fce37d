package status

import (
	"runtime"
	"testing"

	"runwatch/heaptest"
	"runwatch/model"
	"runwatch/sim"
	"runwatch/state"
)

// status holds a few hundred bytes a run once it has read them, until it writes them (statusRec, its key
// and id, the history's samples), none of them pointers: not the runs' locations, keys and maps, which made it
// grow by more than a KiB a run (docs/BENCHMARKS.md, "status at 10,000 and 100,000 runs"). The live heap is measured after a collection once the runs of one tree are read, and once four
// times as many are; what the readers' caches hold (at most 4,096 logs and manifests) is the same in both, as
// every run was read once before. (What discovery holds while it walks: state's
// TestDiscoverEachHoldsFewBytesPerRun.)
func TestStatusHoldsFewBytesPerRun(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 2,000 generated runs three times")
	}
	heaptest.SkipUnderRace(t)
	const n = 500
	one, more := t.TempDir(), t.TempDir()
	if _, err := sim.GenerateRuns(one, n); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.GenerateRuns(more, 3*n); err != nil {
		t.Fatal(err)
	}
	env := state.NewEnv(0)
	// Every run read once, so the caches of the readers are as full for one tree as for both.
	if err := state.LoadEachFound([]string{one, more}, 0, env, func(model.Run) {}); err != nil {
		t.Fatal(err)
	}
	small, smallRuns := statusLiveAfterReading(t, env, one)
	big, bigRuns := statusLiveAfterReading(t, env, one, more)
	if smallRuns != n || bigRuns != 4*n {
		t.Fatalf("read %d and %d runs, want %d and %d", smallRuns, bigRuns, n, 4*n)
	}
	live := (int64(big.Live) - int64(small.Live)) / int64(bigRuns-smallRuns)
	scan := (int64(big.Scan) - int64(small.Scan)) / int64(bigRuns-smallRuns)
	t.Logf("live heap: %d KiB over %d runs (%d KiB scannable), %d KiB over %d (%d KiB): %d bytes a run, %d scannable",
		small.Live>>10, smallRuns, small.Scan>>10, big.Live>>10, bigRuns, big.Scan>>10, live, scan)
	if live > 700 || scan > 100 {
		t.Errorf("status holds %d bytes a run, %d of them scannable; at most 700 and 100", live, scan)
	}
}

// statusLiveAfterReading reads the runs under paths into an Out as status does and returns the live
// heap once they are all read, after a collection, with the Out still held, and the runs read.
func statusLiveAfterReading(t *testing.T, env model.Env, paths ...string) (heaptest.Bytes, int) {
	t.Helper()
	out := NewOut("json", env.Now, env.Liveness)
	defer out.Close()
	if err := state.LoadEachFound(paths, 0, env, out.Add); err != nil {
		t.Fatal(err)
	}
	if out.err != nil {
		t.Fatal(out.err)
	}
	h := heaptest.Now()
	runtime.KeepAlive(out)
	return h, len(out.recs)
}
