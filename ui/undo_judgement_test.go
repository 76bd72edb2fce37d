// Tests that a full undo keeps a blocked run counted.

package ui

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/state/procinfo"
	"runwatch/ui/app"
	"runwatch/watch"
)

// TestDashboardFullUndoKeepsBlockedRunCounted: the dashboard, over the real watcher, counts a run blocked at
// its gate as needing you; after tick + step (no longer blocked) and two undos, its re-read from the watcher's
// incremental log read counts it again.
func TestDashboardFullUndoKeepsBlockedRunCounted(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "gate-20260215T014733Z")
	for name, content := range map[string]string{
		"state.env":           "CURRENT_STAGE=\"S2\"\nRUN_ID=\"20260215T014733Z\"\nS1_DONE=\"1\"\nS2_DONE=\"0\"\nS3_DONE=\"0\"\n",
		"checklist.state.env": "CB_S2_A=\"1\"\nCB_S2_B=\"0\"\n",
		"run.log": "[2026-02-15T01:50:43Z] run bootstrapped\n[2026-02-15T01:51:00Z] stage_start stage=S2\n" +
			"[2026-02-15T02:00:00Z] stage_blocked stage=S2 failed_metrics=CB_S2_B\n",
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := watch.New(watch.Options{Paths: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	m := New(app.Options{Theme: "mono", OpenLog: OpenIndexedLog})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(140, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	go Relay(tm.GetProgram(), w)
	waitScreen(t, tm, "runwatch: 1 run, 1 need you")

	env := model.Env{Host: "testhost", StaleAfter: 30 * time.Minute, Proc: procinfo.System{}}
	opts := action.Options{User: "tester", JournalPath: filepath.Join(t.TempDir(), "journal.jsonl")}
	apply := func(plan func(model.Run, action.Options) (*action.Plan, error)) {
		t.Helper()
		env.Now = time.Now()
		opts.Env = env
		locs, err := state.Discover([]string{root}, 2)
		if err != nil || len(locs) != 1 {
			t.Fatalf("discover: %v %v", locs, err)
		}
		p, err := plan(state.Load(locs[0], env), opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := action.Apply(p, action.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	apply(func(r model.Run, o action.Options) (*action.Plan, error) {
		return action.PlanCheck(r, "CB_S2_B", true, o)
	})
	apply(func(r model.Run, o action.Options) (*action.Plan, error) { return action.PlanStep(r, "", o) })
	waitScreen(t, tm, "paused at stage S3") // the step seen (S3 alone is on screen from the start)
	apply(action.PlanUndo)
	apply(action.PlanUndo)
	waitScreen(t, tm, "runwatch: 1 run, 1 need you")
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
