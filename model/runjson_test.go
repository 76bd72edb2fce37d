package model

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestStageJSONAsReflection: a stage written field by field is byte for byte what encoding/json made of it
// by reflection (the encoding it replaced), for stages with every field empty, set, hostile or out of range.
func TestStageJSONAsReflection(t *testing.T) {
	// The stage as encoding/json wrote it, when its rarely set fields were in line: the order of the JSON.
	reflected := func(s Stage) ([]byte, error) {
		r := s.Rare()
		return json.Marshal(struct {
			Key              string          `json:"key"`
			Name             string          `json:"name"`
			Status           StageStatus     `json:"status"`
			Error            string          `json:"error"`
			SkipReason       string          `json:"skip_reason,omitempty"`
			Checklist        []ChecklistItem `json:"checklist"`
			RawStatus        string          `json:"raw_status,omitempty"`
			DoneKey          string          `json:"done_key,omitempty"`
			ChecklistDoneKey string          `json:"checklist_done_key,omitempty"`
			ChecklistDone    *bool           `json:"checklist_done,omitempty"`
			OutputFiles      []OutputFile    `json:"output_files,omitempty"`
			OrderUnknown     bool            `json:"order_unknown,omitempty"`
			Checkpoint       *Checkpoint     `json:"checkpoint,omitempty"`
			Warnings         []string        `json:"warnings,omitempty"`
			Timing           *StageTiming    `json:"timing,omitzero"`
			StartedAt        any             `json:"started_at"`
			CompletedAt      any             `json:"completed_at"`
		}{s.Key, s.Name, s.Status, r.Error, r.SkipReason, s.Checklist, r.RawStatus, s.DoneKey, s.ChecklistDoneKey,
			s.ChecklistDone, r.OutputFiles, r.OrderUnknown, s.Checkpoint, r.Warnings, s.Timing,
			jsonTime(s.StartedAt, r.StartedText), jsonTime(s.CompletedAt, r.CompletedText)})
	}
	at := time.Date(2026, 12, 1, 9, 30, 0, 120000000, time.UTC)
	east := time.Date(2026, 12, 1, 9, 30, 0, 5, time.FixedZone("", 5*3600+1800))
	far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	yes, no := true, false
	n, zero, neg := int64(208), int64(0), int64(-3)
	size := int64(44)
	hostile := "S1 \"quoted\" \\ <b>&amp;</b> \n\t\x00\x1b[31m \u009b \u202e \u2028 caf\u00e9 \xff\xfe"
	stages := []Stage{
		{},
		{Key: "M0", Name: "M0", Status: StageCompleted, Checklist: []ChecklistItem{}},
		Stage{Key: "S1", Name: "Stage one", Status: StageRunning, StartedAt: &at, CompletedAt: &east,
			Checklist: []ChecklistItem{{Key: "CB_S1_A", Done: true}, {Key: "CB_S1_B", Raw: "yes"}},
			DoneKey:   "S1_DONE", ChecklistDoneKey: "S1_CHECKLIST_DONE", ChecklistDone: &no,
			Checkpoint: &Checkpoint{dir: "/r/artifacts/checkpoints", name: "S1.done.json", Stage: "S1", Status: "complete", Timestamp: &at},
			Timing: &StageTiming{Started: &at, Ended: &east, UsualMedianSeconds: &n, UsualP90Seconds: &zero,
				UsualLowSeconds: &neg, UsualHighSeconds: &n, Runs: 3, ElapsedSeconds: &n}}.WithRare(StageRare{
			StartedText: "2026-12-01T09:30:00.120Z", OrderUnknown: true, Error: "boom", SkipReason: "skipped", RawStatus: "weird",
			OutputFiles: []OutputFile{{Path: "/o/a.json", Type: "json", Size: &size, CreatedAt: &at, CreatedText: "2026-12-01T09:30:00.120Z"}, {Path: "b"}},
			Warnings:    []string{"reopens", hostile}}),
		Stage{Key: hostile, Name: hostile, Status: StageStatus(hostile),
			Checklist: []ChecklistItem{{Key: hostile, Raw: hostile}}, ChecklistDone: &yes, StartedAt: &at,
			Checkpoint: &Checkpoint{dir: hostile}, Timing: &StageTiming{Runs: -1}}.WithRare(StageRare{Error: hostile, RawStatus: hostile, StartedText: hostile}),
		Stage{Key: "T", Timing: &StageTiming{}, StartedAt: &east, CompletedAt: &at}.WithRare(StageRare{CompletedText: "not a time"}),
		{Key: "F", StartedAt: &far},
	}
	for i, s := range stages {
		want, werr := reflected(s)
		got, gerr := s.MarshalJSON()
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("stage %d: error %v, reflection's %v", i, gerr, werr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("stage %d:\ngot  %s\nwant %s", i, got, want)
		}
		// Inside a run, as status writes it.
		r := Run{ID: "r", Stages: []Stage{s, s}}
		if _, err := json.Marshal(r); (err != nil) != (werr != nil) {
			t.Fatalf("stage %d in a run: %v", i, err)
		}
	}
}

// TestCheckpointJSONAsReflection: a checkpoint holding its folder and name apart writes (and reads back) the
// JSON encoding/json made of it when it held its path whole.
func TestCheckpointJSONAsReflection(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 30, 0, 120000000, time.UTC)
	hostile := "S1 \"quoted\" \\ <b>&amp;</b> \n\t\x00\x1b[31m \u009b \u202e \u2028 caf\u00e9 \xff\xfe"
	in := CheckpointIn("/r/artifacts/checkpoints", "S1.done.json")
	in.Stage, in.Status, in.Timestamp = "S1", "complete", &at
	for i, c := range []Checkpoint{in, NewCheckpoint(hostile, hostile, hostile, nil), {}} {
		want, _ := json.Marshal(struct {
			File      string     `json:"file"`
			Stage     string     `json:"stage"`
			Status    string     `json:"status"`
			Timestamp *time.Time `json:"timestamp"`
		}{c.File(), c.Stage, c.Status, c.Timestamp})
		got, err := json.Marshal(c)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("checkpoint %d: %s (%v)\nwant %s", i, got, err, want)
		}
		if c.Stage == hostile {
			continue // not UTF-8: read back as U+FFFD
		}
		var back Checkpoint
		err = json.Unmarshal(got, &back)
		again, _ := json.Marshal(back)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("checkpoint %d read back as %s (%v)", i, again, err)
		}
	}
	if got := in.File(); got != "/r/artifacts/checkpoints/S1.done.json" {
		t.Errorf("path %q", got)
	}
}
