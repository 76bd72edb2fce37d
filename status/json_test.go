package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/sim"
	"runwatch/state"
	"runwatch/state/fixturetest"
	"runwatch/termsafe"
)

// The runs of status --json are encoded in parallel and stitched together; a parser and a diff must see
// exactly what json.Encoder wrote before, for every fixture run (good, bad and hostile) and for none.
func TestWriteSnapshotJSONMatchesEncoder(t *testing.T) {
	env := state.NewEnv(0)
	env.Now = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	locs, err := state.Discover([]string{"../testdata"}, 0)
	if _, err = state.SplitUnreadable(err); err != nil {
		t.Fatal(err)
	}
	runs := fixturetest.LoadAll(locs, env)
	if len(runs) < 10 {
		t.Fatalf("only %d fixture runs found", len(runs))
	}
	// A string a terminal would act on, to check the escaping of each stitched part.
	runs[0].Title = "title \u009b31m with C1 and \u202e bidi <&>"
	for _, rs := range [][]model.Run{runs, runs[:1], nil} {
		snap := Snapshot(append([]model.Run(nil), rs...), env)
		var encoded bytes.Buffer
		enc := json.NewEncoder(&encoded)
		enc.SetIndent("", "  ")
		if err := enc.Encode(snap); err != nil {
			t.Fatal(err)
		}
		want := bytes.NewBuffer(termsafe.JSON(encoded.Bytes()))
		var got bytes.Buffer
		if err := WriteSnapshotJSON(&got, snap); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			i := 0
			for i < min(got.Len(), want.Len()) && got.Bytes()[i] == want.Bytes()[i] {
				i++
			}
			t.Fatalf("%d runs: output differs from json.Encoder at byte %d:\ngot  %q\nwant %q", len(rs), i,
				got.Bytes()[max(0, i-80):min(got.Len(), i+80)], want.Bytes()[max(0, i-80):min(want.Len(), i+80)])
		}
	}
}

// status --json leaves out what holds nothing: a timing field with no value, a stage's timing when the stage
// has not started and no past run finished it, a run's timing with nothing but its task. What is there is
// the documented field names.
func TestStatusJSONTimingHoldsNoNulls(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	runs, env := orderRuns(t, now)
	out := NewOut("json", env.Now, env.Liveness)
	for _, r := range runs {
		out.Add(r)
	}
	var b bytes.Buffer
	if _, err := out.Print(&b, "attention", Snapshot([]model.Run{}, env), 0); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			ID     string         `json:"id"`
			Timing map[string]any `json:"timing"`
			Stages []map[string]any
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	runFields := map[string]bool{"task": true, "started": true, "elapsed_seconds": true, "eta_seconds": true, "runs": true,
		"remaining_after_current_seconds": true}
	stageFields := map[string]bool{"started": true, "ended": true, "elapsed_seconds": true, "usual_median_seconds": true,
		"usual_p90_seconds": true, "usual_low_seconds": true, "usual_high_seconds": true, "runs": true}
	check := func(where string, timing any, fields map[string]bool) {
		m, ok := timing.(map[string]any)
		if !ok {
			t.Errorf("%s: timing %v is not an object", where, timing)
			return
		}
		for k, v := range m {
			if v == nil || !fields[k] {
				t.Errorf("%s: timing field %q = %v (null, or not a documented field)", where, k, v)
			}
		}
	}
	withTiming, without, stagesWithout := 0, 0, 0
	for _, r := range doc.Runs {
		if r.Timing == nil {
			without++
		} else {
			withTiming++
			check(r.ID, r.Timing, runFields)
			if len(r.Timing) == 1 {
				t.Errorf("%s: a timing with nothing but its task %v", r.ID, r.Timing)
			}
		}
		for i, s := range r.Stages {
			timing, ok := s["timing"]
			if !ok {
				stagesWithout++
				continue
			}
			check(fmt.Sprintf("%s stage %d", r.ID, i), timing, stageFields)
		}
	}
	if withTiming == 0 || without == 0 || stagesWithout == 0 {
		t.Errorf("runs with timing %d, without %d; stages without %d: the fixtures have both kinds", withTiming, without, stagesWithout)
	}
}

