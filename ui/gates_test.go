// Tests of how Detail reads open checklists and gates of paused runs.

package ui

import (
	"strings"
	"testing"

	"runwatch/model"
	"runwatch/ui/app"
)

// An ordinary paused run whose current stage has open items is not a warning (issue 13: every paused run
// showed "⚠ blocked stage-checklist"); a feedback gate that blocks still is.
func TestOpenChecklistOfAPausedRunIsNotAWarning(t *testing.T) {
	t.Parallel()
	run := model.Run{ID: "irm-calm-20261201T080000Z", Kind: model.KindResumable, Dir: "/r/irm-calm", StatePath: "/r/irm-calm/state.env",
		CurrentStage: "S2", Stages: []model.Stage{{Key: "S1", Status: model.StageCompleted}, {Key: "S2", Status: model.StagePending}},
		Gates: []model.Gate{{Name: "stage-checklist", Status: "open", Blocked: true, Detail: "S2: 1 of 2"},
			{Name: "feedback-loop", Status: "blocked", Blocked: true}}}
	model.FinalizeRun(&run)
	if run.Attention.NeedsYou {
		t.Fatalf("the fixture should not need anyone: %+v", run.Attention)
	}
	out := plain(newTestModel(t, 140, 40, []model.Run{run}, app.Options{}))
	if !strings.Contains(out, "○ stage-checklist: open") {
		t.Errorf("the open checklist is not shown calmly:\n%s", out)
	}
	if strings.Contains(out, "⚠ blocked stage-checklist") {
		t.Errorf("the open checklist of a paused run is shown as a warning:\n%s", out)
	}
	if !strings.Contains(out, "⚠ blocked feedback-loop") {
		t.Errorf("a blocking feedback gate lost its warning:\n%s", out)
	}
}
