package model

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
	"unsafe"
)

// A stage holds no StageRare when nothing rare is set, and a time's text only when the JSON would spell the
// time otherwise: the bytes are the same without it (issue 35: 264 bytes a stage with them in line).
func TestStageHoldsRareFieldsOnlyWhenSet(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 30, 0, 123000000, time.UTC)
	zeros := time.Date(2026, 12, 1, 9, 30, 0, 120000000, time.UTC)
	s := Stage{Key: "1", StartedAt: &at, CompletedAt: &zeros}.WithRare(StageRare{})
	if s.rare != nil {
		t.Errorf("no rare field set, yet %+v held", *s.rare)
	}
	s.SetRare(StageRare{StartedText: "2026-12-01T09:30:00.123Z"})
	if s.rare != nil {
		t.Errorf("a text the JSON spells the same way is held: %+v", *s.rare)
	}
	s.SetRare(StageRare{StartedText: "2026-12-01T09:30:00.123Z", CompletedText: "2026-12-01T09:30:00.120Z"})
	if s.StartedText() != "" || s.CompletedText() != "2026-12-01T09:30:00.120Z" {
		t.Errorf("texts %q, %q: want only completed_at's, which the JSON spells .12Z", s.StartedText(), s.CompletedText())
	}
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Stage
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	// Read back, the text comes too: a host's run is written out again as the file spells it.
	if got := back.Rare(); !reflect.DeepEqual(got, StageRare{CompletedText: "2026-12-01T09:30:00.120Z"}) {
		t.Errorf("read back from %s with rare fields %+v, want only completed_at's text", b, got)
	}
	s.SetError("boom")
	if b, err = s.MarshalJSON(); err != nil {
		t.Fatal(err)
	}
	back = Stage{}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if want := s.Rare(); back.ErrorText() != "boom" || !reflect.DeepEqual(back.Rare(), want) || want.CompletedText == "" {
		t.Errorf("read back %+v from %s", back.Rare(), b)
	}
}

// A copy of a stage shares its rare fields; setting one on the copy leaves the stage as it was (the screen
// holds the stage the watcher judges a copy of).
func TestStageSettersLeaveCopiesAlone(t *testing.T) {
	s := Stage{Key: "1"}.WithRare(StageRare{Error: "boom", Warnings: []string{"w"}})
	c := s
	c.SetError("other")
	c.SetWarnings(nil)
	c.SetSkipReason("why")
	c.SetRawStatus("weird")
	c.SetOutputFiles([]OutputFile{{Path: "p"}})
	if want := (Stage{Key: "1"}.WithRare(StageRare{Error: "boom", Warnings: []string{"w"}})); !reflect.DeepEqual(s, want) {
		t.Errorf("the stage became %+v after its copy changed", s.Rare())
	}
	if r := c.Rare(); r.Error != "other" || r.Warnings != nil || r.SkipReason != "why" || r.RawStatus != "weird" || len(r.OutputFiles) != 1 {
		t.Errorf("the copy holds %+v", r)
	}
	c.SetRare(StageRare{})
	if c.rare != nil {
		t.Errorf("all unset, the copy still holds %+v", *c.rare)
	}
}

// OrderUnknown is rare (no stage of the 10,000 generated runs has it): in the stage, its word of padding put
// arrays of 5 and 13 stages a size class higher (issue 35). Set and cleared, it leaves no rare fields.
func TestStageOrderUnknownIsRare(t *testing.T) {
	if n := unsafe.Sizeof(Stage{}); n > 152 {
		t.Errorf("Stage is %d bytes, want at most 152", n)
	}
	var s Stage
	s.SetOrderUnknown(true)
	c := s
	if !s.OrderUnknown() || s.rare == nil {
		t.Fatalf("set: %v, rare %v", s.OrderUnknown(), s.rare)
	}
	s.SetOrderUnknown(false)
	if s.OrderUnknown() || s.rare != nil || !c.OrderUnknown() {
		t.Errorf("cleared: %v, rare %v; its copy %v", s.OrderUnknown(), s.rare, c.OrderUnknown())
	}
}
