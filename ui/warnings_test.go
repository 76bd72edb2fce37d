// Tests of the warnings a step or retry gives before it asks.

package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/app"
)

// TestStepWithAStaleLockNamesTheKeyFirst: S on a run whose lock is stale, where the files also leave the next
// stage open, asks no stage question: it says the lock must be cleared first and which key does it.
func TestStepWithAStaleLockNamesTheKeyFirst(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	resumabletest.CopyDir(t, filepath.Join("..", "testdata", "resumable-c1"), root)
	runDir := filepath.Join(root, "reports", "iso26262-mining-20260301T101500Z")
	host, _ := os.Hostname()
	resumabletest.WriteJSONLock(t, filepath.Join(runDir, "lock", "active.lock"), resumabletest.DeadPID(t), host, time.Now().Add(-time.Hour))
	locs, err := state.Discover([]string{runDir}, 1)
	if err != nil || len(locs) != 1 {
		t.Fatalf("discover: %v %v", locs, err)
	}
	run := state.Load(locs[0], state.NewEnv(0))
	if l, ok := firstLockOf(run); !ok || l.Verdict != model.VerdictStale {
		t.Fatalf("the run has no stale lock: %+v", run.Locks)
	}
	actor := NewActor(action.Options{User: "tester", JournalPath: filepath.Join(t.TempDir(), "journal.jsonl")},
		func() model.Env { return state.NewEnv(0) })
	m := newTestModel(t, 160, 50, []model.Run{run}, app.Options{Actor: actor})
	m = send(t, m, press("S"))
	view := plain(m)
	if strings.Contains(view, "Which stage comes after") {
		t.Fatalf("a stage question while the lock must go first:\n%s", view)
	}
	if msg := m.app.Msgs.ErrText(); !strings.Contains(msg, "clear the lock first: press U") {
		t.Fatalf("footer %q does not name the key that comes first", msg)
	}
}

func firstLockOf(r model.Run) (model.Lock, bool) {
	if len(r.Locks) == 0 {
		return model.Lock{}, false
	}
	return r.Locks[0], true
}

// TestRetryOfAnAwaitingPhaseWarnsAsTheBriefDoes: R on a phase that waits for a person's answer opens a
// confirmation that carries the brief's warning.
func TestRetryOfAnAwaitingPhaseWarnsAsTheBriefDoes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "proj", ".jonggrang", ".output", "features", "wait-feat")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `feature_id: wait-feat
description: Waits for an answer
work_type: MEDIUM
pipeline_mode: supervised
created_at: '2026-02-16T04:50:15.123Z'
updated_at: '2026-02-16T05:31:02.417Z'
status: failed
current_phase: 6
phases:
  '5':
    name: complexity
    status: completed
    started_at: '2026-02-16T04:59:00.000Z'
    completed_at: '2026-02-16T05:00:00.000Z'
  '6':
    name: brainstorming
    status: failed
    started_at: '2026-02-16T05:01:00.000Z'
    completed_at: '2026-02-16T05:02:00.000Z'
    output:
      error: Awaiting human input (brainstorming)
  '7':
    name: architecting
    status: pending
    started_at: null
    completed_at: null
agents: {}
validation:
  review_passed: false
  tests_passed: false
  coverage_met: false
locks: []
`
	if err := os.WriteFile(filepath.Join(dir, "MANIFEST.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover([]string{filepath.Join(root, "proj")}, 6)
	if err != nil || len(locs) != 1 {
		t.Fatalf("discover: %v %v", locs, err)
	}
	run := state.Load(locs[0], state.NewEnv(0))
	if run.Status != model.StatusAwaitingInput {
		t.Fatalf("status %s", run.Status)
	}
	actor := NewActor(action.Options{User: "tester", JournalPath: filepath.Join(t.TempDir(), "journal.jsonl")},
		func() model.Env { return state.NewEnv(0) })
	m := newTestModel(t, 160, 50, []model.Run{run}, app.Options{Actor: actor})
	m = send(t, m, press("R"))
	c := m.confirmDialog()
	if c == nil {
		t.Fatalf("no confirmation; footer %q", m.app.Msgs.ErrText())
	}
	preview := strings.Join(strings.Fields(strings.Join(c.Preview, " ")), " ")
	if !strings.Contains(preview, model.NoRetryAwaiting) {
		t.Fatalf("the confirmation lacks the brief's warning %q:\n%s", model.NoRetryAwaiting, preview)
	}
}
