package cli

import (
	"os"
	"path/filepath"
	"testing"

	"runwatch/model"
)

// TestStatusAfterFullUndoOfBlockedRun: tick + step + undo + undo on a run blocked at its gate leaves status
// --json where it started: stage-blocked, needs you, the same exit code.
func TestStatusAfterFullUndoOfBlockedRun(t *testing.T) {
	t.Parallel()
	dir, e := actionRun(t)
	log := "[2026-02-15T01:50:43Z] run bootstrapped\n[2026-02-15T01:51:00Z] stage_start stage=S2\n" +
		"[2026-02-15T02:00:00Z] stage_blocked stage=S2 failed_metrics=CB_S2_B\n"
	if err := os.WriteFile(filepath.Join(dir, "run.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	id := filepath.Base(dir)
	judge := func(when string) (model.Attention, int) {
		t.Helper()
		snap, _, code, stderr := runStatusJSON(t, dir)
		if len(snap.Runs) != 1 {
			t.Fatalf("%s: %d runs (stderr %s)", when, len(snap.Runs), stderr)
		}
		return snap.Runs[0].Attention, code
	}
	before, beforeCode := judge("before")
	if before.Code != model.AttentionStageBlocked || !before.NeedsYou {
		t.Fatalf("before: %+v", before)
	}
	for _, args := range [][]string{{"check", id, "CB_S2_B"}, {"step", id}, {"undo", id}, {"undo", id}} {
		if code, _, errOut := runCmd(e, append(args, "--yes")...); code != 0 {
			t.Fatalf("%v: code %d stderr %q", args, code, errOut)
		}
	}
	after, afterCode := judge("after")
	if after != before || afterCode != beforeCode {
		t.Fatalf("after a full undo: %+v (exit %d), want %+v (exit %d)", after, afterCode, before, beforeCode)
	}
}
