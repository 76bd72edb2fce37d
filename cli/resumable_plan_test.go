package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"runwatch/model"
	"runwatch/state/brief"
)

// c1Planned is the mining tool's run paused in anchor (its second checklist item open), written as the tool
// writes it: PLAN_PATH and REPO_ROOT name the repository on the machine that ran it, LAST_UPDATED_AT_UTC
// is set on every save, no stage_start lines. Its plan is testdata/resumable-c1/repo/plans/….
const (
	c1Planned  = "iso26262-mining-20260306T090000Z"
	c1PlanFile = "2026-02-15-hierarchical-pdf-mining-corpus-plan.md"
	c1RepoRoot = "/home/u/src/iso-26262-rust-mapping"
)

// c1WithPlan points the run's REPO_ROOT and PLAN_PATH at the copy of the repository in the test tree, as on
// the machine that holds both.
func c1WithPlan(t *testing.T, reports string) string {
	t.Helper()
	sp := filepath.Join(reports, c1Planned, "state.env")
	repo := filepath.Join(filepath.Dir(reports), "repo")
	if err := os.WriteFile(sp, []byte(strings.ReplaceAll(envOf(t, sp), c1RepoRoot, repo)), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(repo, "plans", c1PlanFile)
}

// Issue 27 point 1: without its plan here, the mining run's order stays open and step is refused, saying
// why the plan is no evidence; with the real plan, the stages read in the tool's order, status says where
// the order came from, and step from anchor moves to publish.
func TestC1StageOrderFromThePlan(t *testing.T) {
	t.Parallel()
	reports, cfg, e := c1Tree(t, "")
	dir := filepath.Join(reports, c1Planned)
	sp := filepath.Join(dir, "state.env")

	run := c1Status(t, e, reports, cfg)[c1Planned]
	if run.Resumable.StageOrderSource == "plan" || !run.Resumable.StageOrderUncertain {
		t.Fatalf("no plan here: source %s, stages %s", run.Resumable.StageOrderSource, stageKeysOf(run))
	}
	missing := "the plan at PLAN_PATH " + c1RepoRoot + "/plans/" + c1PlanFile + " is not on this machine"
	if !c1HasProblem(run, model.SeverityWarning, model.CodeStageOrderUnknown, "the stage after anchor is not known", missing, "--to") {
		t.Errorf("problems %+v", run.Problems)
	}
	// The gate holds first: anchor's second item is open.
	code, _, errOut := runCmd(e, "step", "--config", cfg, dir, "--dry-run")
	if code != exitRefused || !strings.Contains(errOut, "CB_ANCHOR_DEDUP_CHECK_PASS=0") {
		t.Fatalf("step with an open item: exit %d, stderr %s", code, errOut)
	}
	before := envOf(t, sp)
	if code, _, errOut = runCmd(e, "check", "--config", cfg, dir, "CB_ANCHOR_DEDUP_CHECK_PASS", "--yes"); code != 0 {
		t.Fatalf("check: exit %d, stderr %s", code, errOut)
	}
	if envOf(t, sp) != before {
		t.Error("check wrote state.env")
	}
	code, _, errOut = runCmd(e, "step", "--config", cfg, dir, "--dry-run")
	if code != exitRefused || !containsAll(errOut, []string{"the stage after anchor is not known", missing}) {
		t.Fatalf("step --dry-run without the plan: exit %d, stderr %s", code, errOut)
	}

	plan := c1WithPlan(t, reports)
	before = envOf(t, sp)
	run = c1Status(t, e, reports, cfg)[c1Planned]
	d := run.Resumable
	if got := stageKeysOf(run); got != c1Pipeline || d.StageOrderSource != "plan" || d.PlanPath != plan {
		t.Fatalf("with the plan: stages %s source %s plan %s", got, d.StageOrderSource, d.PlanPath)
	}
	if strings.Join(d.StageOrderEvidence, "; ") != "order from the plan "+c1PlanFile+", lines 27, 35–41 and 57" {
		t.Errorf("evidence %q", d.StageOrderEvidence)
	}
	if c1HasProblem(run, model.SeverityWarning, model.CodeStageOrderUnknown) || c1HasProblem(run, model.SeverityInfo, model.CodeStageOrderUnknown) {
		t.Errorf("problems %+v", run.Problems)
	}

	// Point 3: the step's confirmation shows LAST_UPDATED_AT_UTC set beside the change, in the tool's format.
	code, out, errOut := runCmd(e, "step", "--config", cfg, dir, "--dry-run")
	stamp := regexp.MustCompile(`\+LAST_UPDATED_AT_UTC="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"`)
	if code != 0 || !containsAll(out, []string{`+CURRENT_STAGE="publish"`, `+S_ANCHOR_DONE="1"`, `-LAST_UPDATED_AT_UTC="2026-03-06T11:30:04Z"`}) ||
		!stamp.MatchString(out) {
		t.Fatalf("step --dry-run: exit %d, stdout %s stderr %s", code, out, errOut)
	}
	if envOf(t, sp) != before {
		t.Fatal("--dry-run wrote state.env")
	}
	if code, _, errOut = runCmd(e, "step", "--config", cfg, dir, "--yes"); code != 0 {
		t.Fatalf("step: exit %d, stderr %s", code, errOut)
	}
	st := envOf(t, sp)
	for _, want := range []string{`CURRENT_STAGE="publish"`, `S_ANCHOR_DONE="1"`} {
		if !strings.Contains(st, want) {
			t.Errorf("state.env lacks %s:\n%s", want, st)
		}
	}
	// The tool keeps no LAST_COMPLETED_STAGE; one added here would go stale at its next stage.
	if strings.Contains(st, "LAST_COMPLETED_STAGE") {
		t.Errorf("step added LAST_COMPLETED_STAGE:\n%s", st)
	}
	if !stamp.MatchString("+"+regexp.MustCompile(`(?m)^LAST_UPDATED_AT_UTC=.*$`).FindString(st)) || strings.Contains(st, "2026-03-06T11:30:04Z") {
		t.Errorf("LAST_UPDATED_AT_UTC not set by step:\n%s", st)
	}
	if log := envOf(t, filepath.Join(dir, "run.log")); !strings.Contains(log, "stage_complete stage=anchor next=publish") {
		t.Errorf("run.log:\n%s", log)
	}
}

// Issue 27 point 2: the brief of the mining run paused in anchor names its one open item, and what it needs
// in the plan's words (the plan's key catalog and its line about that key, wrapped); without the plan here
// it says no run file says.
func TestC1BriefNamesOpenItems(t *testing.T) {
	t.Parallel()
	reports, cfg, e := c1Tree(t, "")
	dir := filepath.Join(reports, c1Planned)
	b := c1Brief(t, e, cfg, dir)
	items := b.Resumable.OpenItems
	if len(items) != 1 || items[0].Key != "CB_ANCHOR_DEDUP_CHECK_PASS" || items[0].Stage != "anchor" || len(items[0].Needs) != 0 {
		t.Fatalf("without the plan: %+v", items)
	}
	plan := c1WithPlan(t, reports)
	b = c1Brief(t, e, cfg, dir)
	items = b.Resumable.OpenItems
	const catalog = "`anchor` keys: `CB_ANCHOR_IDS_WRITTEN`, `CB_ANCHOR_DEDUP_CHECK_PASS`, `CB_ANCHOR_SUMMARY_WRITTEN`."
	const check = "`CB_ANCHOR_DEDUP_CHECK_PASS`: no two units share an anchor id; `anchor-summary.json` reports zero " +
		"duplicates and the unit-link and anchor-link counts are equal."
	if len(items) != 1 || len(items[0].Needs) != 2 ||
		items[0].Needs[0] != (brief.ItemNote{Source: "plan", File: plan, Line: 38, Text: catalog}) ||
		items[0].Needs[1] != (brief.ItemNote{Source: "plan", File: plan, Line: 46, Text: check}) {
		t.Fatalf("with the plan: %+v", items)
	}
	code, out, errOut := runCmd(e, "brief", "--config", cfg, dir)
	if code != 0 || !containsAll(out, []string{"2 of its 3 checklist items are ticked; open: CB_ANCHOR_DEDUP_CHECK_PASS",
		"stage `anchor`: `CB_ANCHOR_DEDUP_CHECK_PASS`", "the plan " + c1PlanFile + ", line 46: “" + check + "”"}) {
		t.Errorf("brief: exit %d, stderr %s\n%s", code, errOut, out)
	}
}
