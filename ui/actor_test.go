// Tests of actions through the dashboard's keys with the real Actor: unlock and undo, refused steps.

package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/state/atomicfile"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/app"
	"runwatch/ui/keys"
)

// TestUnlockAndUndoThroughKeys drives the real planner from the dashboard keys on a private copy of the
// fixtures: U shows the exact change, y applies it, Z undoes it.
func TestUnlockAndUndoThroughKeys(t *testing.T) {
	t.Parallel()
	root := resumabletest.Copy(t)
	runDir := resumabletest.Run(root, resumabletest.Mining)
	lock := filepath.Join(runDir, "lock", "active.lock")
	load := func() model.Run {
		locs, err := state.Discover([]string{runDir}, 1)
		if err != nil || len(locs) != 1 {
			t.Fatalf("discover %s: %v %v", runDir, locs, err)
		}
		return state.Load(locs[0], state.NewEnv(0))
	}
	actor := NewActor(action.Options{User: "tester", JournalPath: filepath.Join(t.TempDir(), "journal.jsonl")},
		func() model.Env { return state.NewEnv(0) })
	m := newTestModel(t, 140, 40, []model.Run{load()}, app.Options{Actor: actor})

	m = send(t, m, press("U"))
	if m.confirmDialog() == nil {
		t.Fatalf("U did not ask; footer %q", m.app.Msgs.ErrText())
	}
	view := plain(m)
	// Paths are drawn relative to the run's folder, which the title names (issue 36 point 7); the question
	// says what is written.
	for _, want := range []string{"in " + runDir, "remove lock/active.lock", "stale_lock_cleared", "Remove lock/active.lock and append to run.log? [y/N]"} {
		if !strings.Contains(strings.ReplaceAll(view, "\n", ""), want) && !strings.Contains(view, want) {
			t.Errorf("confirmation lacks %q:\n%s", want, view)
		}
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatal("the lock went away before the confirmation")
	}
	m = send(t, m, press("y"))
	if m.app.Msgs.ErrText() != "" {
		t.Fatalf("apply failed: %s", m.app.Msgs.ErrText())
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("lock still there after y: %v", err)
	}
	logData, _ := os.ReadFile(filepath.Join(runDir, "run.log"))
	if !strings.Contains(string(logData), "stale_lock_cleared") || !strings.Contains(string(logData), "user=tester") {
		t.Fatal("no audit line in run.log")
	}

	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{load()})})
	m = send(t, m, press("Z"))
	if m.confirmDialog() == nil {
		t.Fatalf("Z did not ask; footer %q", m.app.Msgs.ErrText())
	}
	m = send(t, m, press("y"))
	if m.app.Msgs.ErrText() != "" {
		t.Fatalf("undo failed: %s", m.app.Msgs.ErrText())
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("undo did not restore the lock: %v", err)
	}
}

// TestStepRefusalShowsBlockers: stepping a stage with unchecked items is refused with the blockers named in
// the footer, and nothing is written.
func TestStepRefusalShowsBlockers(t *testing.T) {
	t.Parallel()
	root := resumabletest.Copy(t)
	runDir := resumabletest.Run(root, resumabletest.Mining)
	if err := os.Remove(filepath.Join(runDir, "lock", "active.lock")); err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover([]string{runDir}, 1)
	if err != nil || len(locs) != 1 {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(runDir, "state.env"))
	run := state.Load(locs[0], state.NewEnv(0))
	actor := NewActor(action.Options{JournalPath: filepath.Join(t.TempDir(), "j.jsonl")}, func() model.Env { return state.NewEnv(0) })
	m := newTestModel(t, 140, 40, []model.Run{run}, app.Options{Actor: actor})
	m = send(t, m, press("S"))
	if m.confirmDialog() != nil || !strings.Contains(m.app.Msgs.ErrText(), "CB_VERIFY_COVERAGE_REPORT") {
		t.Fatalf("step should be refused naming the blocker; confirm %v footer %q", m.confirmDialog() != nil, m.app.Msgs.ErrText())
	}
	after, _ := os.ReadFile(filepath.Join(runDir, "state.env"))
	if string(before) != string(after) {
		t.Fatal("a refused step changed state.env")
	}
}

