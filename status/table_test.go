package status

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"runwatch/colfit"
	"runwatch/model"
)

// runsOfOneTask are three runs of one task that differ only in their ids' suffix, with a long reason and a
// stage that has a name.
func runsOfOneTask(now time.Time) []model.Run {
	long := "waiting for a person to read the brief and answer the question the agent asked at phase 6"
	var runs []model.Run
	for _, sfx := range []string{"20261201T051800Z", "20261201T061800Z", "20261201T071800Z"} {
		runs = append(runs, model.Run{ID: "irm-id-full-backfill-" + sfx, Kind: model.KindResumable, Status: model.StatusAwaitingInput,
			CurrentStage: "S2", Stages: []model.Stage{{Key: "S2", Name: "design-verification"}}, UpdatedAt: now.Add(-time.Hour),
			Progress: model.Progress{Done: 1, Total: 4}, Attention: model.Attention{NeedsYou: true, Reason: long}})
	}
	return runs
}

// printTable is the table status prints of runs, taken as judged already (as a host's runs come), sorted
// by id, at width (0: not a terminal).
func printTable(t *testing.T, runs []model.Run, now time.Time, wide bool, width int) string {
	t.Helper()
	format := "table"
	if wide {
		format = "wide"
	}
	o := NewOut(format, now, model.LivenessRules{})
	for _, r := range runs {
		o.AddJudged(r)
	}
	var b bytes.Buffer
	if _, err := o.Print(&b, "id", model.Snapshot{}, width); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestStatusTableKeepsRunIDs (issue 24 point 3): on a terminal of any width the RUN column is what is cut
// last but one: the reason is kept to colfit.ReasonMin first (issue 36: at 80 columns the ids kept 48 cells
// and the reason 5). Three runs of one task differ only in their suffix; wherever an id fits whole beside the
// short columns and that much reason it is whole, and below that it is cut in the middle, keeping the suffix,
// so no two rows read alike. The demo prints its table at exit through the same code.
func TestStatusTableKeepsRunIDs(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	runs := runsOfOneTask(now)
	idW := len(runs[0].ID)
	// The columns shown before the id grows whole: STATUS and STAGE in short, REASON, UPDATED, PROGRESS.
	others := 2 + ansi.StringWidth("? input") + 2 + len("design-verification") + 2 + colfit.ReasonMin + 2 + len("UPDATED") + 2 + len("PROGRESS")
	for _, wide := range []bool{false} { // -o wide is never cut: TestStatusTableCutsOnlyTheIDAndTheReason
		for width := 40; width <= 220; width++ {
			out := printTable(t, runs, now, wide, width)
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			seen := map[string]bool{}
			for i, r := range runs {
				row := lines[1+i]
				if w := ansi.StringWidth(row); w > width {
					t.Errorf("wide=%v %d columns: a row is %d wide", wide, width, w)
				}
				cell := strings.Fields(row)[0]
				if width >= idW+others && cell != r.ID {
					t.Errorf("wide=%v %d columns: the id is cut to %q while the reason could give way:\n%s", wide, width, cell, out)
				}
				if !strings.HasSuffix(cell, r.ID[len(r.ID)-7:]) {
					t.Errorf("wide=%v %d columns: %q lost the suffix that tells the runs apart", wide, width, cell)
				}
				if seen[cell] {
					t.Errorf("wide=%v %d columns: two rows read %q", wide, width, cell)
				}
				seen[cell] = true
			}
		}
	}
}

// TestStatusTableCutsOnlyTheIDAndTheReason: the status table fits a terminal by the dashboard's rule
// (colfit): a column is whole or left out, and only the id (in its middle) and the reason (at its end) are
// cut. The stage shows its name alone ("design-verification", as the dashboard's short form) until the whole
// stage fits ("S2 design-verification"): status cut it with "…" to 12 cells ("S2 design-v…") before issue 33
// made it one rule; the status its short word ("? input") until the long one fits. A wider table shows every
// column a narrower one did. -o wide is never cut (issue 36 point 3), whatever the width.
func TestStatusTableCutsOnlyTheIDAndTheReason(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	runs := runsOfOneTask(now)
	whole := printTable(t, runs, now, true, 0)
	var before []string
	keyOnly, stageWhole := 0, 0
	for width := 30; width <= 220; width++ {
		if wide := printTable(t, runs, now, true, width); wide != whole {
			t.Fatalf("-o wide at %d columns is not the whole table:\n%s", width, wide)
		}
		out := printTable(t, runs, now, false, width)
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		header := strings.Fields(lines[0])
		for _, h := range before {
			if !strings.Contains(lines[0], h) {
				t.Errorf("%d columns: %s, shown one column narrower, is left out", width, h)
			}
		}
		before = header
		for _, row := range lines[1:] {
			switch {
			case strings.Contains(row, " S2 design-verification "):
				stageWhole++
			case strings.Contains(row+"  ", "  design-verification  "): // the name alone
				keyOnly++
			case strings.Contains(lines[0], "STAGE"):
				t.Errorf("%d columns: the stage is neither whole nor its name:\n%s", width, row)
			}
			for _, cell := range []string{"? input", "1/4", "1h"} {
				if cell == "? input" && strings.Contains(row, "? awaiting-input") {
					continue // the long form
				}
				if strings.Contains(lines[0], map[string]string{"? input": "STATUS", "1/4": "PROGRESS", "1h": "UPDATED"}[cell]) &&
					!strings.Contains(row, cell) {
					t.Errorf("%d columns: %q is cut or missing though its column is shown:\n%s", width, cell, out)
				}
			}
		}
	}
	if keyOnly == 0 || stageWhole == 0 {
		t.Errorf("the stage shown as its name alone %d times, whole %d: the widths tried do not cover both", keyOnly, stageWhole)
	}
}
