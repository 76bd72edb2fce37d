package action

import (
	"os"
	"path/filepath"
	"testing"

	"runwatch/model"
)

// An action releases the run lock it took: a dashboard lives on after its action, and its own live lock
// would refuse the next action (the demo's tick, then step, was refused so).
func TestApplyReleasesTheRunLock(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	o := opts(t, fixedEnv())
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p.LockPath); !os.IsNotExist(err) {
		b, _ := os.ReadFile(p.LockPath)
		t.Fatalf("the run lock %s is still there after the action: %q (%v)", p.LockPath, b, err)
	}
	p2, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", false, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p2, ApplyOptions{}); err != nil {
		t.Fatalf("the next action in the same process: %v", err)
	}
}

// The dashboard plans from the run as it last read it. A live lock in that reading which is gone from disk
// by the time of the key press (runwatch's own, released by the action just before) must not refuse.
func TestPlanIgnoresALiveLockReleasedSinceTheRead(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	o := opts(t, fixedEnv())
	run := load(t, sp, o.Env)
	run.Locks = append(run.Locks, model.Lock{Path: filepath.Join(filepath.Dir(sp), "run.lock"), PID: os.Getpid(),
		Verdict: model.VerdictLive, Reasons: []string{"pid is running"}})
	if _, err := PlanCheck(run, "CB_S3_VERIFY_GREEN", true, o); err != nil {
		t.Fatalf("refused over a lock that is no longer on disk: %v", err)
	}
	if err := os.WriteFile(run.Locks[len(run.Locks)-1].Path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanCheck(run, "CB_S3_VERIFY_GREEN", true, o); err == nil {
		t.Fatal("a live lock that is still on disk must refuse")
	}
}