// TestRunJSONAsReflection: a run written field by field (model.Run.MarshalJSON) is byte for byte what
// encoding/json made of it by reflection (the encoding it replaced), for the fixture runs (good, bad and
// hostile), generated runs of both conventions, and runs with every optional part set or hostile.
func TestRunJSONAsReflection(t *testing.T) {
	reflected := func(r model.Run) ([]byte, error) {
		type plain model.Run
		var updated any = r.UpdatedAt // as model's jsonTime: the file's text when kept
		if r.UpdatedText != "" {
			updated = r.UpdatedText
		}
		return json.Marshal(struct {
			plain
			UpdatedAt any `json:"updated_at"`
		}{plain(r), updated})
	}
	env := state.NewEnv(0)
	env.Now = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	if _, err := sim.GenerateRuns(dir, 30); err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover([]string{"../testdata", dir}, 0)
	if _, err = state.SplitUnreadable(err); err != nil {
		t.Fatal(err)
	}
	runs := fixturetest.LoadAll(locs, env)
	if len(runs) < 40 {
		t.Fatalf("only %d runs read", len(runs))
	}
	hostile := "t \"q\" \\ <b>&</b> \n\x1b[31m \u009b \u202e \u2028 caf\u00e9 \xff"
	since := env.Now.Add(-time.Minute)
	extra := runs[0]
	extra.Title, extra.ProjectRoot, extra.Archived, extra.CrashSigns = hostile, hostile, true, []string{hostile, "x"}
	extra.Remote = &model.RemoteRef{Host: hostile, Root: "ssh://h/r", StaleSince: &since}
	extra.AgentPane = &model.AgentPane{Host: "h", PID: 7, Session: hostile, PaneID: "%3"}
	extra.UpdatedText = "2026-12-01T08:59:00.000Z"
	extra.UpdatedAt = env.Now.Add(-time.Minute)
	ts := env.Now.Add(-time.Hour)
	extra.Resumable = &model.ResumableDetail{RunID: hostile, TaskName: hostile, ChecklistPath: hostile, LockFile: hostile,
		Keys: model.PackKVs([]model.KV{{Key: hostile, Value: hostile}}), ChecklistKeys: model.PackKVs([]model.KV{}), ResumeHint: hostile, ResumeTarget: "S2",
		LastCompleted: "S1", Checkpoints: []model.Checkpoint{model.NewCheckpoint(hostile, "S1", "", &ts), {}},
		Ledger: []model.LedgerRow{{}}, Artifacts: []string{hostile}, StageOrderSource: hostile, PlanPath: hostile, PlanNote: hostile,
		StageOrderUncertain: true, StageOrderEvidence: []string{hostile}, StageNext: model.PackStageLinks(map[string]string{"S2": "S3", "S1": hostile}),
		ReopensWithoutCheckpoint: true, CheckpointDir: hostile, LastError: hostile,
		Blocked: &model.StageBlocked{Stage: "S2", FailedMetrics: []string{hostile}, Message: hostile, Time: &ts}}
	secs := int64(-7)
	extra.Timing = &model.RunTiming{Task: hostile, Started: &ts, RemainingSeconds: &secs, Runs: 2, ElapsedSeconds: &secs, ETASeconds: &secs}
	extra.Log = &model.LogRef{Path: hostile, SizeBytes: 7, Undone: []string{hostile}}
	extra.Flags = []model.Flag{{Group: hostile, Name: hostile, Value: true, Raw: hostile}, {}}
	extra.Problems = []model.Problem{{Severity: model.SeverityError, Code: hostile, Message: hostile, Path: hostile}, {}}
	extra.Gates = []model.Gate{{Name: hostile, Status: hostile, Blocked: true, Detail: hostile}, {}}
	extra.Attention = model.Attention{NeedsYou: true, Rank: -3, Code: hostile, Reason: hostile, Action: model.Action(hostile), Command: hostile}
	bare := model.Run{ID: hostile, Resumable: &model.ResumableDetail{}}
	runs = append(runs, extra, bare)
	for _, r := range append(runs, Snapshot(runs, env).Runs...) {
		want, werr := reflected(r)
		got, gerr := r.MarshalJSON()
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%s: error %v, reflection's %v", r.ID, gerr, werr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Fatalf("%s: differs at byte %d:\ngot  %q\nwant %q", r.ID, i, got[max(0, i-80):min(len(got), i+80)],
				want[max(0, i-80):min(len(want), i+80)])
		}
	}
}
