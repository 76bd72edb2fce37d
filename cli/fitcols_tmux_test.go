package cli

import (
	"strings"
	"testing"

	"runwatch/colfit"
	"runwatch/ui/keys"
	"runwatch/ui/text"
)

// columnFrom is, in out (a table as a terminal shows it), the lines under the header line holding head and
// the cell where head starts; -1 when no line holds it.
func columnFrom(out, head string) (rows []string, at int) {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if j := strings.Index(l, head); j >= 0 {
			return lines[i+1:], text.VisibleWidth(l[:j])
		}
	}
	return nil, -1
}

// TestStatusCutsNamesBeforeReasonOnTerminal is issue 36 point 7 at the edges: on an 80-column terminal
// status cuts the run ids in their middle before it gives up the reason, and shows the stage by its name;
// the dashboard's Runs pane at 80 columns does the same (one rule, colfit). Before, ids kept their 48 cells,
// REASON was cut to 5 (`lock …`), UPDATED dropped and STAGE read `6`; the dashboard had no WHY.
func TestStatusCutsNamesBeforeReasonOnTerminal(t *testing.T) {
	t.Parallel()
	ws := demoWorkspace(t)
	out, _ := inPane(t, 80, 30, nil, realBinary(t)+" status "+strings.Join(ws.Paths(), " "))
	rows, at := columnFrom(out, "REASON")
	if at < 0 || !strings.Contains(out, "UPDATED") {
		t.Fatalf("status at 80 columns has no REASON or UPDATED column:\n%s", out)
	}
	for _, r := range rows {
		if strings.Contains(r, "lock held") {
			if w := text.VisibleWidth(r) - at; w < colfit.ReasonMin {
				t.Errorf("REASON is %d cells, want at least %d:\n%s", w, colfit.ReasonMin, out)
			}
		}
	}
	if !strings.Contains(out, "brainstorming") || !strings.Contains(out, "…") {
		t.Errorf("status at 80 columns: want the stage by its name and ids cut in the middle:\n%s", out)
	}

	d, exitFile := dashboardOn(t, 80, 24, strings.Join(ws.Paths(), " "))
	s := d.waitText("NAME")
	rows, at = columnFrom(s, "WHY")
	if at < 0 {
		t.Fatalf("the dashboard's Runs pane at 80 columns has no WHY:\n%s", s)
	}
	for _, r := range rows {
		if strings.Contains(r, "lock held") {
			if w := text.VisibleWidth(r) - at - 1; w < colfit.ReasonMin {
				t.Errorf("WHY is %d cells, want at least %d:\n%s", w, colfit.ReasonMin, s)
			}
		}
	}
	d.press(keys.ActQuit)
	d.waitExit(exitFile)
}
