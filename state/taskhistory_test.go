package state_test

import (
	"path/filepath"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/fixturetest"
)

// TaskHistory times a run by its task's past runs, as the dashboard would: a resumable run's by TASK_NAME, a
// jonggrang feature's by work type (whatever its case), found under the roots, or in the folder holding the
// run when the roots do not hold it. Another task's runs and another work type's features do not count.
func TestTaskHistoryTimesARunByItsTasksPastRuns(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	for i, s2 := range []time.Duration{4 * time.Minute, 5 * time.Minute, 6 * time.Minute} {
		fixturetest.TaskRun(t, root, "task-"+string(rune('a'+i)), "the-task", now.Add(-time.Duration(10+i)*24*time.Hour),
			2*time.Minute, s2, 4*time.Minute)
	}
	fixturetest.TaskRun(t, root, "other", "other-task", now.Add(-9*24*time.Hour), 2*time.Minute, time.Hour, time.Minute)
	live := fixturetest.TaskRun(t, root, "task-live", "the-task", now.Add(-time.Hour), 5*time.Minute)
	fixturetest.Feature(t, root, "feat-a", "MEDIUM", now.Add(-10*24*time.Hour), 3*time.Minute, 7*time.Minute)
	fixturetest.Feature(t, root, "feat-b", "medium", now.Add(-9*24*time.Hour), 3*time.Minute, 9*time.Minute)
	fixturetest.Feature(t, root, "feat-c", "SMALL", now.Add(-8*24*time.Hour), 3*time.Minute, 20*time.Minute)
	feature := fixturetest.Feature(t, root, "feat-live", "MEDIUM", now.Add(-time.Hour), 3*time.Minute, 0)

	env := state.NewEnv(0)
	pastRuns := func(dir string, roots []string) int {
		t.Helper()
		loc, _, err := state.FindRun(dir, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		run := state.Load(loc, env)
		model.JudgeTime(&run, env.Now, env.Liveness, state.TaskHistory(run, loc, nil, roots, 0, env))
		if run.Timing == nil {
			t.Fatalf("%s: no timing", dir)
		}
		return run.Timing.Runs
	}
	elsewhere := []string{t.TempDir()}
	for _, roots := range [][]string{{root}, elsewhere} {
		if n := pastRuns(live, roots); n != 3 {
			t.Errorf("roots %v: the resumable run is timed by %d past runs, want its task's 3", roots, n)
		}
	}
	if n := pastRuns(feature, []string{root}); n != 2 {
		t.Errorf("the feature is timed by %d past runs, want the 2 MEDIUM ones", n)
	}
	if n := pastRuns(feature, []string{filepath.Join(root, "nothing-here")}); n != 2 {
		t.Errorf("under no root, the feature is timed by %d past runs of its folder, want 2", n)
	}
}
