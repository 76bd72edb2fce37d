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
	reflected := func(s Stage) ([]byte, error) {
		type plain Stage
		return json.Marshal(struct {
			plain
			StartedAt   any `json:"started_at"`
			CompletedAt any `json:"completed_at"`
		}{plain(s), jsonTime(s.StartedAt, s.StartedText), jsonTime(s.CompletedAt, s.CompletedText)})
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
		{Key: "S1", Name: "Stage one", Status: StageRunning, StartedAt: &at, StartedText: "2026-12-01T09:30:00.120Z",
			CompletedAt: &east, Error: "boom", SkipReason: "skipped", RawStatus: "weird",
			Checklist: []ChecklistItem{{Key: "CB_S1_A", Done: true}, {Key: "CB_S1_B", Raw: "yes"}},
			DoneKey:   "S1_DONE", ChecklistDoneKey: "S1_CHECKLIST_DONE", ChecklistDone: &no, OrderUnknown: true,
			OutputFiles: []OutputFile{{Path: "/o/a.json", Type: "json", Size: &size, CreatedAt: &at, CreatedText: "2026-12-01T09:30:00.120Z"}, {Path: "b"}},
			Checkpoint:  &Checkpoint{File: "/r/artifacts/checkpoints/S1.done.json", Stage: "S1", Status: "complete", Timestamp: &at},
			Warnings:    []string{"reopens", hostile},
			Timing: &StageTiming{Started: &at, Ended: &east, UsualMedianSeconds: &n, UsualP90Seconds: &zero,
				UsualLowSeconds: &neg, UsualHighSeconds: &n, Runs: 3, ElapsedSeconds: &n}},
		{Key: hostile, Name: hostile, Status: StageStatus(hostile), Error: hostile, RawStatus: hostile,
			Checklist: []ChecklistItem{{Key: hostile, Raw: hostile}}, ChecklistDone: &yes, StartedAt: &at, StartedText: hostile,
			Checkpoint: &Checkpoint{File: hostile}, Timing: &StageTiming{Runs: -1}},
		{Key: "T", Timing: &StageTiming{}, StartedAt: &east, CompletedAt: &at, CompletedText: "not a time"},
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
