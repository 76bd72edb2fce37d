package action

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"runwatch/state/journal"
	"runwatch/state/journal/journaltest"
)

// A run folder whose name is not UTF-8 (Latin-1 é): any bytes but NUL and / may name one.
const latin1RunName = "r\xe9sum\xe9-\xff-20260215T014733Z"

func makeLatin1Run(t *testing.T) (statePath, jp string) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "reports", latin1RunName)
	mustWrite(t, filepath.Join(dir, "state.env"), stateEnv)
	mustWrite(t, filepath.Join(dir, "checklist.state.env"), checklistEnv)
	mustWrite(t, filepath.Join(dir, "run.log"), runLog)
	return filepath.Join(dir, "state.env"), filepath.Join(root, "journal.jsonl")
}

// The journal keeps a run path that is not UTF-8 byte for byte (encoding/json alone writes U+FFFD): the
// entry names the run, undo finds it and restores the bytes.
func TestJournalKeepsANonUTF8RunPath(t *testing.T) {
	t.Parallel()
	sp, jp := makeLatin1Run(t)
	o := Options{User: "t", JournalPath: jp, Env: realEnv()}
	cp := filepath.Join(filepath.Dir(sp), "checklist.state.env")
	before := mustRead(t, cp)
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	entries, bad, err := journal.Read(jp)
	if err != nil || len(bad) > 0 || len(entries) != 1 {
		t.Fatalf("journal: %d entries, bad %v, err %v", len(entries), bad, err)
	}
	if e := entries[0]; e.Run != sp || len(e.Files) != 1 || e.Files[0].Path != cp {
		t.Fatalf("journaled run %q file %+v; want %q and %q byte for byte", e.Run, e.Files, sp, cp)
	}
	u, err := PlanUndo(load(t, sp, o.Env), o)
	if err != nil {
		t.Fatalf("undo finds nothing to undo: %v", err)
	}
	if err := Apply(u, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	u.Close()
	if got := mustRead(t, cp); got != before {
		t.Errorf("after undo the checklist holds %q, want %q", got, before)
	}
}

const latin1CrashChildEnv = "RUNWATCH_LATIN1_CRASH_CHILD"

// TestLatin1CrashChild is the child of TestACrashOnANonUTF8RunIsRecovered: it checks an item on the run
// and is SIGKILLed after the file changed, before its audit line and journal entry, leaving its intent.
func TestLatin1CrashChild(t *testing.T) {
	t.Parallel()
	sp := os.Getenv(latin1CrashChildEnv)
	if sp == "" {
		t.Skip("helper process of TestACrashOnANonUTF8RunIsRecovered")
	}
	o := Options{User: "t", JournalPath: os.Getenv(latin1CrashChildEnv + "_JOURNAL"), Env: realEnv()}
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
	if err != nil {
		t.Fatal(err)
	}
	p.opts.Seams.changed = func(*Plan) { syscall.Kill(os.Getpid(), syscall.SIGKILL); select {} }
	Apply(p, ApplyOptions{})
}

// crashOn runs TestLatin1CrashChild on the run sp with the journal jp, and checks it was killed mid-action.
func crashOn(t *testing.T, sp, jp string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLatin1CrashChild$")
	cmd.Env = append(os.Environ(), latin1CrashChildEnv+"="+sp, latin1CrashChildEnv+"_JOURNAL="+jp)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed mid-action: %v\n%s", err, out)
	}
}

// A crash in the middle of an action on a run whose path is not UTF-8 leaves an intent that the next
// action on that run finds and finishes (the audit line appended, the entry journaled, the intent gone).
func TestACrashOnANonUTF8RunIsRecovered(t *testing.T) {
	t.Parallel()
	sp, jp := makeLatin1Run(t)
	crashOn(t, sp, jp)
	intents, bad, err := journal.Pending(jp, sp)
	if err != nil || len(bad) > 0 || len(intents) != 1 {
		t.Fatalf("intents for %q: %d (bad %v, err %v); want the killed action's", sp, len(intents), bad, err)
	}
	o := Options{User: "t", JournalPath: jp, Env: realEnv()}
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S2_VERIFY_GREEN", false, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if !strings.Contains(strings.Join(p.Recovered, "\n"), "finished by "+p.ID) {
		t.Errorf("the next action did not finish the crashed one: %q", p.Recovered)
	}
	if left, _, _ := journal.Pending(jp, ""); len(left) != 0 {
		t.Errorf("%d intent(s) left behind", len(left))
	}
	if log := mustRead(t, filepath.Join(filepath.Dir(sp), "run.log")); !strings.Contains(log, "recovered_by="+p.ID) {
		t.Errorf("run.log lacks the crashed action's audit line:\n%s", log)
	}
}

