package action

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"runwatch/state/atomicfile"
	"runwatch/state/journal"
)

// within runs f and fails the test if it does not return in time: what a FIFO would make hang.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s hangs (a blocking open?)", what)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Item 1: a FIFO in place of any file an action reads or appends to never blocks it, is refused before the
// run lock is taken, and leaves nothing applied, held or journaled.
func TestFIFONeverHangsAnAction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, file string }{
		{"state.env", "state.env"}, {"checklist", "checklist.state.env"}, {"run.log", "run.log"},
	} {
		for _, when := range []string{"before plan", "after plan"} {
			t.Run(tc.name+" "+when, func(t *testing.T) {
				root := t.TempDir()
				sp := makeResumable(t, root)
				dir := filepath.Dir(sp)
				o := opts(t, fixedEnv())
				run := load(t, sp, o.Env)
				if when == "before plan" {
					mkfifo(t, filepath.Join(dir, tc.file))
				}
				var p *Plan
				var err error
				within(t, "the action", func() {
					if tc.file == "state.env" {
						p, err = PlanStep(run, "", o) // writes state.env
					} else {
						p, err = PlanCheck(run, "CB_S3_VERIFY_GREEN", true, o)
					}
					if err == nil {
						if when == "after plan" {
							mkfifo(t, filepath.Join(dir, tc.file))
						}
						err = Apply(p, ApplyOptions{})
					}
				})
				if err == nil || Applied(err) || !strings.Contains(err.Error(), "named pipe") {
					t.Fatalf("err = %v, want a refusal naming the FIFO", err)
				}
				if _, err := os.Lstat(filepath.Join(dir, "run.lock")); !os.IsNotExist(err) {
					t.Fatal("the run lock was left held")
				}
				if entries, _, _ := journal.Read(o.JournalPath); len(entries) != 0 {
					t.Fatalf("journaled %d entries for a refused action", len(entries))
				}
				if tc.file == "run.log" && checklistValue(t, filepath.Join(dir, "checklist.state.env")) != "0" {
					t.Fatal("the change was applied")
				}
			})
		}
	}
	t.Run("MANIFEST.yaml", func(t *testing.T) {
		root := t.TempDir()
		mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
		o := opts(t, fixedEnv())
		run := load(t, mp, o.Env)
		mkfifo(t, mp)
		var err error
		within(t, "pause", func() { _, err = PlanPause(run, o) })
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Fatalf("err = %v", err)
		}
	})
}

// Item 4: the lock folder or the feature folder swapped for a symlink while the confirmation waits cannot
// redirect the lock or the write out of the run root.
func TestSwapDuringConfirmationCannotRedirect(t *testing.T) {
	t.Parallel()
	t.Run("lock folder", func(t *testing.T) {
		root := t.TempDir()
		sp := makeResumable(t, root)
		dir := filepath.Dir(sp)
		state := strings.Replace(stateEnv, `LOCK_FILE="/cfg/reports/irm-backfill-20260215T014733Z/run.lock"`, `LOCK_FILE="lock/active.lock"`, 1)
		mustWrite(t, sp, state)
		os.MkdirAll(filepath.Join(dir, "lock"), 0o755)
		o := opts(t, fixedEnv())
		p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
		if err != nil {
			t.Fatal(err)
		}
		outside := t.TempDir()
		os.Remove(filepath.Join(dir, "lock"))
		if err := os.Symlink(outside, filepath.Join(dir, "lock")); err != nil {
			t.Fatal(err)
		}
		err = Apply(p, ApplyOptions{})
		if err == nil || !isRefusal(err) || !strings.Contains(err.Error(), "symlink") {
			t.Fatalf("err = %v, want a refusal naming the symlink", err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Fatalf("runwatch created %v outside the run root", entries)
		}
		if checklistValue(t, filepath.Join(dir, "checklist.state.env")) != "0" {
			t.Fatal("applied")
		}
	})
	t.Run("feature folder", func(t *testing.T) {
		root := t.TempDir()
		mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
		o := opts(t, fixedEnv())
		p, err := PlanResume(load(t, mp, o.Env), o)
		if err != nil {
			t.Fatal(err)
		}
		feature := filepath.Dir(mp)
		outside := filepath.Join(t.TempDir(), "copy")
		if err := os.Rename(feature, outside); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, feature); err != nil {
			t.Fatal(err)
		}
		err = Apply(p, ApplyOptions{})
		if err == nil || !isRefusal(err) {
			t.Fatalf("err = %v, want a refusal", err)
		}
		if mustRead(t, filepath.Join(outside, "MANIFEST.yaml")) != manifestPaused {
			t.Fatal("rewrote the copy outside the run root")
		}
	})
}

