package cli

import (
	"bytes"
	"io"
	"regexp"
	"runtime"
	"testing"

	"runwatch/heaptest"
	"runwatch/model"
	"runwatch/sim"
	"runwatch/state"
)

// status holds a few hundred bytes a run once it has read them, until it writes them (statusRec, its key
// and id, the history's samples), none of them pointers: not the runs' locations, keys and maps. Over
// 100,000 runs what it held grew to 142 MB live (358 MiB of RSS), about 1,400 bytes a run; the bound here is
// 700. The live heap is measured after a collection once the runs of one tree are read, and once four
// times as many are; what the readers' caches hold (at most 4,096 logs and manifests) is the same in both, as
// every run was read once before. (What discovery holds while it walks: state's
// TestDiscoverEachHoldsFewBytesPerRun.)
func TestStatusHoldsFewBytesPerRun(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 2,000 generated runs three times")
	}
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

// statusLiveAfterReading reads the runs under paths into a statusOut as status does and returns the live
// heap once they are all read, after a collection, with the statusOut still held, and the runs read.
func statusLiveAfterReading(t *testing.T, env model.Env, paths ...string) (heaptest.Bytes, int) {
	t.Helper()
	out := newStatusOut("json", env.Now, env.Liveness)
	defer out.close()
	if err := state.LoadEachFound(paths, 0, env, out.add); err != nil {
		t.Fatal(err)
	}
	if out.err != nil {
		t.Fatal(out.err)
	}
	h := heaptest.Now()
	runtime.KeepAlive(out)
	return h, len(out.recs)
}

// status lets the heap grow by what its workload needs between collections, not by what little is live: on
// issue 35's workload (1,000 resumable runs with 400-line logs and 200 jonggrang features) GOGC 100 beside a
// live heap of a few MiB collected 36 to 215 times, a fifth of status's time. Counted, not timed: at most a
// few dozen (7 or 8 seen). The bytes this lets the heap hold are bounded by TestStatusHoldsFewBytesPerRun and
// bench/scale's RSS.
func TestStatusCollectsAHandfulOfTimes(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and reads 1,200 runs")
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ws := t.TempDir()
	if _, err := sim.GenerateShaped(ws, 200, 1000, sim.Shape{LogLines: 400}); err != nil {
		t.Fatal(err)
	}
	// In a process of its own, counted by the runtime's own trace: in this one, whatever else the test
	// binary still runs (a leftover goroutine of an earlier test) collected too, and was counted as status's
	// (41 once in a full run of the package).
	var stderr bytes.Buffer
	cmd := helperProcess(t, "status", "--json", ws)
	cmd.Env = append(cmd.Env, "GODEBUG=gctrace=1", "GOGC=", "GOMEMLIMIT=")
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if code := exitCodeOf(t, cmd.Run()); code > 1 {
		t.Fatalf("status exited %d:\n%s", code, stderr.String())
	}
	n := len(regexp.MustCompile(`(?m)^gc \d+ @`).FindAllIndex(stderr.Bytes(), -1))
	if n > 30 {
		t.Errorf("status over 1,200 runs collected %d times; a handful is enough (at most 30)", n)
	} else {
		t.Logf("status over 1,200 runs: %d collections", n)
	}
}
