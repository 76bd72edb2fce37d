package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/state/journal/journaltest"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/app"
)

// While an action waits for the journal, which a real `flock journal.jsonl sleep 600` holds, the dashboard
// says it is applying and starts no other action on that run; the wait ends at its bound with the holder
// named, and nothing was changed.
func TestAnActionWaitingOnTheJournalIsSaidAndAlone(t *testing.T) {
	t.Parallel()
	root := resumabletest.Copy(t)
	runDir := resumabletest.Run(root, resumabletest.Mining)
	locs, err := state.Discover([]string{runDir}, 1)
	if err != nil || len(locs) != 1 {
		t.Fatalf("discover %s: %v %v", runDir, locs, err)
	}
	jp := filepath.Join(t.TempDir(), "journal.jsonl")
	if err := os.WriteFile(jp, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	holderPID, _ := journaltest.HoldWithFlock(t, jp)
	lock := filepath.Join(runDir, "lock", "active.lock")
	held, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}

	actor := NewActor(action.Options{User: "tester", JournalPath: jp, LockWait: time.Second}, func() model.Env { return state.NewEnv(0) })
	m := newTestModel(t, 140, 40, []model.Run{state.Load(locs[0], state.NewEnv(0))}, app.Options{Actor: actor})
	m = send(t, m, press("U"))
	if m.confirmDialog() == nil {
		t.Fatalf("U did not ask; footer %q", m.app.Msgs.ErrText())
	}
	// y confirms; its command (the apply) has not run yet, as while it waits in the real program.
	nm, applyCmd := m.Update(press("y"))
	m = nm.(Model)
	if got := m.app.Msgs.Last.Text; !strings.HasPrefix(got, "applying: ") {
		t.Errorf("the footer does not say an action is being applied: %q", got)
	}
	m = send(t, m, press("U"))
	if m.confirmDialog() != nil || !strings.Contains(m.app.Msgs.ErrText(), "still being applied") {
		t.Errorf("a second action on the run was not refused while the first applies: footer %q", m.app.Msgs.ErrText())
	}
	started := time.Now()
	for _, msg := range runCmd(applyCmd) {
		m = send(t, m, msg)
	}
	if took := time.Since(started); took > 30*time.Second {
		t.Errorf("the apply took %s, past the journal lock's bound", took)
	}
	got := m.app.Msgs.ErrText()
	for _, want := range []string{"locked by pid " + fmt.Sprint(holderPID) + " (flock)", "nothing was changed"} {
		if !strings.Contains(got, want) {
			t.Errorf("the outcome %q does not say %q", got, want)
		}
	}
	if now, err := os.ReadFile(lock); err != nil || string(now) != string(held) {
		t.Errorf("the lock was changed by a refused unlock: %q, %v", now, err)
	}
	if len(m.app.Applying) != 0 {
		t.Errorf("the run is still marked as applying: %v", m.app.Applying)
	}
}
