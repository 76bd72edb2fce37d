package model

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// In JSON a timing leaves out what it does not know, and is left out whole when it knows nothing: a stage
// not started that no past run finished, a run's timing with nothing but its task.
func TestTimingJSONLeavesOutWhatItDoesNotKnow(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	started := now.Add(-12 * time.Minute)
	r := Run{ID: "r", Kind: KindResumable, CurrentStage: "S1", Resumable: &ResumableDetail{TaskName: "t"},
		Stages: []Stage{{Key: "S1", Status: StageRunning, StartedAt: &started}, {Key: "S2", Status: StagePending}}}
	JudgeTime(&r, now, LivenessRules{}, NewHistory())
	TimingAt(&r, now)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Timing map[string]any   `json:"timing"`
		Stages []map[string]any `json:"stages"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Stages[0]["timing"]; !jsonEqual(got, `{"started":"2026-12-01T08:48:00Z","elapsed_seconds":720}`) {
		t.Errorf("the running stage's timing %v", got)
	}
	if got, ok := doc.Stages[1]["timing"]; ok {
		t.Errorf("a stage not started with no history has a timing %v", got)
	}
	if !jsonEqual(doc.Timing, `{"task":"resumable:t","started":"2026-12-01T08:48:00Z","elapsed_seconds":720}`) {
		t.Errorf("the run's timing %v", doc.Timing)
	}

	// Done, with no history: the run's timing knows nothing but its task.
	done := Run{ID: "d", Kind: KindResumable, Resumable: &ResumableDetail{TaskName: "t"}, Stages: []Stage{{Key: "S1", Status: StageSkipped}}}
	JudgeTime(&done, now, LivenessRules{}, NewHistory())
	TimingAt(&done, now)
	if b, _ := json.Marshal(done); strings.Contains(string(b), `"timing"`) || strings.Contains(string(b), "usual_") {
		t.Errorf("a run whose timing knows nothing: %s", b)
	}
}

func jsonEqual(v any, want string) bool {
	var w any
	if json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	a, _ := json.Marshal(v)
	c, _ := json.Marshal(w)
	return string(a) == string(c)
}
