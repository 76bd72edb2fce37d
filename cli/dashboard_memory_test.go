package cli

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/heaptest"
	"runwatch/sim"
	"runwatch/ui"
	"runwatch/ui/app"
	"runwatch/watch"
)

// The dashboard's bytes a run: what the watcher (its tree of watched folders and their entries, its run
// trackers) and the screen (every run, its cached row) hold once every run is shown: the live heap after a
// collection with one tree of runs and with four times as many, the difference a run, as status's
// (TestStatusHoldsFewBytesPerRun); what it measures is in docs/BENCHMARKS.md, "Dashboard memory". Where it
// goes (a heap profile taken inside dashboardLive, issue 35): the runs as read and judged (their stages
// most), held once by the watcher and the screen together, the watcher's tree of folders, the rows' cells,
// the stage scan's cache of each run.log's evidence and the history.
// The bound is a little above what it holds now, so what a change adds a run is seen: a 1 KiB field in a
// run's cells fails it.
func TestDashboardHoldsFewBytesPerRun(t *testing.T) {
	if testing.Short() {
		t.Skip("watches 2,000 generated runs")
	}
	heaptest.SkipUnderRace(t)
	const n = 400
	one, more := t.TempDir(), t.TempDir()
	if _, err := sim.GenerateRuns(one, n); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.GenerateRuns(more, 4*n); err != nil {
		t.Fatal(err)
	}
	small, _ := dashboardLive(t, n, one)
	big, _ := dashboardLive(t, 4*n, more)
	live := (int64(big.Live) - int64(small.Live)) / (3 * n)
	scan := (int64(big.Scan) - int64(small.Scan)) / (3 * n)
	t.Logf("the dashboard holds %d bytes a run, %d of them scannable (%d KiB over %d runs, %d KiB over %d)",
		live, scan, small.Live>>10, n, big.Live>>10, 4*n)
	if live > dashboardBytesPerRun || scan > dashboardScanPerRun {
		t.Errorf("the dashboard holds %d bytes a run, %d of them scannable; at most %d and %d",
			live, scan, dashboardBytesPerRun, dashboardScanPerRun)
	}
}

// What the dashboard may hold a run (see TestDashboardHoldsFewBytesPerRun).
const (
	dashboardBytesPerRun = 10 << 10 // docs/BENCHMARKS.md, "Session 12: the dashboard's bytes a run"
	dashboardScanPerRun  = 7<<10 + 256
)

// TestDashboardLoadMakesLittleGarbage: the bytes a first load allocates a run, watcher and screen, kept or
// not. What stays live after a load is scattered among the load's garbage, in spans the runtime never
// compacts, and the room left inside them is RSS for as long as the runs are shown (issue 35; at 10,000
// runs 30 MiB beside 107 live). Three quarters of it is reading the runs (state.Load). What a load makes
// grows with the processors that read it (135.2 KiB a run at GOMAXPROCS 1 and 2, 136.6 at 4, 137.0 at 8,
// 141.2 at 16), so it is measured at 2, whatever the machine, and bounded 5% above: a change that adds a
// few KiB a run to every load fails it (docs/BENCHMARKS.md, "Session 11: the dashboard's first load's
// garbage").
func TestDashboardLoadMakesLittleGarbage(t *testing.T) {
	if testing.Short() {
		t.Skip("watches 1,600 generated runs")
	}
	heaptest.SkipUnderRace(t)
	const n = 1600
	dir := t.TempDir()
	if _, err := sim.GenerateRuns(dir, n); err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // not parallel: no other test runs meanwhile
	_, allocated := dashboardLive(t, n, dir)
	per := int64(allocated) / n
	t.Logf("a first load allocates %d bytes a run (%d MiB over %d runs)", per, allocated>>20, n)
	if per > dashboardLoadBytesPerRun {
		t.Errorf("a first load allocates %d bytes a run; at most %d", per, dashboardLoadBytesPerRun)
	}
}

// What a first load may allocate a run (see TestDashboardLoadMakesLittleGarbage).
const dashboardLoadBytesPerRun = 132 << 10 // docs/BENCHMARKS.md, "Session 12: the dashboard's bytes a run"

// dashboardLive watches dir as the dashboard does and feeds its batches to the screen until it shows want
// runs; it returns the live heap then, watcher and screen still held, and the bytes allocated from the
// watcher's start until then.
func dashboardLive(t *testing.T, want int, dir string) (heaptest.Bytes, uint64) {
	t.Helper()
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(allocs)
	start := allocs[0].Value.Uint64()
	w, err := watch.New(watch.Options{Paths: []string{dir}, Progressive: true, NoArtifactListing: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var m tea.Model = ui.New(app.Options{Theme: "mono", Now: time.Now})
	m, _ = m.Update(tea.WindowSizeMsg{Width: 160, Height: 45})
	shown := map[string]bool{}
	loading := true
	deadline := time.After(5 * time.Minute)
	// Every run shown and the load over, then the batches that follow it (re-reads, judgements) until two
	// seconds pass without one: what is held then is what an idle dashboard holds.
	for len(shown) < want || loading {
		select {
		case u := <-w.Updates():
			for _, r := range u.Changed {
				shown[r.Key()] = true
			}
			for _, k := range u.Removed {
				delete(shown, k)
			}
			loading = u.Health.Loading > 0
			m, _ = m.Update(ui.FromWatch(u))
			_ = m.View()
		case <-deadline:
			t.Fatalf("the dashboard showed %d of %d runs after 5 minutes (loading: %v)", len(shown), want, loading)
		}
	}
	for settled := false; !settled; {
		select {
		case u := <-w.Updates():
			m, _ = m.Update(ui.FromWatch(u))
			_ = m.View()
		case <-time.After(2 * time.Second):
			settled = true
		}
	}
	metrics.Read(allocs)
	allocated := allocs[0].Value.Uint64() - start
	h := heaptest.Now()
	runtime.KeepAlive(m)
	runtime.KeepAlive(w)
	return h, allocated
}