// TestRecoveryOfATornJournalIsSaid: an action applied from the dashboard over a journal whose last line a
// crash cut short says so with its outcome, as the subcommands do on stderr (it was said nowhere).
func TestRecoveryOfATornJournalIsSaid(t *testing.T) {
	t.Parallel()
	root := resumabletest.Copy(t)
	runDir := resumabletest.Run(root, resumabletest.Mining)
	locs, err := state.Discover([]string{runDir}, 1)
	if err != nil || len(locs) != 1 {
		t.Fatalf("discover %s: %v %v", runDir, locs, err)
	}
	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	if err := os.WriteFile(journal, []byte(`{"id":"x","when":"2026-11-30T01:00:00Z","action":"st`), 0o600); err != nil {
		t.Fatal(err)
	}
	actor := NewActor(action.Options{User: "tester", JournalPath: journal}, func() model.Env { return state.NewEnv(0) })
	m := newTestModel(t, 140, 40, []model.Run{state.Load(locs[0], state.NewEnv(0))}, app.Options{Actor: actor})
	m = send(t, m, press("U"))
	if m.confirmDialog() == nil {
		t.Fatalf("U did not ask; footer %q", m.app.Msgs.ErrText())
	}
	m = send(t, m, press("y"))
	if m.app.Msgs.ErrText() != "" {
		t.Fatalf("apply failed: %s", m.app.Msgs.ErrText())
	}
	if got := m.app.Msgs.Last.Text; !strings.HasPrefix(got, "done: ") || !strings.Contains(got, "recovered: ") ||
		!strings.Contains(got, "cut short by a crash") || !strings.Contains(got, journal) {
		t.Errorf("the outcome %q does not say the torn journal line was found", got)
	}
}

// Issue 37 row 14 in the dashboard: a writer that takes no lock renames its checklist between the last check
// and the rename of a tick confirmed in the dialog; the outcome says that it raced and that the tick was
// made on the writer's version, whose update stays.
func TestTickRacingAWriterSaysSo(t *testing.T) {
	t.Parallel()
	if !atomicfile.CanReportDisplaced {
		t.Skip("this build renames plainly: a write landing in between is overwritten unseen")
	}
	dir := resumabletest.MinimalRun(t, t.TempDir(), "race-20261201T080000Z")
	checklist := filepath.Join(dir, "checklist.state.env")
	locs, err := state.Discover([]string{dir}, 1)
	if err != nil || len(locs) != 1 {
		t.Fatalf("discover %s: %v %v", dir, locs, err)
	}
	landed := false
	writer := func() {
		if !landed {
			landed = true
			os.WriteFile(checklist+".tmp", []byte("CB_S1_A=\"1\"\nCB_S2_B=\"0\"\nCHECKLIST_SCHEMA_VERSION=\"1\"\nW_1=\"1\"\n"), 0o644)
			os.Rename(checklist+".tmp", checklist)
		}
	}
	actor := NewActor(action.Options{User: "tester", JournalPath: filepath.Join(t.TempDir(), "journal.jsonl"), Seams: action.Seams{BeforeRename: writer}},
		func() model.Env { return state.NewEnv(0) })
	plan, err := actor.Plan(app.ActionRequest{Act: keys.ActTick, Request: action.Request{Verb: action.ActCheck, Run: state.Load(locs[0], state.NewEnv(0)), Word: "CB_S2_B"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := plan.Apply("")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "done: ") || !strings.Contains(got, "raced: another writer replaced") || !strings.Contains(got, "the same edit was made on it") {
		t.Errorf("the outcome %q does not say the tick raced a writer", got)
	}
	if data, _ := os.ReadFile(checklist); string(data) != "CB_S1_A=\"1\"\nCB_S2_B=\"1\"\nCHECKLIST_SCHEMA_VERSION=\"1\"\nW_1=\"1\"\n" {
		t.Errorf("checklist holds %q, want the writer's W_1 and the tick", data)
	}
}