// Item 5: a run.log hard-linked to a file elsewhere is refused (appending would write there too).
func TestHardLinkedLogRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	victim := filepath.Join(t.TempDir(), "victim.log")
	mustWrite(t, victim, "victim\n")
	logp := filepath.Join(filepath.Dir(sp), "run.log")
	os.Remove(logp)
	if err := os.Link(victim, logp); err != nil {
		t.Fatal(err)
	}
	o := opts(t, fixedEnv())
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
	refused(t, p, err, "hard links")
	if mustRead(t, victim) != "victim\n" {
		t.Fatal("appended to the victim")
	}
}

// Issue 11 point 7: the lock is whole from the instant it exists, and its run_id is the state's RUN_ID.
func TestRunLockWholeWithStateRunID(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	o := opts(t, fixedEnv())
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
	if err != nil {
		t.Fatal(err)
	}
	var held []byte
	p.opts.Seams.locked = func(p *Plan) { held, _ = os.ReadFile(p.LockPath) }
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	var l map[string]any
	if err := json.Unmarshal(held, &l); err != nil {
		t.Fatalf("the lock held %q: %v", held, err)
	}
	if l["run_id"] != "20260215T014733Z" || l["tool"] != "runwatch" || l["host"] != "testhost" {
		t.Fatalf("lock payload %s, want run_id = the state's RUN_ID", held)
	}
}

