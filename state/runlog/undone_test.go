package runlog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStageEvidenceUndone: every action a runwatch_undo names is undone, whether or not it wrote a stage
// entry (a check writes checklist_update), and a log of many undos keeps the latest maxUndone.
func TestStageEvidenceUndone(t *testing.T) {
	head := "[2026-02-15T01:50:43Z] checklist_update key=CB_S2_B tool=runwatch action_id=a1\n" +
		"[2026-02-15T01:50:44Z] runwatch_undo action=check undoes=a1 tool=runwatch action_id=u1\n"
	var b strings.Builder
	b.WriteString(head)
	for i := range maxUndone + 5 {
		fmt.Fprintf(&b, "[2026-02-15T01:51:00Z] runwatch_undo undoes=x%d tool=runwatch\n", i)
	}
	path := filepath.Join(t.TempDir(), "run.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ev, ok := ReadStageEvidence(path)
	if !ok || len(ev.Undone) != maxUndone || ev.Undone[len(ev.Undone)-1] != fmt.Sprintf("x%d", maxUndone+4) {
		t.Fatalf("Undone = %v (%d), want the latest %d ending x%d", ev.Undone, len(ev.Undone), maxUndone, maxUndone+4)
	}
	if slices.Contains(ev.Undone, "a1") {
		t.Errorf("the oldest undo was kept past the bound: %v", ev.Undone)
	}
	short := filepath.Join(t.TempDir(), "run.log")
	if err := os.WriteFile(short, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if ev, _ := ReadStageTail(short); !slices.Equal(ev.Undone, []string{"a1"}) {
		t.Errorf("ReadStageTail: Undone = %v, want [a1]", ev.Undone)
	}
}
