package action

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state/atomicfile"
	"runwatch/state/envfile"
	"runwatch/state/journal"
)

// refused asserts a refusal mentioning every want, with nothing planned.
func refused(t *testing.T, p *Plan, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("not refused; summary %q", p.Summary)
	}
	if !isRefusal(err) {
		t.Errorf("error is not a refusal: %T %v", err, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not mention %q", err, w)
		}
	}
	if len(p.Files) != 0 || p.LogLine != "" {
		t.Errorf("a refused plan still holds changes: %+v", p.Files)
	}
	if aerr := Apply(p, ApplyOptions{}); aerr == nil {
		t.Error("Apply of a refused plan succeeded")
	}
}

func TestStepGateRefusalNamesBlockers(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	o := opts(t, fixedEnv())
	st := strings.Replace(stateEnv, `CURRENT_STAGE="S2"`, `CURRENT_STAGE="S3"`, 1)
	mustWrite(t, sp, st)
	p, err := PlanStep(load(t, sp, o.Env), "", o)
	refused(t, p, err, "gate not met", "CB_S3_VERIFY_GREEN=0")
	if strings.Contains(err.Error(), "CB_S3_GENERATOR_SMOKE") {
		t.Errorf("names an item that is done: %v", err)
	}
	if mustRead(t, sp) != st {
		t.Fatal("state.env changed")
	}
}

func TestUncheckOfDoneStageRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	o := opts(t, fixedEnv())
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S1_VERIFY_GREEN", false, o)
	refused(t, p, err, "stage S1 is already marked done", "S1_DONE=1")
	p, err = PlanCheck(load(t, sp, o.Env), "CB_S9_NOPE", true, o)
	refused(t, p, err, "no checklist item", "CB_S3_VERIFY_GREEN")
	// A typo names the item meant, as commands, flags and config keys do.
	p, err = PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREN", true, o)
	refused(t, p, err, "no checklist item", "did you mean CB_S3_VERIFY_GREEN?")
	// A short name a step off (the wrong stage, a letter) is answered as the whole key is (issue 36).
	for short, want := range map[string]string{"S4_SHADOW_REPORT_WRITTEN": "did you mean CB_S2_SHADOW_REPORT_WRITTEN?",
		"SHADOW_REPORT_WRITEN": "did you mean CB_S2_SHADOW_REPORT_WRITTEN?"} {
		p, err = PlanCheck(load(t, sp, o.Env), short, true, o)
		refused(t, p, err, "no checklist item", want)
	}
}

// startSleeper is a real, living process whose pid a lock can name.
func startSleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

func TestLiveLockRefused(t *testing.T) {
	t.Parallel()
	pid := startSleeper(t)
	time.Sleep(10 * time.Millisecond) // let /proc show the child's start time before the lock's timestamp
	acquired := time.Now().UTC().Add(time.Second).Format(time.RFC3339)

	t.Run("resumable", func(t *testing.T) {
		root := t.TempDir()
		sp := makeResumable(t, root)
		lock := fmt.Sprintf(`{"acquired_at_utc": %q, "host": "testhost", "pid": %d, "run_id": "20260215T014733Z", "user": "agent"}`+"\n", acquired, pid)
		mustWrite(t, filepath.Join(filepath.Dir(sp), "run.lock"), lock)
		o := opts(t, realEnv())
		run := load(t, sp, o.Env)
		if len(run.Locks) != 1 || run.Locks[0].Verdict != model.VerdictLive {
			t.Fatalf("fixture lock not judged live: %+v", run.Locks)
		}
		p, err := PlanStep(run, "", o)
		refused(t, p, err, "live lock", fmt.Sprintf("pid %d", pid), "agent@testhost")
		p, err = PlanUnlock(run, "", o)
		refused(t, p, err, "no stale lock")
		p, err = PlanUnlock(run, "run.lock", o)
		refused(t, p, err, "refusing to clear a live lock", fmt.Sprintf("pid %d", pid))
		p, err = PlanCheck(run, "CB_S3_VERIFY_GREEN", true, o)
		refused(t, p, err, "live lock")
		if mustRead(t, filepath.Join(filepath.Dir(sp), "run.lock")) != lock {
			t.Fatal("the live lock was touched")
		}
	})
	t.Run("jonggrang", func(t *testing.T) {
		root := t.TempDir()
		mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
		lockPath := filepath.Join(root, "proj", ".jonggrang", "locks", "developer-auth-001.lock")
		mustWrite(t, lockPath, fmt.Sprintf("{\n  \"agent_id\": \"developer-auth-001\",\n  \"files\": [\"src/a.ts\"],\n  \"acquired_at\": %q,\n  \"pid\": %d\n}", acquired, pid))
		o := opts(t, realEnv())
		run := load(t, mp, o.Env)
		p, err := PlanUnlock(run, "developer-auth-001", o)
		refused(t, p, err, "refusing to clear a live lock", "developer-auth-001")
		p, err = PlanStep(run, "", o)
		refused(t, p, err, "live lock", "developer-auth-001")
	})
}