// Item 8: runwatch's own lock, on this host, with a dead pid, is taken over by the next action with a
// run.log line; a foreign stale lock still needs unlock.
func TestOwnDeadLockTakenOver(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	lock := filepath.Join(filepath.Dir(sp), "run.lock")
	own := `{"acquired_at_utc": "2026-11-30T00:00:00Z", "host": "testhost", "pid": ` + deadPID(t) + `, "run_id": "20260215T014733Z", "tool": "runwatch", "user": "tester"}` + "\n"
	mustWrite(t, lock, own)
	o := opts(t, fixedEnv())
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if !strings.Contains(p.Preview(), "take over the run lock") {
		t.Errorf("preview does not announce the takeover:\n%s", p.Preview())
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	log := mustRead(t, filepath.Join(filepath.Dir(sp), "run.log"))
	if !strings.Contains(log, "stale_lock_replaced payload="+strings.TrimSpace(own)) || !strings.Contains(log, "is no longer running") {
		t.Fatalf("no takeover line in run.log:\n%s", log)
	}
	if _, err := os.Lstat(lock); !os.IsNotExist(err) {
		t.Fatal("lock left behind")
	}
	foreign := strings.Replace(own, `"tool": "runwatch", `, "", 1)
	mustWrite(t, lock, foreign)
	p, err = PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", false, o)
	refused(t, p, err, "runwatch unlock")
}

// Item 9: temp and quarantine files of dead owners are removed by the next action on the run; a live
// owner's stay; a quarantined lock whose name is free is put back.
func TestDeadOwnersLeftoversRemoved(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
	feature := filepath.Dir(mp)
	locks := filepath.Join(root, "proj", ".jonggrang", "locks")
	tag := atomicfile.HostTag()
	dead := atomicfile.TempPrefix("MANIFEST.yaml") + "runwatch-" + tag + "-" + deadPID(t) + "-0123"
	live := atomicfile.TempPrefix("MANIFEST.yaml") + "runwatch-" + tag + "-" + strconv.Itoa(os.Getpid()) + "-4567"
	claimed := ".reviewer-old.lock.claimed-runwatch-" + tag + "-" + deadPID(t) + "-89ab"
	lockBody := "{\n  \"agent_id\": \"reviewer-old\",\n  \"files\": [],\n  \"acquired_at\": \"2026-11-29T23:00:00.000Z\"\n}"
	mustWrite(t, filepath.Join(feature, dead), "status: pau")
	mustWrite(t, filepath.Join(feature, live), "status: pau")
	mustWrite(t, filepath.Join(locks, claimed), lockBody)
	o := opts(t, fixedEnv())
	// The claimed lock belongs to the project: the next unlock (which touches the locks folder) settles it.
	mustWrite(t, filepath.Join(locks, "broken.lock"), "not json")
	p, err := PlanUnlock(load(t, mp, o.Env), "broken.lock", o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err = PlanResume(load(t, mp, o.Env), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{filepath.Join(feature, dead): false, filepath.Join(feature, live): true,
		filepath.Join(locks, claimed): false, filepath.Join(locks, "reviewer-old.lock"): true} {
		if _, err := os.Lstat(name); (err == nil) != want {
			t.Errorf("%s exists=%v, want %v", name, err == nil, want)
		}
	}
	if mustRead(t, filepath.Join(locks, "reviewer-old.lock")) != lockBody {
		t.Error("the quarantined lock was not put back whole")
	}
}

// Item 10: the change applied but the audit line could not be appended: a distinct error (Applied, not a
// refusal) naming the log, the line and the journal entry.
func TestAuditFailureAfterApplyIsDistinct(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	logp := filepath.Join(filepath.Dir(sp), "run.log")
	o := opts(t, fixedEnv())
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
	if err != nil {
		t.Fatal(err)
	}
	p.opts.Seams.changed = func(*Plan) { mkfifo(t, logp) }
	err = Apply(p, ApplyOptions{})
	var ae *AuditError
	if !errors.As(err, &ae) || !Applied(err) || isRefusal(err) || !strings.Contains(err.Error(), p.ID) {
		t.Fatalf("err = %v, want an AuditError naming the journal entry", err)
	}
	if checklistValue(t, filepath.Join(filepath.Dir(sp), "checklist.state.env")) != "1" {
		t.Fatal("not applied")
	}
	entries, _, _ := journal.Read(o.JournalPath)
	if len(entries) != 1 || entries[0].LogLine != "" {
		t.Fatalf("journal %+v: want one entry recording that no line was logged", entries)
	}
}

// Item 3 (issue 37 row 14): a writer that takes no lock lands its rename between runwatch's check and rename:
// its file is put back, the same edit is made on its bytes, and that is said (Raced, the journal); undo
// restores the writer's bytes.
func TestDisplacedWriteRedoneAndUndoable(t *testing.T) {
	t.Parallel()
	if !atomicfile.CanReportDisplaced {
		t.Skip("this build renames plainly: a write landing in between is overwritten unseen (atomicfile.CanReportDisplaced)")
	}
	root := t.TempDir()
	mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
	theirs := strings.Replace(manifestPaused, "context_usage: 0.42", "context_usage: 0.77", 1)
	o := opts(t, fixedEnv())
	p, err := PlanResume(load(t, mp, o.Env), o)
	if err != nil {
		t.Fatal(err)
	}
	landed := false
	p.opts.Seams.BeforeRename = func() {
		if !landed { // once: the writer's one update
			landed = true
			tmp := mp + ".agent"
			mustWrite(t, tmp, theirs)
			os.Rename(tmp, mp)
		}
	}
	err = Apply(p, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, mp); !strings.Contains(got, "context_usage: 0.77") || !strings.Contains(got, "status: running") {
		t.Fatalf("the file holds\n%s\nwant the writer's update with the resume made on it", got)
	}
	if len(p.Raced) != 1 || !strings.Contains(p.Raced[0], "put back") || !strings.Contains(p.Raced[0], mp) {
		t.Fatalf("Raced = %q", p.Raced)
	}
	entries, _, _ := journal.Read(o.JournalPath)
	if len(entries) != 1 || entries[0].Raced == "" || len(entries[0].Files) != 1 || string(entries[0].Files[0].Old) != theirs {
		t.Fatalf("journal %+v: want the entry to keep the writer's bytes as old and say it raced", entries)
	}
	u, err := PlanUndo(load(t, mp, o.Env), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(u, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if mustRead(t, mp) != theirs {
		t.Fatal("undo did not restore the writer's bytes")
	}
}

const walChildEnv = "RUNWATCH_ACTION_WAL_CHILD"

// TestWALChild applies one check and kills itself right after the rename, before the audit line and the
// journal entry: the crash item 7 is about.
func TestWALChild(t *testing.T) {
	t.Parallel()
	root := os.Getenv(walChildEnv)
	if root == "" {
		t.Skip("helper process of TestCrashLeavesNothingUnaudited")
	}
	sp := filepath.Join(root, "reports", runName, "state.env")
	o := Options{Env: fixedEnv(), User: "tester", JournalPath: filepath.Join(root, "journal.jsonl")}
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
	if err != nil {
		t.Fatal(err)
	}
	p.opts.Seams.changed = func(*Plan) { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	Apply(p, ApplyOptions{})
	t.Fatal("survived")
}

// Item 7: a crash after the change and before its audit line and journal entry is finished by the next
// action: the audit line appended once (by action id), the entry journaled, so undo sees it.
func TestCrashLeavesNothingUnaudited(t *testing.T) {
	t.Parallel()
	if os.Getenv(walChildEnv) != "" {
		t.Skip("in the child")
	}
	root := t.TempDir()
	sp := makeResumable(t, root)
	dir := filepath.Dir(sp)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWALChild$")
	cmd.Env = append(os.Environ(), walChildEnv+"="+root)
	cmd.Run()
	if checklistValue(t, filepath.Join(dir, "checklist.state.env")) != "1" {
		t.Fatal("the child did not get as far as the change")
	}
	jp := filepath.Join(root, "journal.jsonl")
	pending, _, _ := journal.Pending(jp, "")
	if len(pending) != 1 {
		t.Fatalf("%d pending intents, want the killed one", len(pending))
	}
	id := pending[0].ID
	if strings.Contains(mustRead(t, filepath.Join(dir, "run.log")), id) {
		t.Fatal("the audit line is there already: the kill came too late")
	}
	o := Options{Env: fixedEnv(), User: "tester", JournalPath: jp}
	// The next action on the run finishes the killed one first.
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_GENERATOR_SMOKE", false, o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Preview(), "first finish check "+id) {
		t.Errorf("preview does not say the crashed action is finished first:\n%s", p.Preview())
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	log := mustRead(t, filepath.Join(dir, "run.log"))
	if strings.Count(log, "action_id="+id) != 1 || !strings.Contains(log, "recovered_by="+p.ID) {
		t.Fatalf("the crashed action's audit line is not there exactly once:\n%s", log)
	}
	entries, _, _ := journal.Read(jp)
	if len(entries) != 2 || entries[0].ID != id || !strings.Contains(entries[0].Recovered, "finished by") {
		t.Fatalf("journal %+v", entries)
	}
	if pending, _, _ := journal.Pending(jp, ""); len(pending) != 0 {
		t.Fatal("intent left pending")
	}
	// Recovering again adds nothing.
	if notes, _ := recoverRun(load(t, sp, o.Env), o); len(notes) != 0 {
		t.Fatalf("second recovery did something: %v", notes)
	}
	if strings.Count(mustRead(t, filepath.Join(dir, "run.log")), "action_id="+id) != 1 {
		t.Fatal("audit line appended twice")
	}
}

// Item 2: a manifest cut at a line end (the non-atomic writer caught mid-write) parses, but no action plans
// from it; and a manifest that turns torn between plan and apply is not written.
func TestTornManifestNeverPlanned(t *testing.T) {
	t.Parallel()
	cut := manifestPaused[:strings.Index(manifestPaused, "  '7':\n")] // phases 5 and 6 only; no agents, no validation
	for _, act := range []string{"pause", "step", "retry"} {
		t.Run(act, func(t *testing.T) {
			root := t.TempDir()
			body := manifestPaused
			if act == "retry" {
				body = manifestFailed
			}
			mp := makeJonggrang(t, root, "add-login-mlop4860", body)
			o := opts(t, fixedEnv())
			run := load(t, mp, o.Env)
			torn := cut
			if act == "retry" {
				torn = manifestFailed[:strings.Index(manifestFailed, "agents:")]
			}
			mustWrite(t, mp, torn)
			var p *Plan
			var err error
			switch act {
			case "pause":
				p, err = PlanPause(run, o)
			case "step":
				p, err = PlanStep(run, "", o)
			case "retry":
				p, err = PlanRetry(run, "", o)
			}
			refused(t, p, err, "cut short")
			if mustRead(t, mp) != torn {
				t.Fatal("the torn manifest was rewritten")
			}
		})
	}
	t.Run("torn at apply", func(t *testing.T) {
		root := t.TempDir()
		mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
		o := opts(t, fixedEnv())
		p, err := PlanResume(load(t, mp, o.Env), o)
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, mp, cut)
		if err := Apply(p, ApplyOptions{}); err == nil || Applied(err) {
			t.Fatalf("err = %v", err)
		}
		if mustRead(t, mp) != cut {
			t.Fatal("written over a torn manifest")
		}
	})
}

// Undo of an unlock takes over runwatch's own dead lock like every other action: the lock the unlock
// removed came back as the lock of a runwatch killed mid-action; the undo puts the removed lock back in its
// place, says so in the preview and the audit line, and a foreign lock there is still refused.
func TestUndoOfUnlockTakesOverOwnDeadLock(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	lock := filepath.Join(filepath.Dir(sp), "run.lock")
	stale := `{"acquired_at_utc": "2026-11-30T00:00:00Z", "host": "testhost", "pid": ` + deadPID(t) + `, "run_id": "20260215T014733Z", "user": "agent"}` + "\n"
	own := `{"acquired_at_utc": "2026-11-30T01:00:00Z", "host": "testhost", "pid": ` + deadPID(t) + `, "run_id": "20260215T014733Z", "tool": "runwatch", "user": "tester"}` + "\n"
	mustWrite(t, lock, stale)
	o := opts(t, fixedEnv())
	p, err := PlanUnlock(load(t, sp, o.Env), "", o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, lock, own)
	p, err = PlanUndo(load(t, sp, o.Env), o)
	if err != nil {
		t.Fatalf("undo of the unlock refused by runwatch's own dead lock: %v", err)
	}
	if !strings.Contains(p.Preview(), "the undo takes it over") {
		t.Errorf("the preview does not announce the takeover:\n%s", p.Preview())
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, lock); got != stale {
		t.Fatalf("lock after the undo:\n%s\nwant the lock the unlock removed:\n%s", got, stale)
	}
	if log := mustRead(t, filepath.Join(filepath.Dir(sp), "run.log")); !strings.Contains(log, "runwatch_undo action=unlock") ||
		!strings.Contains(log, "stale_lock_replaced=1") || !strings.Contains(log, "is no longer running") {
		t.Errorf("the undo's audit line does not record the takeover:\n%s", log)
	}
	// a lock that is not runwatch's own is someone's: the undo is refused
	p, err = PlanUnlock(load(t, sp, o.Env), "", o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, lock, strings.Replace(own, `"tool": "runwatch", `, "", 1))
	p, err = PlanUndo(load(t, sp, o.Env), o)
	refused(t, p, err, "exists again")
}

// Issue 37 row 14: a writer lands its rename between runwatch's check and rename with the item already
// changed (it ticked it itself): runwatch's edit no longer applies to the writer's bytes, so the writer's
// file is put back and stays, the action reports that it was not applied (as a refusal, with what changed
// and how long runwatch's bytes were in place), the journal says so with no file to undo, and no audit
// line claims the change.
func TestDisplacedWriteEditNoLongerAppliesPutsBack(t *testing.T) {
	t.Parallel()
	if !atomicfile.CanReportDisplaced {
		t.Skip("this build renames plainly: a write landing in between is overwritten unseen (atomicfile.CanReportDisplaced)")
	}
	root := t.TempDir()
	sp := makeResumable(t, root)
	cp := filepath.Join(filepath.Dir(sp), "checklist.state.env")
	logPath := filepath.Join(filepath.Dir(sp), "run.log")
	theirs := strings.Replace(checklistEnv, `CB_S3_VERIFY_GREEN="0"`, `CB_S3_VERIFY_GREEN="1"`, 1) + "W_1=\"1\"\n"
	o := opts(t, fixedEnv())
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
	if err != nil {
		t.Fatal(err)
	}
	logBefore := mustRead(t, logPath)
	p.opts.Seams.BeforeRename = func() {
		mustWrite(t, cp+".tmp", theirs)
		os.Rename(cp+".tmp", cp)
	}
	err = Apply(p, ApplyOptions{})
	var pb *PutBackError
	if !errors.As(err, &pb) || Applied(err) || !isRefusal(err) || !errors.Is(err, atomicfile.ErrChanged) {
		t.Fatalf("err = %v, want a put back refusal", err)
	}
	for _, want := range []string{"not applied", "put back", `CB_S3_VERIFY_GREEN is now "1", not "0" as planned`, "in place for"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the report %q does not say %q", err, want)
		}
	}
	if got := mustRead(t, cp); got != theirs {
		t.Fatalf("the file holds\n%s\nwant the writer's bytes", got)
	}
	if got := mustRead(t, logPath); got != logBefore {
		t.Fatalf("run.log gained %q for an action not applied", strings.TrimPrefix(got, logBefore))
	}
	entries, _, _ := journal.Read(o.JournalPath)
	if len(entries) != 1 || len(entries[0].Files) != 0 || !strings.Contains(entries[0].Raced, "not applied") {
		t.Fatalf("journal %+v: want one entry without files saying it was not applied", entries)
	}
	if _, err := PlanUndo(load(t, sp, o.Env), o); err == nil || !strings.Contains(err.Error(), "no action") {
		t.Fatalf("undo after a put back: %v, want nothing to undo", err)
	}
}

// The same for a manifest: the writer's rename that lands during a resume has already moved the run on (its
// status is no longer paused), so the resume no longer applies; the writer's manifest stays, and the
// refusal names the path that moved.
func TestDisplacedManifestWhoseStatusMovedPutsBack(t *testing.T) {
	t.Parallel()
	if !atomicfile.CanReportDisplaced {
		t.Skip("this build renames plainly: a write landing in between is overwritten unseen (atomicfile.CanReportDisplaced)")
	}
	root := t.TempDir()
	mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
	theirs := strings.NewReplacer("status: paused\n", "status: completed\n", "current_phase: 6\n", "current_phase: 7\n").Replace(manifestPaused)
	o := opts(t, fixedEnv())
	p, err := PlanResume(load(t, mp, o.Env), o)
	if err != nil {
		t.Fatal(err)
	}
	p.opts.Seams.BeforeRename = func() {
		mustWrite(t, mp+".agent", theirs)
		os.Rename(mp+".agent", mp)
	}
	err = Apply(p, ApplyOptions{})
	var pb *PutBackError
	if !errors.As(err, &pb) || !strings.Contains(err.Error(), `status is now "completed", not "paused" as planned`) {
		t.Fatalf("err = %v, want a put back naming the status", err)
	}
	if got := mustRead(t, mp); got != theirs {
		t.Fatalf("the manifest holds\n%s\nwant the writer's", got)
	}
}

// An undo restores exact bytes, so it is never made again on a writer's: a writer's rename landing during an
// undo's rename is put back and the undo is not applied.
func TestDisplacedUndoPutsBack(t *testing.T) {
	t.Parallel()
	if !atomicfile.CanReportDisplaced {
		t.Skip("this build renames plainly: a write landing in between is overwritten unseen (atomicfile.CanReportDisplaced)")
	}
	root := t.TempDir()
	sp := makeResumable(t, root)
	cp := filepath.Join(filepath.Dir(sp), "checklist.state.env")
	o := opts(t, fixedEnv())
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := PlanUndo(load(t, sp, o.Env), o)
	if err != nil {
		t.Fatal(err)
	}
	theirs := mustRead(t, cp) + "W_1=\"1\"\n"
	u.opts.Seams.BeforeRename = func() {
		mustWrite(t, cp+".tmp", theirs)
		os.Rename(cp+".tmp", cp)
	}
	err = Apply(u, ApplyOptions{})
	var pb *PutBackError
	if !errors.As(err, &pb) || !strings.Contains(err.Error(), "undo is made only on the bytes it was planned from") {
		t.Fatalf("err = %v, want the undo put back", err)
	}
	if got := mustRead(t, cp); got != theirs {
		t.Fatalf("the checklist holds\n%s\nwant the writer's", got)
	}
}
