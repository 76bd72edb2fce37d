package resumable

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"runwatch/model"
)

// planRun writes a mining-style run (named stages, no stage_start lines) whose CURRENT_STAGE is anchor, with
// extra state keys, and returns its folder.
func planRun(t *testing.T, extra, log string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "reports", "iso26262-mining-20260306T090000Z")
	state := `CURRENT_STAGE="anchor"
` + extra + `RUN_ID="20260306T090000Z"
S_ANCHOR_DONE="0"
S_EXTRACT_DONE="1"
S_FINALIZE_DONE="0"
S_INGEST_DONE="1"
S_NORMALIZE_DONE="1"
S_PUBLISH_DONE="0"
S_VERIFY_DONE="0"
TASK_NAME="iso26262-mining"
`
	writeFile(t, filepath.Join(dir, "state.env"), state)
	writeFile(t, filepath.Join(dir, "checklist.state.env"), "CB_ANCHOR_LINKS_WRITTEN=\"1\"\n")
	writeFile(t, filepath.Join(dir, "run.log"), "[2026-03-06T09:00:00Z] run_bootstrap mode=kickoff-new\n"+log)
	return dir
}

const pipelinePlan = "# Plan\n\n- Run stage pipeline in canonical order (`ingest -> extract -> normalize -> anchor -> publish -> verify -> finalize`)\n"

func orderOf(r model.Run) string {
	var keys []string
	for _, s := range r.Stages {
		k := s.Key
		if s.OrderUnknown() {
			k += "?"
		}
		keys = append(keys, k)
	}
	return strings.Join(keys, ", ")
}

func TestLoadStageOrderFromThePlan(t *testing.T) {
	const want = "ingest, extract, normalize, anchor, publish, verify, finalize"
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, "plans", "p.md"), pipelinePlan)

	t.Run("absolute PLAN_PATH", func(t *testing.T) {
		r := load(t, planRun(t, `PLAN_PATH="`+filepath.Join(repo, "plans", "p.md")+`"
`, ""))
		d := r.Resumable
		if orderOf(r) != want || d.StageOrderSource != "plan" || d.PlanPath != filepath.Join(repo, "plans", "p.md") {
			t.Fatalf("order %s source %s plan %s", orderOf(r), d.StageOrderSource, d.PlanPath)
		}
		if next, ok := d.NextStage("anchor"); !ok || next != "publish" {
			t.Errorf("after anchor: %q %v", next, ok)
		}
		if strings.Join(d.StageOrderEvidence, "; ") != "order from the plan p.md, line 3" || findProblem(r, model.CodeStageOrderUnknown) != nil {
			t.Errorf("evidence %q problems %v", d.StageOrderEvidence, problemCodes(r))
		}
	})
	t.Run("relative PLAN_PATH is taken against REPO_ROOT", func(t *testing.T) {
		r := load(t, planRun(t, `PLAN_PATH="plans/p.md"
REPO_ROOT="`+repo+`"
`, ""))
		if orderOf(r) != want || r.Resumable.StageOrderSource != "plan" {
			t.Errorf("order %s source %s", orderOf(r), r.Resumable.StageOrderSource)
		}
	})
	t.Run("re-rooted like LOCK_FILE when the run came from another machine", func(t *testing.T) {
		dir := planRun(t, `CONTROL_RUN_ROOT="/home/u/.config/opencode/reports/iso26262-mining-20260306T090000Z"
PLAN_PATH="/home/u/.config/opencode/reports/iso26262-mining-20260306T090000Z/artifacts/plan/p.md"
`, "")
		writeFile(t, filepath.Join(dir, "artifacts", "plan", "p.md"), pipelinePlan)
		r := load(t, dir)
		if orderOf(r) != want || r.Resumable.PlanPath != filepath.Join(dir, "artifacts", "plan", "p.md") {
			t.Errorf("order %s plan %s", orderOf(r), r.Resumable.PlanPath)
		}
	})
	t.Run("a plan that run.log contradicts is not used", func(t *testing.T) {
		r := load(t, planRun(t, `PLAN_PATH="`+filepath.Join(repo, "plans", "p.md")+`"
`, "[2026-03-06T10:00:00Z] stage_complete stage=normalize next=publish\n"))
		d := r.Resumable
		if d.StageOrderSource == "plan" || !d.StageOrderUncertain ||
			!strings.Contains(d.PlanNote, "order from the plan p.md, line 3 is not used: run.log says publish comes right after normalize") {
			t.Errorf("source %s note %q evidence %q", d.StageOrderSource, d.PlanNote, d.StageOrderEvidence)
		}
	})
	t.Run("the files settle the order: the plan is not read", func(t *testing.T) {
		r := load(t, planRun(t, `PLAN_PATH="/nonexistent/plan.md"
STAGE_ORDER="ingest,extract,normalize,anchor,publish,verify,finalize"
`, ""))
		if d := r.Resumable; d.StageOrderSource != "STAGE_ORDER" || d.PlanNote != "" || d.PlanPath != "" {
			t.Errorf("source %s note %q", d.StageOrderSource, d.PlanNote)
		}
	})
}

