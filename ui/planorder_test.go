// Tests that Detail says where a resumable run's stage order came from.

package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/app"
	"runwatch/ui/text"
)

// The mining run whose plan is on this machine (issue 27): Detail lists the stages in the plan's order and
// says where that order came from; without the plan it says why the plan is no evidence.
func TestDetailSaysTheOrderCameFromThePlan(t *testing.T) {
	root := t.TempDir()
	resumabletest.CopyDir(t, filepath.Join("..", "testdata", "resumable-c1"), root)
	runDir := filepath.Join(root, "reports", "iso26262-mining-20260306T090000Z")
	detailOf := func() string {
		locs, err := state.Discover([]string{runDir}, 1)
		if err != nil || len(locs) != 1 {
			t.Fatalf("discover: %v %v", locs, err)
		}
		run := state.Load(locs[0], state.NewEnv(0))
		m := newTestModel(t, 160, 50, []model.Run{run}, app.Options{})
		// Every row of the Detail, not only those the pane has room for, as one line: a phrase may be
		// wrapped anywhere.
		var dt []string
		for _, r := range m.detail.Rows(run, 70) {
			dt = append(dt, text.Stripped(r.Text()))
		}
		return strings.Join(strings.Fields(strings.Join(dt, " ")), " ")
	}
	if flat := detailOf(); !strings.Contains(flat, "is not on this machine") || !strings.Contains(flat, "↕ place unknown") {
		t.Errorf("without the plan:\n%s", flat)
	}
	sp := filepath.Join(runDir, "state.env")
	b, err := os.ReadFile(sp)
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(root, "repo")
	if err := os.WriteFile(sp, []byte(strings.ReplaceAll(string(b), "/home/u/src/iso-26262-rust-mapping", repo)), 0o644); err != nil {
		t.Fatal(err)
	}
	flat := detailOf()
	if !strings.Contains(flat, "order from the plan 2026-02-15-hierarchical-pdf-mining-corpus-plan.md, lines 27, 35–41 and 57") ||
		strings.Contains(flat, "place unknown") {
		t.Errorf("with the plan:\n%s", flat)
	}
	if i, j := strings.Index(flat, "anchor"), strings.Index(flat, "publish"); i < 0 || j < i {
		t.Errorf("anchor should come before publish:\n%s", flat)
	}
}
