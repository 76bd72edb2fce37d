package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/model"
)

// TestFullUndoRestoresJudgement: on a run blocked at its gate (stage_blocked is run.log's latest word on its
// current stage), tick + step + undo + undo restores the files byte for byte, and the lines those actions
// left in run.log (a stage_complete of runwatch's, two runwatch_undo) must not change the judgement: the run
// is blocked and needs you again, as before.
func TestFullUndoRestoresJudgement(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	dir := filepath.Dir(sp)
	mustWrite(t, filepath.Join(dir, "checklist.state.env"), strings.Replace(checklistEnv, `CB_S2_VERIFY_GREEN="1"`, `CB_S2_VERIFY_GREEN="0"`, 1))
	mustWrite(t, filepath.Join(dir, "run.log"), runLog+"[2026-02-15T02:10:00Z] stage_start stage=S2\n"+
		"[2026-02-15T02:20:00Z] stage_blocked stage=S2 failed_metrics=CB_S2_VERIFY_GREEN\n")
	env := realEnv()
	o := opts(t, env)
	before := load(t, sp, env)
	if before.Attention.Code != model.AttentionStageBlocked || !before.Attention.NeedsYou {
		t.Fatalf("before: attention %+v, want stage-blocked needing you", before.Attention)
	}
	files := map[string]string{}
	for _, f := range []string{"state.env", "checklist.state.env"} {
		files[f] = mustRead(t, filepath.Join(dir, f))
	}

	steps := []func(model.Run) (*Plan, error){
		func(r model.Run) (*Plan, error) { return PlanCheck(r, "CB_S2_VERIFY_GREEN", true, o) },
		func(r model.Run) (*Plan, error) { return PlanStep(r, "", o) },
		func(r model.Run) (*Plan, error) { return PlanUndo(r, o) },
		func(r model.Run) (*Plan, error) { return PlanUndo(r, o) },
	}
	for i, plan := range steps {
		p, err := plan(load(t, sp, env))
		if err != nil {
			t.Fatalf("action %d refused: %v", i, err)
		}
		if err := Apply(p, ApplyOptions{}); err != nil {
			t.Fatalf("action %d (%s): %v", i, p.Action, err)
		}
		if i == 1 {
			if mid := load(t, sp, env); mid.CurrentStage != "S3" || mid.Attention.Code == model.AttentionStageBlocked {
				t.Fatalf("after step: current %s, attention %+v; want S3, no longer blocked", mid.CurrentStage, mid.Attention)
			}
		}
	}
	for f, want := range files {
		if got := mustRead(t, filepath.Join(dir, f)); got != want {
			t.Fatalf("%s not restored:\n%s\nwant\n%s", f, got, want)
		}
	}
	log, _ := os.ReadFile(filepath.Join(dir, "run.log"))
	if strings.Count(string(log), "runwatch_undo") != 2 || !strings.Contains(string(log), "stage_complete stage=S2") {
		t.Fatalf("run.log does not hold the actions' lines:\n%s", log)
	}
	after := load(t, sp, env)
	if after.Attention != before.Attention || after.Status != before.Status {
		t.Fatalf("after a full undo: status %s, attention %+v\nwant status %s, attention %+v", after.Status, after.Attention, before.Status, before.Attention)
	}
	if s := after.Stage("S2"); s == nil || s.Status != model.StageFailed {
		t.Fatalf("S2 after undo: %+v, want failed (blocked)", s)
	}
}