// A plan that is missing, unreadable, not a regular file, too large, or says nothing that settles the order
// is no evidence: the order stays open, step's refusal stands, and the files say why.
func TestLoadPlanThatIsNoEvidence(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.md")
	writeFile(t, big, pipelinePlan+strings.Repeat("x", maxPlanSize))
	prose := filepath.Join(dir, "prose.md")
	writeFile(t, prose, "We ingest, then extract the text and normalize it; anchor, publish, verify and finalize follow.\n")
	twice := filepath.Join(dir, "twice.md")
	writeFile(t, twice, pipelinePlan+"\n1. ingest\n2. extract\n3. normalize\n4. publish\n5. anchor\n6. verify\n7. finalize\n")
	for _, tc := range []struct{ path, note string }{
		{filepath.Join(dir, "gone.md"), "the plan at PLAN_PATH " + filepath.Join(dir, "gone.md") + " is not on this machine"},
		{fifo, "the plan " + fifo + " is a named pipe (FIFO), so it is not read"},
		{dir, "the plan " + dir + " is a directory, so it is not read"},
		{big, "the plan " + big + " is not read: file is"},
		{prose, "the plan prose.md names the stages (anchor, extract, finalize, ingest, normalize, publish, verify) in no one line or list in one order, so it settles nothing"},
		{twice, "the plan twice.md names the stages in two orders (line 3 names ingest, extract, normalize, anchor, publish, verify, finalize but lines 5–11 names ingest, extract, normalize, publish, anchor, verify, finalize), so it settles nothing"},
	} {
		r := load(t, planRun(t, `PLAN_PATH="`+tc.path+`"
`, ""))
		d := r.Resumable
		p := findProblem(r, model.CodeStageOrderUnknown)
		if d.StageOrderSource == "plan" || !d.StageOrderUncertain || !strings.Contains(d.PlanNote, tc.note) ||
			p == nil || p.Severity != model.SeverityWarning || !strings.Contains(p.Message, tc.note) ||
			!strings.Contains(strings.Join(d.StageOrderEvidence, "; "), tc.note) {
			t.Errorf("%s: source %s note %q problem %+v", filepath.Base(tc.path), d.StageOrderSource, d.PlanNote, p)
		}
		if _, ok := d.NextStage("anchor"); ok {
			t.Errorf("%s: a successor of anchor without evidence", filepath.Base(tc.path))
		}
	}
	// No PLAN_PATH: today's refusal, with nothing said about a plan.
	r := load(t, planRun(t, "", ""))
	if p := findProblem(r, model.CodeStageOrderUnknown); p == nil || strings.Contains(p.Message, "plan") || r.Resumable.PlanNote != "" {
		t.Errorf("no PLAN_PATH: %+v note %q", p, r.Resumable.PlanNote)
	}
}
