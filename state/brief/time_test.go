package brief

import (
	"strings"
	"testing"
	"time"

	"runwatch/model"
)

// TestBriefSaysHowLongTheStageUsuallyTakes: a run judged with the history of its task's past runs gets a
// Time line under "Where to restart"; without history it says none says how long the stage takes. It gives
// no time left: the run is paused, and its stage's time run grows while nothing runs it (model.Run.ETA).
func TestBriefSaysHowLongTheStageUsuallyTakes(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
	mk := func(key string, s1, s2 model.StageStatus, started, ended *time.Time, s2s, s2e *time.Time) model.Run {
		r := model.Run{ID: key, Kind: model.KindResumable, StatePath: "/r/" + key + "/state.env", CurrentStage: "S1",
			Resumable: &model.ResumableDetail{TaskName: "mine"},
			Stages: []model.Stage{{Key: "S1", Status: s1, StartedAt: started, CompletedAt: ended},
				{Key: "S2", Status: s2, StartedAt: s2s, CompletedAt: s2e}}}
		model.FinalizeRun(&r)
		return r
	}
	h := model.NewHistory()
	past := mk("past", model.StageCompleted, model.StageCompleted, at(-3*time.Hour), at(-3*time.Hour+4*time.Minute),
		at(-3*time.Hour+4*time.Minute), at(-3*time.Hour+14*time.Minute))
	h.Observe(&past)
	now := t0.Add(time.Minute)
	run := mk("now", model.StagePending, model.StagePending, at(0), nil, nil, nil)
	model.JudgeTime(&run, now, model.LivenessRules{}, h)
	md := BuildWith(run, model.Env{Now: now}, Options{}).Markdown()
	if want := "Time: stage S1 has run 1m; it usually takes 4m (1 run)\n"; !strings.Contains(md, want) {
		t.Fatalf("brief lacks %q:\n%s", want, md)
	}
	alone := mk("alone", model.StagePending, model.StagePending, at(0), nil, nil, nil)
	model.JudgeTime(&alone, now, model.LivenessRules{}, model.NewHistory())
	if md := BuildWith(alone, model.Env{Now: now}, Options{}).Markdown(); !strings.Contains(md, "no past run of this task says how long it takes") {
		t.Fatalf("brief without history:\n%s", md)
	}
}
