package runlog

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestUndoCancelsRunwatchLines: an undo line that arrives in a later read than the action it undoes takes
// that action's stage entries back out (latest word, completions, next pairs, spans); the writer's own
// entries, and an action not undone, stay.
func TestUndoCancelsRunwatchLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	write := func(s string) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	read := func() StageEvidence {
		t.Helper()
		ev, ok := ReadStageEvidence(path)
		if !ok {
			t.Fatal("log not read")
		}
		return ev
	}
	write("[2026-02-15T01:00:00Z] stage_start stage=S1\n[2026-02-15T01:05:00Z] stage_complete stage=S1 next=S2\n" +
		"[2026-02-15T01:06:00Z] stage_start stage=S2\n[2026-02-15T01:09:00Z] stage_blocked stage=S2 failed_metrics=cov\n")
	if ev := read(); ev.Latest["S2"].Event != "stage_blocked" {
		t.Fatalf("latest on S2 = %+v", ev.Latest["S2"])
	}
	write("[2026-02-15T01:10:00Z] stage_complete stage=S2 next=S3 tool=runwatch user=me action_id=20260215-a\n")
	ev := read()
	if ev.Latest["S2"].Event != "stage_complete" || !slices.Contains(ev.Completes, "S2") {
		t.Fatalf("after step: latest %+v, completes %v", ev.Latest["S2"], ev.Completes)
	}
	write("[2026-02-15T01:11:00Z] runwatch_undo action=step undoes=20260215-a files=state.env tool=runwatch action_id=20260215-b\n")
	ev = read()
	if ev.Latest["S2"].Event != "stage_blocked" {
		t.Fatalf("after undo: latest on S2 = %+v, want stage_blocked", ev.Latest["S2"])
	}
	if slices.Contains(ev.Completes, "S2") || len(ev.Next) != 1 || ev.Next[0] != [2]string{"S1", "S2"} {
		t.Fatalf("after undo: completes %v next %v; the undone step must leave neither", ev.Completes, ev.Next)
	}
	if sp := ev.Spans["S2"]; !sp.End.IsZero() {
		t.Fatalf("after undo: S2 span %+v has an end", sp)
	}
	if sp := ev.Spans["S1"]; sp.End.Sub(sp.Start).Minutes() != 5 {
		t.Fatalf("S1 span %+v, want 5 minutes", sp)
	}
	// A fresh read of the whole file (no cache) judges the same.
	stageScans.forget(path)
	if again := read(); again.Latest["S2"].Event != "stage_blocked" || slices.Contains(again.Completes, "S2") {
		t.Fatalf("fresh read: latest %+v completes %v", again.Latest["S2"], again.Completes)
	}
}