// A lock taken while the run is being planned makes Apply refuse: the run lock is created exclusively.
func TestApplyRefusesWhenRunLockAppears(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	o := opts(t, fixedEnv())
	p, err := PlanStep(load(t, sp, o.Env), "", o)
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(filepath.Dir(sp), "run.lock")
	mustWrite(t, lock, `{"pid": 1}`)
	err = Apply(p, ApplyOptions{})
	if !isRefusal(err) || !strings.Contains(err.Error(), "run lock") || !strings.Contains(err.Error(), "is held") {
		t.Fatalf("err = %v", err)
	}
	if mustRead(t, sp) != stateEnv || mustRead(t, lock) != `{"pid": 1}` {
		t.Fatal("something was written")
	}
}

func TestUnknownLockNeedsTypedConfirmation(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	lockPath := filepath.Join(filepath.Dir(sp), "run.lock")
	lock := "acquired_at_utc=\"2026-11-30T00:00:00Z\"\nhost=\"other-host\"\npid=\"123\"\nrun_id=\"20260215T014733Z\"\nuser=\"u\"\n"
	mustWrite(t, lockPath, lock)
	o := opts(t, fixedEnv())
	run := load(t, sp, o.Env)
	if len(run.Locks) != 1 || run.Locks[0].Verdict != model.VerdictUnknown {
		t.Fatalf("fixture lock not unknown: %+v", run.Locks)
	}
	p, err := PlanUnlock(run, "", o)
	refused(t, p, err, "no stale lock", "unknown lock is cleared only by naming it")

	p, err = PlanUnlock(run, "run.lock", o)
	if err != nil {
		t.Fatal(err)
	}
	if p.Confirm.Kind != ConfirmTyped || p.Confirm.Word != "u@other-host" {
		t.Fatalf("confirm = %+v", p.Confirm)
	}
	if err := Apply(p, ApplyOptions{Typed: "y"}); !isRefusal(err) || !strings.Contains(err.Error(), "u@other-host") {
		t.Fatalf("wrong word: err = %v", err)
	}
	if mustRead(t, lockPath) != lock {
		t.Fatal("cleared without the typed word")
	}
	logBefore := mustRead(t, p.LogPath)
	if err := Apply(p, ApplyOptions{Typed: "u@other-host"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lockPath); !os.IsNotExist(err) {
		t.Fatal("not cleared")
	}
	appended := strings.TrimPrefix(mustRead(t, p.LogPath), logBefore)
	if !strings.Contains(appended, `stale_lock_cleared payload=acquired_at_utc="2026-11-30T00:00:00Z" host="other-host"`) || !strings.Contains(appended, "verdict=unknown") || strings.Count(appended, "\n") != 1 {
		t.Fatalf("audit line %q", appended)
	}

	// --force skips the word.
	mustWrite(t, lockPath, lock)
	o.Force = true
	p, err = PlanUnlock(load(t, sp, o.Env), "run.lock", o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestChangedBetweenPlanAndApply(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func(t *testing.T, root string) (string, func(model.Run, Options) (*Plan, error))
	}{
		{"resumable", func(t *testing.T, root string) (string, func(model.Run, Options) (*Plan, error)) {
			return makeResumable(t, root), planStep
		}},
		{"jonggrang", func(t *testing.T, root string) (string, func(model.Run, Options) (*Plan, error)) {
			return makeJonggrang(t, root, "add-login-mlop4860", manifestPaused), planStep
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			sp, plan := tc.make(t, root)
			o := opts(t, fixedEnv())
			p, err := plan(load(t, sp, o.Env), o)
			if err != nil {
				t.Fatal(err)
			}
			theirs := mustRead(t, sp) + "# an agent wrote this\n"
			mustWrite(t, sp, theirs)
			logBefore := readLog(p)
			err = Apply(p, ApplyOptions{})
			if !errors.Is(err, atomicfile.ErrChanged) || !strings.Contains(err.Error(), "changed on disk since you looked") {
				t.Fatalf("err = %v", err)
			}
			if mustRead(t, sp) != theirs || readLog(p) != logBefore {
				t.Fatal("something was written")
			}
			if entries, _, _ := journal.Read(o.JournalPath); len(entries) != 0 {
				t.Fatal("a refused action was journaled")
			}
			if p.LockPath != "" {
				if _, err := os.Stat(p.LockPath); !os.IsNotExist(err) {
					t.Fatal("run lock left behind")
				}
			}
		})
	}
}

func TestUndo(t *testing.T) {
	t.Parallel()
	t.Run("resumable restores then refuses when moved on", func(t *testing.T) {
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
		p, err = PlanStep(load(t, sp, o.Env), "", o)
		if err != nil {
			t.Fatal(err)
		}
		if err := Apply(p, ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		// Undo walks back: the step first, then the check.
		for _, want := range []struct{ path, content string }{{sp, stateEnv}, {cp, checklistEnv}} {
			p, err := PlanUndo(load(t, sp, o.Env), o)
			if err != nil {
				t.Fatal(err)
			}
			if err := Apply(p, ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := mustRead(t, want.path); got != want.content {
				t.Fatalf("%s after undo:\n%s", want.path, got)
			}
		}
		p, err = PlanUndo(load(t, sp, o.Env), o)
		refused(t, p, err, "no action")
		if !strings.Contains(mustRead(t, filepath.Join(filepath.Dir(sp), "run.log")), "runwatch_undo action=step") {
			t.Fatal("undo not logged")
		}

		// Moved on: an agent changed the file after the action.
		p, _ = PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
		if err := Apply(p, ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		moved := mustRead(t, cp) + "CB_S3_EXTRA=\"0\"\n"
		mustWrite(t, cp, moved)
		p, err = PlanUndo(load(t, sp, o.Env), o)
		refused(t, p, err, "has moved on", "checklist.state.env")
		if mustRead(t, cp) != moved {
			t.Fatal("undo touched a file that moved on")
		}
	})
	t.Run("jonggrang retry and unlock", func(t *testing.T) {
		root := t.TempDir()
		mp := makeJonggrang(t, root, "add-login-mlop4860", manifestFailed)
		lockPath := filepath.Join(root, "proj", ".jonggrang", "locks", "broken.lock")
		mustWrite(t, lockPath, "not json")
		o := opts(t, fixedEnv())
		for _, plan := range []func() (*Plan, error){
			func() (*Plan, error) { return PlanRetry(load(t, mp, o.Env), "7", o) },
			func() (*Plan, error) { return PlanUnlock(load(t, mp, o.Env), "", o) },
		} {
			p, err := plan()
			if err != nil {
				t.Fatal(err)
			}
			if err := Apply(p, ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 {
			p, err := PlanUndo(load(t, mp, o.Env), o)
			if err != nil {
				t.Fatal(err)
			}
			if err := Apply(p, ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if mustRead(t, mp) != manifestFailed || mustRead(t, lockPath) != "not json" {
			t.Fatal("undo did not restore the manifest and the lock")
		}
	})
}

func TestReadOnlyRefusesEverything(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	mp := makeJonggrang(t, root, "add-login-mlop4860", manifestFailed)
	o := opts(t, fixedEnv())
	o.ReadOnly = true
	rr, jr := load(t, sp, o.Env), load(t, mp, o.Env)
	for name, plan := range map[string]func() (*Plan, error){
		"unlock":  func() (*Plan, error) { return PlanUnlock(rr, "", o) },
		"step":    func() (*Plan, error) { return PlanStep(rr, "", o) },
		"check":   func() (*Plan, error) { return PlanCheck(rr, "CB_S3_VERIFY_GREEN", true, o) },
		"uncheck": func() (*Plan, error) { return PlanCheck(rr, "CB_S3_GENERATOR_SMOKE", false, o) },
		"retry":   func() (*Plan, error) { return PlanRetry(jr, "", o) },
		"pause":   func() (*Plan, error) { return PlanPause(jr, o) },
		"resume":  func() (*Plan, error) { return PlanResume(jr, o) },
		"undo":    func() (*Plan, error) { return PlanUndo(rr, o) },
	} {
		t.Run(name, func(t *testing.T) {
			p, err := plan()
			refused(t, p, err, "read-only")
		})
	}
	// A plan made writable, then applied read-only, is refused too.
	o.ReadOnly = false
	p, err := PlanCheck(rr, "CB_S3_VERIFY_GREEN", true, o)
	if err != nil {
		t.Fatal(err)
	}
	p.opts.ReadOnly = true
	if err := Apply(p, ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("err = %v", err)
	}
	if mustRead(t, sp) != stateEnv || mustRead(t, filepath.Join(filepath.Dir(sp), "checklist.state.env")) != checklistEnv {
		t.Fatal("written in read-only mode")
	}
}

func TestSymlinkOutOfRootRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	outside := filepath.Join(t.TempDir(), "checklist.state.env")
	mustWrite(t, outside, checklistEnv)
	cp := filepath.Join(filepath.Dir(sp), "checklist.state.env")
	os.Remove(cp)
	if err := os.Symlink(outside, cp); err != nil {
		t.Fatal(err)
	}
	o := opts(t, fixedEnv())
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
	refused(t, p, err, "outside the run root")
	if mustRead(t, outside) != checklistEnv {
		t.Fatal("wrote through the symlink")
	}

	// The manifest itself pointing out of the project.
	root2 := t.TempDir()
	mp := makeJonggrang(t, root2, "add-login-mlop4860", manifestPaused)
	outsideM := filepath.Join(t.TempDir(), "MANIFEST.yaml")
	mustWrite(t, outsideM, manifestPaused)
	os.Remove(mp)
	os.Symlink(outsideM, mp)
	p, err = PlanResume(load(t, mp, o.Env), o)
	refused(t, p, err, "outside the run root")
}

func TestForeignOwnerRefusedUnlessForced(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("making a file owned by another user needs root")
	}
	root := t.TempDir()
	mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
	if err := os.Chown(mp, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	o := opts(t, fixedEnv())
	p, err := PlanResume(load(t, mp, o.Env), o)
	refused(t, p, err, "owned by uid 4242", "--force")
	o.Force = true
	p, err = PlanResume(load(t, mp, o.Env), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestImmutableKeysNeverEdited(t *testing.T) {
	t.Parallel()
	f, err := envfile.Parse([]byte(stateEnv))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"RUN_ID", "RUN_ROOT", "REPO_ROOT", "PLAN_PATH", "BASE_PIN_SHA", "run_id"} {
		if _, err := editEnv("state.env", f, []model.KV{{Key: k, Value: "x"}}); err == nil || !strings.Contains(err.Error(), "immutable") {
			t.Errorf("%s: err = %v", k, err)
		}
	}
}

func TestWrongConventionAndNothingToDo(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
	o := opts(t, fixedEnv())
	rr, jr := load(t, sp, o.Env), load(t, mp, o.Env)
	p, err := PlanRetry(rr, "", o)
	refused(t, p, err, "retry applies to jonggrang")
	p, err = PlanCheck(jr, "CB_X", true, o)
	refused(t, p, err, "checklists belong to resumable")
	p, err = PlanRetry(jr, "", o)
	refused(t, p, err, "no failed phase")
	p, err = PlanPause(jr, o)
	refused(t, p, err, "nothing to pause")
	p, err = PlanUnlock(jr, "", o)
	refused(t, p, err, "holds no lock")
	m := strings.Replace(manifestPaused, "status: paused\n", "status: running\n", 1)
	mustWrite(t, mp, m)
	p, err = PlanStep(load(t, mp, o.Env), "", o)
	refused(t, p, err, "step needs a paused run")
	p, err = PlanResume(load(t, mp, o.Env), o)
	refused(t, p, err, "not paused")
}

func TestJonggrangUnsafeManifestRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
	o := opts(t, fixedEnv())
	run := load(t, mp, o.Env)

	// A parallel group works on this feature in a worktree: the copy here is stale.
	grouped := run
	grouped.Jonggrang = &model.JonggrangDetail{Groups: []model.Group{{FeatureID: run.ID, Alive: true, PID: 4242}}}
	p, err := PlanResume(grouped, o)
	refused(t, p, err, "parallel group", "pid 4242")

	// Cut mid-line, as a crashed writeFileSync leaves it.
	mustWrite(t, mp, manifestPaused[:len(manifestPaused)/2]+"  '7':\n    name: 'archi")
	p, err = PlanResume(run, o)
	refused(t, p, err, "cannot be edited safely")
}

// The journal is written ahead: when not even the intent can be written, nothing is changed.
func TestNoJournalNoChange(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
	o := opts(t, fixedEnv())
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	mustWrite(t, blocker, "")
	o.JournalPath = filepath.Join(blocker, "journal.jsonl")
	p, err := PlanResume(load(t, mp, o.Env), o)
	if err != nil {
		t.Fatal(err)
	}
	before := mustRead(t, mp)
	err = Apply(p, ApplyOptions{})
	if err == nil || Applied(err) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("err = %v", err)
	}
	if mustRead(t, mp) != before {
		t.Fatal("changed a file although its intent could not be journaled")
	}
}

// When the completed entry cannot be appended after the change, the caller is told undo will not see it,
// and the intent stays for the next action to record.
func TestJournalFailureIsReportedAfterApply(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
	o := opts(t, fixedEnv())
	// The journal is opened and locked before the first change; its append fails after it (the write
	// fails as on a full disk).
	o.Seams.BeforeJournalAppend = func(f *os.File, _ []byte) { f.Close() }
	p, err := PlanResume(load(t, mp, o.Env), o)
	if err != nil {
		t.Fatal(err)
	}
	err = Apply(p, ApplyOptions{})
	var je *JournalError
	if !errors.As(err, &je) || !Applied(err) || !strings.Contains(err.Error(), "undo will not know") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(mustRead(t, mp), "status: running\n") {
		t.Fatal("the change was not applied")
	}
	if pending, _, _ := journal.Pending(o.JournalPath, ""); len(pending) != 1 || pending[0].ID != p.ID {
		t.Fatalf("pending intents %+v, want the one of %s", pending, p.ID)
	}
}

// A journal that cannot be opened (journal.jsonl is a folder) refuses the action before anything changes:
// the journal is opened and locked before the first change.
func TestAnUnusableJournalRefusesBeforeAnyChange(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
	o := opts(t, fixedEnv())
	if err := os.MkdirAll(o.JournalPath, 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := PlanResume(load(t, mp, o.Env), o)
	if err != nil {
		t.Fatal(err)
	}
	before := mustRead(t, mp)
	err = Apply(p, ApplyOptions{})
	if err == nil || Applied(err) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("err = %v", err)
	}
	if mustRead(t, mp) != before {
		t.Fatal("changed a file although the journal cannot be written")
	}
}

// planStep is PlanStep with the files deciding the next stage.
func planStep(run model.Run, o Options) (*Plan, error) { return PlanStep(run, "", o) }

// isRefusal reports whether err is a refusal or a safety stop rather than an I/O failure.
func isRefusal(err error) bool {
	var r *Refused
	var c *atomicfile.ChangedError
	var u *atomicfile.UnsafePathError
	var b *PutBackError
	var n *NotAsShownError
	return errors.As(err, &r) || errors.As(err, &c) || errors.As(err, &u) || errors.As(err, &b) || errors.As(err, &n)
}
