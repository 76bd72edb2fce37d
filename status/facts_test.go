package status

import (
	"encoding/json"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/sim"
	"runwatch/state"
	"runwatch/state/fixturetest"
)

// TestFactsBinaryJudgeAsJSONDid: the time facts status spills for each run, in their binary form, judge
// every run as their JSON form did (status used JSON until issue 35): the same facts after the trip, the
// same judgement by the clock and the history, for generated runs of both conventions, the fixtures (good,
// bad and hostile) and a stage time in a zone other than UTC. A cut or altered form is an error, not a guess.
func TestFactsBinaryJudgeAsJSONDid(t *testing.T) {
	dir := t.TempDir()
	if _, err := sim.GenerateRuns(dir, 60); err != nil {
		t.Fatal(err)
	}
	env := state.NewEnv(0)
	env.Now = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	locs, err := state.Discover([]string{dir, "../testdata"}, 0)
	if _, err = state.SplitUnreadable(err); err != nil {
		t.Fatal(err)
	}
	runs := fixturetest.LoadAll(locs, env)
	if len(runs) < 60 {
		t.Fatalf("only %d runs read", len(runs))
	}
	east := time.Date(2026, 11, 30, 23, 15, 0, 5, time.FixedZone("", 5*3600+1800))
	runs[0].Stages = append(runs[0].Stages, model.Stage{Key: "Z9", StartedAt: &east, Status: model.StageRunning})
	runs[0].CurrentStage = "Z9"
	h := model.NewHistory()
	for i := range runs {
		h.Keep(&runs[i])
	}
	for _, r := range runs {
		f := model.FactsOf(&r)
		js, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var viaJSON, viaBinary model.TimeFacts
		if err := json.Unmarshal(js, &viaJSON); err != nil {
			t.Fatal(err)
		}
		bin, err := f.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := viaBinary.UnmarshalBinary(bin); err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		a, _ := json.Marshal(viaJSON)
		b, _ := json.Marshal(viaBinary)
		if string(a) != string(b) {
			t.Fatalf("%s: facts after the trip differ:\njson   %s\nbinary %s", r.ID, a, b)
		}
		ja, _ := json.Marshal(viaJSON.Judge(env.Now, env.Liveness, h))
		jb, _ := json.Marshal(viaBinary.Judge(env.Now, env.Liveness, h))
		if string(ja) != string(jb) {
			t.Fatalf("%s: judged differently:\njson   %s\nbinary %s", r.ID, ja, jb)
		}
		for cut := range len(bin) {
			var g model.TimeFacts
			if g.UnmarshalBinary(bin[:cut]) == nil {
				t.Fatalf("%s: the facts cut at %d of %d bytes read without error", r.ID, cut, len(bin))
			}
		}
		if (&model.TimeFacts{}).UnmarshalBinary(append(bin, 0)) == nil {
			t.Fatalf("%s: the facts with a byte more read without error", r.ID)
		}
	}
}
