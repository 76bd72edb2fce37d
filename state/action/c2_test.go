package action

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"runwatch/model"
)

// The fixtures of docs/FORMATS.md C.2, written by js-yaml 4 (testdata/jonggrang-c2/_gen/gen.js).
const (
	c2Reopened = "reopened-cart-mlopc001"
	c2Review   = "design-review-mlopc002"
)

// copyC2 copies the C.2 fixture project into a temp dir and returns its root.
func copyC2(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "app")
	if err := os.CopyFS(root, os.DirFS("../../testdata/jonggrang-c2")); err != nil {
		t.Fatal(err)
	}
	return root
}

func c2Manifest(root, fid string) string {
	return filepath.Join(root, ".jonggrang", ".output", "features", fid, "MANIFEST.yaml")
}

// writeAgentLock writes a lock the way the convention's lock module does: JSON.stringify(x, null, 2), no
// trailing newline, acquired_at from toISOString.
func writeAgentLock(t *testing.T, root, agent string, files []string, acquired time.Time, pid int) string {
	t.Helper()
	b, err := json.MarshalIndent(map[string]any{"agent_id": agent, "files": files,
		"acquired_at": acquired.UTC().Format("2006-01-02T15:04:05.000Z"), "pid": pid}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, ".jonggrang", "locks", agent+".lock")
	mustWrite(t, path, string(b))
	return path
}

// A pause written while a phase runs under a live agent is overwritten by the completePhase that ends the
// phase: it is refused, saying why and what to do instead. Without a live holder it is planned, and the plan
// says what it cannot know.
func TestPauseRefusedWhileAPhaseRunsUnderALiveAgent(t *testing.T) {
	t.Parallel()
	root := copyC2(t)
	mp := c2Manifest(root, c2Review)
	before := mustRead(t, mp)
	lock := writeAgentLock(t, root, "reviewer-design-001", []string{"src/settings.ts"}, time.Now(), os.Getpid())
	o := opts(t, realEnv())
	run := load(t, mp, o.Env)
	if run.Status != model.StatusRunning {
		t.Fatalf("status %s, want running under the live lock", run.Status)
	}
	p, err := PlanPause(run, o)
	refused(t, p, err, "pause would not stick", "phase 10 (design-verification) is running", "reviewer-design-001",
		"completePhase", "Instead: pause once phase 10 has completed", "runwatch never kills a process")

	// A parallel worker on the feature: the same refusal, with the worker named.
	eph := filepath.Join(root, ".jonggrang", ".ephemeral", "orchestration-run.json")
	mustWrite(t, eph, `{
  "project_id": "app",
  "status": "running",
  "groups": [
    {
      "feature_id": "`+c2Review+`",
      "status": "running",
      "worktree_path": "/home/u/.jonggrang/worktree/app/`+c2Review+`",
      "pid": `+itoa(os.Getpid())+`,
      "started_at": "`+time.Now().UTC().Format("2006-01-02T15:04:05.000Z")+`"
    }
  ]
}`)
	os.Remove(lock)
	p, err = PlanPause(load(t, mp, o.Env), o)
	refused(t, p, err, "pause would not stick", "parallel worker (pid "+itoa(os.Getpid())+")", "let the worker finish")
	if mustRead(t, mp) != before {
		t.Fatal("a refused pause changed the manifest")
	}

	// Nothing live: the pause is planned, with the caveat that an orchestrator without a lock cannot be seen.
	os.Remove(eph)
	p, err = PlanPause(load(t, mp, o.Env), o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Summary, "running → paused") || !strings.Contains(p.Summary, "phase 10 is marked running but no live lock holds it") {
		t.Errorf("summary %q", p.Summary)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := load(t, mp, o.Env); r.RawStatus != "paused" || r.Status != model.StatusPaused {
		t.Errorf("after pause: %s (%s)", r.Status, r.RawStatus)
	}
}

// in_progress is "reopened, waiting to be resumed": such a run is paused, not running, and neither retry nor
// resume turns an idle run into one that looks like it runs.
func TestRetryAndResumeLeaveAnIdleRunWaiting(t *testing.T) {
	t.Parallel()
	root := copyC2(t)
	o := opts(t, realEnv())

	reopened := load(t, c2Manifest(root, c2Reopened), o.Env)
	if reopened.Status != model.StatusPaused || reopened.RawStatus != "in_progress" || reopened.Attention.Code == model.AttentionRunning {
		t.Fatalf("reopened run: %s (%s), attention %+v", reopened.Status, reopened.RawStatus, reopened.Attention)
	}
	p, err := PlanResume(reopened, o)
	refused(t, p, err, "already waiting to be resumed", "jonggrang orchestrate --resume")

	// Retry of a failed phase writes in_progress, as the convention's reopen does: paused, not running.
	mp := c2Manifest(root, c2Review)
	failed := strings.NewReplacer(
		"status: running\ncurrent_phase: 10", "status: failed\ncurrent_phase: 10",
		"    name: design-verification\n    status: running\n    started_at: '2026-02-16T03:20:00.000Z'\n    completed_at: null\n    agent_id: null\n    output: null\n",
		"    name: design-verification\n    status: failed\n    started_at: '2026-02-16T03:20:00.000Z'\n    completed_at: '2026-02-16T03:25:00.000Z'\n    agent_id: null\n    output:\n      error: plan mismatch\n",
	).Replace(mustRead(t, mp))
	if !strings.Contains(failed, "error: plan mismatch") || !strings.Contains(failed, "status: failed\ncurrent_phase") {
		t.Fatal("fixture edit did not apply")
	}
	mustWrite(t, mp, failed)
	run := load(t, mp, o.Env)
	if run.Status != model.StatusFailed || !run.Attention.NeedsYou {
		t.Fatalf("failed run: %s, attention %+v", run.Status, run.Attention)
	}
	p, err = PlanRetry(run, "", o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	run = load(t, mp, o.Env)
	if run.RawStatus != "in_progress" || run.Status != model.StatusPaused || run.Attention.Code == model.AttentionRunning {
		t.Fatalf("after retry: %s (%s), attention %+v", run.Status, run.RawStatus, run.Attention)
	}

	// Paused by hand, then resumed with nothing live: the file says in_progress, the run stays waiting.
	p, err = PlanPause(run, o)
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
	if !strings.Contains(p.Summary, "paused → in_progress") || !strings.Contains(p.Summary, "nothing runs the feature now") ||
		!strings.Contains(p.Summary, "continues at phase 10") {
		t.Errorf("resume summary %q", p.Summary)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if run = load(t, mp, o.Env); run.RawStatus != "in_progress" || run.Status != model.StatusPaused {
		t.Fatalf("after resume: %s (%s)", run.Status, run.RawStatus)
	}

	// While a live agent still works on a paused run, resume says running, which is then true.
	mustWrite(t, mp, strings.Replace(mustRead(t, mp), "status: in_progress\n", "status: paused\n", 1))
	writeAgentLock(t, root, "reviewer-design-001", []string{"src/settings.ts"}, time.Now(), os.Getpid())
	p, err = PlanResume(load(t, mp, o.Env), o)
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary != "set run status paused → running" {
		t.Errorf("resume under a live lock: %q", p.Summary)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
