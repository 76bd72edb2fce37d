package watch

import (
	"path/filepath"
	"reflect"
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

// TestJudgedAlikeKnowsEveryTimingField: rejudge keeps a run's old copy when judgedAlike says the new
// judgement is the same, so a timing field it does not compare would hide a change from the screen. Each field
// of RunTiming and StageTiming is set in turn on one side; every one must tell the runs apart.
func TestJudgedAlikeKnowsEveryTimingField(t *testing.T) {
	at := time.Unix(1700000000, 0)
	differ := func(f reflect.Value) {
		t.Helper()
		switch p := f.Addr().Interface().(type) {
		case *string:
			*p = "x"
		case *int:
			*p = 1
		case **time.Time:
			*p = &at
		case **int64:
			one := int64(1)
			*p = &one
		default:
			t.Fatalf("judgedAlike does not know how to compare a %s: teach it and this test", f.Type())
		}
	}
	for i := range reflect.TypeFor[model.RunTiming]().NumField() {
		a, b := model.Run{Timing: &model.RunTiming{}}, model.Run{Timing: &model.RunTiming{}}
		differ(reflect.ValueOf(b.Timing).Elem().Field(i))
		if judgedAlike(&a, &b) {
			t.Errorf("RunTiming.%s differs, yet the runs judged alike", reflect.TypeFor[model.RunTiming]().Field(i).Name)
		}
	}
	for i := range reflect.TypeFor[model.StageTiming]().NumField() {
		a := model.Run{Stages: []model.Stage{{Key: "s", Timing: &model.StageTiming{}}}}
		b := model.Run{Stages: []model.Stage{{Key: "s", Timing: &model.StageTiming{}}}}
		differ(reflect.ValueOf(b.Stages[0].Timing).Elem().Field(i))
		if judgedAlike(&a, &b) {
			t.Errorf("StageTiming.%s differs, yet the runs judged alike", reflect.TypeFor[model.StageTiming]().Field(i).Name)
		}
	}
	// Equal values behind different pointers, as a judgement made again gives them, are alike.
	t1, t2 := at, at
	a := model.Run{Timing: &model.RunTiming{Started: &t1}, Stages: []model.Stage{{Timing: &model.StageTiming{Started: &t1}}}}
	b := model.Run{Timing: &model.RunTiming{Started: &t2}, Stages: []model.Stage{{Timing: &model.StageTiming{Started: &t2}}}}
	if !judgedAlike(&a, &b) {
		t.Error("the same timings behind other pointers judged apart")
	}
	if b.Status = model.StatusStalled; judgedAlike(&a, &b) {
		t.Error("another status judged alike")
	}
}