// An action refuses, changing nothing, when something else holds the journal's lock past the bound (a
// real `flock journal.jsonl sleep 600`), and names the holder; once it lets go the same action applies.
func TestAJournalHeldElsewhereChangesNothing(t *testing.T) {
	t.Parallel()
	sp, jp := makeLatin1Run(t)
	if err := os.WriteFile(jp, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	holderPID, release := journaltest.HoldWithFlock(t, jp)

	dir := filepath.Dir(sp)
	files := func() string {
		var b strings.Builder
		for _, name := range []string{"state.env", "checklist.state.env", "run.log", "run.lock"} {
			data, err := os.ReadFile(filepath.Join(dir, name))
			fmt.Fprintf(&b, "%s %q %v\n", name, data, errors.Is(err, os.ErrNotExist))
		}
		return b.String()
	}
	before := files()
	o := Options{User: "t", JournalPath: jp, Env: realEnv(), LockWait: time.Second}
	p, err := PlanStep(load(t, sp, o.Env), "", o)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	err = Apply(p, ApplyOptions{})
	p.Close()
	var busy *journal.BusyError
	if !errors.As(err, &busy) || Applied(err) {
		t.Fatalf("apply with the journal held: %v, want a refusal", err)
	}
	if took := time.Since(started); took > 30*time.Second {
		t.Errorf("the refusal took %s, past its bound", took)
	}
	for _, want := range []string{jp, fmt.Sprintf("pid %d (flock)", holderPID), "nothing was changed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if after := files(); after != before {
		t.Errorf("the refused action changed the run:\nbefore %s\nafter  %s", before, after)
	}
	if left, _, _ := journal.Pending(jp, ""); len(left) != 0 {
		t.Errorf("the refused action left %d intent(s)", len(left))
	}

	release()
	p, err = PlanStep(load(t, sp, o.Env), "", o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatalf("once the holder is gone: %v", err)
	}
	p.Close()
}

// An intent that can never be finished (its run was removed after the crash) is reported by the next
// action anywhere and set aside, so it stops counting as an action in progress (install refuses while one
// is pending), and its bytes are kept.
func TestAnIntentThatCannotBeFinishedIsSetAside(t *testing.T) {
	t.Parallel()
	sp, jp := makeLatin1Run(t)
	crashOn(t, sp, jp)
	intents, _, _ := journal.Pending(jp, "")
	if len(intents) != 1 {
		t.Fatalf("%d intents, want the killed action's", len(intents))
	}
	if err := os.RemoveAll(filepath.Dir(filepath.Dir(sp))); err != nil {
		t.Fatal(err)
	}
	other := makeResumable(t, t.TempDir())
	o := Options{User: "t", JournalPath: jp, Env: realEnv()}
	p, err := PlanCheck(load(t, other, o.Env), "CB_S3_VERIFY_GREEN", true, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	kept := filepath.Join(journal.PendingDir(jp), "unfinished", intents[0].ID+".json")
	said := strings.Join(p.Recovered, "\n")
	if !strings.Contains(said, intents[0].ID) || !strings.Contains(said, "cannot be finished") || !strings.Contains(said, kept) {
		t.Errorf("the orphaned intent was not reported with where it is kept: %q", p.Recovered)
	}
	if left, _, _ := journal.Pending(jp, ""); len(left) != 0 {
		t.Errorf("%d intent(s) still pending", len(left))
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("the intent's bytes are not kept: %v", err)
	}
}
