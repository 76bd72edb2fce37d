package watch

import (
	"path/filepath"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/sim"
	"runwatch/state"
)

// TestRunGoesOrphanedWithNoFileChange: a feature whose phase is marked running with nothing alive to run it
// is handed out again, orphaned, when its grace runs out, though no file changes. The safety-net rescan and
// the lock liveness timer are set to an hour here, so only the judge timer can say it.
func TestRunGoesOrphanedWithNoFileChange(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".jonggrang", ".output", "features", "f1")
	writeFile(t, filepath.Join(dir, "MANIFEST.yaml"), manifest("f1", 2))
	sp := filepath.Join(dir, "MANIFEST.yaml")
	v := newView(t, Options{Paths: []string{root}, reconcile: time.Hour, liveness: time.Hour,
		Liveness: model.LivenessRules{OrphanAfter: time.Second}})
	if r, ok := v.run(sp); !ok || r.Attention.Code != model.AttentionRunning {
		t.Fatalf("at start: %+v", r.Attention)
	}
	v.until("the feature to be orphaned", func() bool {
		r, ok := v.run(sp)
		return ok && r.Attention.Code == model.AttentionOrphaned && r.Status == model.StatusStalled
	})
	if v.updates == 0 {
		t.Fatal("no update carried it")
	}
}

// TestHistoryMovesTheUsualOfOtherRuns: a run that finishes a stage teaches the history, and a run of the same
// task that is not re-read is judged again with it (its stage's usual appears).
func TestHistoryMovesTheUsualOfOtherRuns(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "task-a")
	b := filepath.Join(root, "task-b")
	for _, d := range []string{a, b} {
		makeResumableRun(t, d, "S1")
		writeFile(t, filepath.Join(d, "state.env"), resumableState(d, "S1")+"TASK_NAME=\"same-task\"\n")
		writeFile(t, filepath.Join(d, "run.log"), "[2026-02-15T01:00:00Z] stage_start stage=S1\n")
	}
	v := newView(t, Options{Paths: []string{root}, reconcile: time.Hour, liveness: time.Hour})
	bs := filepath.Join(b, "state.env")
	if r, _ := v.run(bs); r.Stage("S1") == nil || r.Stage("S1").Timing.Usual().Known() {
		t.Fatalf("no history yet, but S1 of b has %+v", r.Stage("S1"))
	}
	// a finishes S1 in 4 minutes.
	writeFile(t, filepath.Join(a, "state.env"), resumableState(a, "S2")+"TASK_NAME=\"same-task\"\nS1_DONE=\"1\"\n")
	writeFile(t, filepath.Join(a, "run.log"), "[2026-02-15T01:00:00Z] stage_start stage=S1\n[2026-02-15T01:04:00Z] stage_complete stage=S1 next=S2\n")
	v.until("b's S1 to learn from a", func() bool {
		r, _ := v.run(bs)
		s := r.Stage("S1")
		return s != nil && s.Timing.Usual().Runs == 1 && s.Timing.Usual().Median == 4*time.Minute
	})
}

// TestLoadAllLeavesTheClockToItsCaller: the runs read at start are judged by the clock once all are read,
// by New, not also one by one as read: each run read taught the history, which then worked out its task's
// usual durations again over all its runs for the next (issue 35). Judged once, they have their timing.
func TestLoadAllLeavesTheClockToItsCaller(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := sim.GenerateRuns(dir, 12); err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover([]string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	tk := newTracker([]string{dir}, 0, state.NewEnv(0))
	for _, r := range loadAll(tk, locs) {
		if r.Timing != nil {
			t.Fatalf("%s was judged by the clock as it was read: %+v", r.ID, r.Timing)
		}
	}
	w, err := New(Options{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	timed := 0
	for _, r := range w.Snapshot() {
		if r.Timing != nil {
			timed++
		}
	}
	if timed == 0 {
		t.Fatal("no run New read has its timing")
	}
}
