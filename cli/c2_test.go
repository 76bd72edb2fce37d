package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
)

// The fixtures of docs/FORMATS.md C.2, written by js-yaml 4 (testdata/jonggrang-c2/_gen/gen.js).
const (
	c2Reopened = "reopened-cart-mlopc001"
	c2Review   = "design-review-mlopc002"
	c2Planned  = "planned-search-mlopc003"
	c2YmlOnly  = "yml-only-mlopc004"
)

// c2Workspace copies the C.2 fixture project into a temp dir, with a config naming it as the only root.
// The environment to run runwatch in is the test's own (testEnv).
func c2Workspace(t *testing.T) (root, cfg string, e env) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "app")
	if err := os.CopyFS(root, os.DirFS("../testdata/jonggrang-c2")); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("roots: ["+root+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, cfg, testEnv(t)
}

func c2Feature(root, fid string) string {
	return filepath.Join(root, ".jonggrang", ".output", "features", fid)
}

// c2LiveLock writes the agent's lock as the convention does (JSON.stringify(x, null, 2), no trailing
// newline), held by this process.
func c2LiveLock(t *testing.T, root, agent string) string {
	t.Helper()
	b, _ := json.MarshalIndent(map[string]any{"agent_id": agent, "files": []string{"src/settings.ts"},
		"acquired_at": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "pid": os.Getpid()}, "", "  ")
	path := filepath.Join(root, ".jonggrang", "locks", agent+".lock")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func rawRun(t *testing.T, raw map[string]any, id string) map[string]any {
	t.Helper()
	for _, r := range raw["runs"].([]any) {
		if m := r.(map[string]any); m["id"] == id {
			return m
		}
	}
	t.Fatalf("run %s not in the JSON", id)
	return nil
}

// status --json on the C.2 fixtures: a reopened run is paused, plans and MANIFEST.yml are no runs and no
// errors, stale compaction state blocks nothing, the feedback gate counts only modified_domains, and times
// are the file's text.
func TestStatusJSONOnC2Fixtures(t *testing.T) {
	t.Parallel()
	root, _, _ := c2Workspace(t)
	snap, raw, code, stderr := runStatusJSON(t, root)
	if code != 0 {
		t.Errorf("exit %d, want 0: nothing in the C.2 fixtures is an error (stderr %s)", code, stderr)
	}
	var ids []string
	for _, r := range snap.Runs {
		ids = append(ids, r.ID)
		for _, p := range r.Problems {
			if strings.Contains(p.Message, c2Planned) || strings.Contains(p.Message, c2YmlOnly) || p.Severity == model.SeverityError {
				t.Errorf("%s: problem %+v", r.ID, p)
			}
		}
	}
	if strings.Join(ids, " ") != c2Review+" "+c2Reopened && strings.Join(ids, " ") != c2Reopened+" "+c2Review {
		t.Errorf("runs %v: want only the two features with a MANIFEST.yaml", ids)
	}

	reopened := findRun(t, snap, c2Reopened)
	if reopened.Status != model.StatusPaused || reopened.RawStatus != "in_progress" || reopened.Attention.Code == model.AttentionRunning {
		t.Errorf("reopened: %s (%s), attention %+v", reopened.Status, reopened.RawStatus, reopened.Attention)
	}
	// runwatch resume refuses a run already waiting: the attention points at the brief, which names the
	// orchestrator's own resume.
	if a := reopened.Attention; a.Action != model.ActionBrief || !strings.Contains(a.Reason, "orchestrator's own resume") {
		t.Errorf("reopened attention %+v", a)
	}
	// Times as js-yaml wrote them: three fractional digits, trailing zeros kept.
	r := rawRun(t, raw, c2Reopened)
	stage1 := r["stages"].([]any)[0].(map[string]any)
	jd := r["jonggrang"].(map[string]any)
	for field, got := range map[string]any{"updated_at": r["updated_at"], "stages[0].started_at": stage1["started_at"],
		"stages[0].completed_at": stage1["completed_at"], "jonggrang.created_at": jd["created_at"]} {
		want := map[string]string{"updated_at": "2026-02-16T04:50:15.120Z", "stages[0].started_at": "2026-02-16T04:01:00.120Z",
			"stages[0].completed_at": "2026-02-16T04:01:01.100Z", "jonggrang.created_at": "2026-02-16T04:00:00.100Z"}[field]
		if got != want {
			t.Errorf("%s = %v, want %s (the file's text)", field, got, want)
		}
	}

	for _, g := range reopened.Gates {
		switch g.Name {
		case "compaction":
			if g.Blocked || g.Status != "stale" || !strings.Contains(g.Detail, "last measured block") {
				t.Errorf("compaction gate %+v: stale information, not a block", g)
			}
		case "feedback-loop":
			if g.Blocked || !strings.Contains(g.Detail, "not counted (not in modified_domains): frontend") {
				t.Errorf("feedback gate %+v: frontend is not a modified domain", g)
			}
		}
	}
	if len(reopened.Gates) != 2 {
		t.Errorf("gates %+v", reopened.Gates)
	}
	for _, p := range reopened.Problems {
		if p.Code == model.CodeCompactionBlock || p.Code == model.CodeFeedbackGate {
			t.Errorf("problem %+v from a gate that does not block", p)
		}
	}

	// The same compaction state, measured now, blocks.
	eph := filepath.Join(root, ".jonggrang", ".ephemeral", "compaction-state.json")
	data, _ := os.ReadFile(eph)
	fresh := strings.Replace(string(data), "2026-02-16T04:40:00.000Z", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), 1)
	if err := os.WriteFile(eph, []byte(fresh), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, _, _, _ = runStatusJSON(t, root)
	if pr := problemOf(findRun(t, snap, c2Reopened), model.CodeCompactionBlock); pr == nil {
		t.Error("a fresh compaction state at block is not reported")
	}
}

func problemOf(r model.Run, code string) *model.Problem {
	for i := range r.Problems {
		if r.Problems[i].Code == code {
			return &r.Problems[i]
		}
	}
	return nil
}

// pause while a phase runs under a live agent is refused by the subcommand, with the reason and the way out.
func TestPauseSubcommandRefusedUnderALiveAgent(t *testing.T) {
	t.Parallel()
	root, cfg, e := c2Workspace(t)
	dir := c2Feature(root, c2Review)
	manifest := filepath.Join(dir, "MANIFEST.yaml")
	before, _ := os.ReadFile(manifest)
	lock := c2LiveLock(t, root, "reviewer-design-001")
	code, _, errOut := runCmd(e, "pause", "--config", cfg, dir, "--yes")
	if code != exitRefused || !strings.Contains(errOut, "pause would not stick") || !strings.Contains(errOut, "phase 10 (design-verification)") ||
		!strings.Contains(errOut, "reviewer-design-001") || !strings.Contains(errOut, "Instead") {
		t.Fatalf("pause under a live agent: exit %d, stderr %q", code, errOut)
	}
	if after, _ := os.ReadFile(manifest); string(after) != string(before) {
		t.Fatal("a refused pause changed the manifest")
	}
	os.Remove(lock)
	if code, out, errOut := runCmd(e, "pause", "--config", cfg, dir, "--yes"); code != 0 || !strings.Contains(out, "marked running but no live lock holds it") {
		t.Fatalf("pause with nothing live: exit %d, out %q, stderr %q", code, out, errOut)
	}
}

// retry writes in_progress, as the convention's reopen does: the run is then paused, not running; resume
// of a run already waiting changes nothing and says how to start it.
func TestRetryThenResumeSubcommands(t *testing.T) {
	t.Parallel()
	root, cfg, e := c2Workspace(t)
	dir := c2Feature(root, c2Review)
	manifest := filepath.Join(dir, "MANIFEST.yaml")
	data, _ := os.ReadFile(manifest)
	failed := strings.NewReplacer(
		"status: running\ncurrent_phase: 10", "status: failed\ncurrent_phase: 10",
		"    status: running\n    started_at: '2026-02-16T03:20:00.000Z'\n    completed_at: null\n    agent_id: null\n    output: null\n",
		"    status: failed\n    started_at: '2026-02-16T03:20:00.000Z'\n    completed_at: '2026-02-16T03:25:00.000Z'\n    agent_id: null\n    output:\n      error: plan mismatch\n",
	).Replace(string(data))
	if !strings.Contains(failed, "error: plan mismatch") {
		t.Fatal("fixture edit did not apply")
	}
	os.WriteFile(manifest, []byte(failed), 0o644)
	if code, _, errOut := runCmd(e, "retry", "--config", cfg, dir, "--yes"); code != 0 {
		t.Fatalf("retry: exit %d, stderr %q", code, errOut)
	}
	snap, _, _, _ := runStatusJSON(t, root)
	run := findRun(t, snap, c2Review)
	if run.RawStatus != "in_progress" || run.Status != model.StatusPaused {
		t.Fatalf("after retry: %s (%s)", run.Status, run.RawStatus)
	}
	code, _, errOut := runCmd(e, "resume", "--config", cfg, dir, "--yes")
	if code != exitRefused || !strings.Contains(errOut, "already waiting to be resumed") || !strings.Contains(errOut, "jonggrang orchestrate --resume") {
		t.Fatalf("resume of a waiting run: exit %d, stderr %q", code, errOut)
	}
}

// The brief of a human pause gets the run past it: step and resume, or autonomous mode; never retry.
func TestBriefAwaitingInputAdvice(t *testing.T) {
	t.Parallel()
	jg, _ := fixtureWorkspace(t)
	feature := filepath.Join(jg, ".jonggrang", ".output", "features", "new-billing-mlopa001")
	code, out, errOut := runCmd(testEnv(t), "brief", feature)
	if code != 0 {
		t.Fatalf("brief: exit %d, stderr %s", code, errOut)
	}
	steps := out[strings.Index(out, "## Next steps"):]
	steps = steps[:strings.Index(steps[3:], "## ")+3]
	for _, want := range []string{"runwatch step new-billing-mlopa001", "current_phase moved to 7 architecting",
		"runwatch resume new-billing-mlopa001", "autonomous mode", "Do not retry the phase"} {
		if !strings.Contains(steps, want) {
			t.Errorf("next steps lack %q:\n%s", want, steps)
		}
	}
	if strings.Contains(steps, "runwatch retry") {
		t.Errorf("the advice retries phase 6, which fails it again in supervised mode:\n%s", steps)
	}
}

// A running run is never explained as not running, even with a sign of trouble beside its live agent.
func TestBriefOfARunningRunNeverSaysWhyItIsNotRunning(t *testing.T) {
	t.Parallel()
	root, cfg, e := c2Workspace(t)
	c2LiveLock(t, root, "reviewer-design-001")
	// A parallel group of the feature that died: a crash sign, while the agent's lock is live.
	eph := filepath.Join(root, ".jonggrang", ".ephemeral", "orchestration-run.json")
	os.WriteFile(eph, []byte(`{
  "project_id": "app",
  "status": "running",
  "groups": [
    {
      "feature_id": "`+c2Review+`",
      "status": "interrupted",
      "worktree_path": null,
      "pid": 999999,
      "error": "the dashboard restarted while this plan was running"
    }
  ]
}`), 0o644)
	code, out, errOut := runCmd(e, "brief", "--config", cfg, c2Feature(root, c2Review))
	if code != 0 || !strings.Contains(out, "- Status: running") {
		t.Fatalf("brief: exit %d, stderr %s\n%s", code, errOut, out)
	}
	if strings.Contains(out, "not running") && strings.Contains(out, "Why it is not running") {
		t.Errorf("the brief of a running run says why it is not running:\n%s", out)
	}
	if !strings.Contains(out, "Sign of trouble (the run is still judged running)") {
		t.Errorf("the crash sign is not shown:\n%s", out)
	}
	if strings.Contains(out, "when the run stopped") {
		t.Errorf("the brief says the running phase stopped:\n%s", out)
	}

	// No lock and no group at all: the manifest's running is taken at its word (the orchestrator holds no
	// lock of its own), so the brief does not tell anyone to restart the phase as if it had stopped.
	os.Remove(eph)
	os.Remove(filepath.Join(root, ".jonggrang", "locks", "reviewer-design-001.lock"))
	code, out, errOut = runCmd(e, "brief", "--config", cfg, c2Feature(root, c2Review))
	if code != 0 || !strings.Contains(out, "- Status: running") {
		t.Fatalf("brief: exit %d, stderr %s\n%s", code, errOut, out)
	}
	if strings.Contains(out, "Why it is not running") || strings.Contains(out, "when the run stopped") ||
		!strings.Contains(out, "Phase 10 design-verification is running: the manifest says `running` and nothing shows a crash") {
		t.Errorf("brief of a running run without a lock:\n%s", out)
	}
}
