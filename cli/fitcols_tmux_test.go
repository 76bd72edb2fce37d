package cli

import (
	"fmt"
	"path/filepath"
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
	s := waitEveryRun(d)
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

// waitEveryRun waits until the dashboard has read every run: the table is laid out over them all.
func waitEveryRun(d *tmuxDemo) string {
	d.t.Helper()
	return d.waitScreen("every run read", func(s string) bool {
		return strings.Contains(s, "NAME") && !strings.Contains(s, "loading") && !strings.Contains(s, "scanning")
	})
}

// blankStripes is, for a table's lines (the header first), each run of cell positions blank in every line
// before the last, as [start, length], and the blank cells every line has at its end (a line shorter than
// another is blank past its end).
func blankStripes(lines []string) (inner [][2]int, tail int) {
	width := 0
	rows := make([][]rune, len(lines))
	for i, l := range lines {
		rows[i] = []rune(l)
		width = max(width, len(rows[i]))
	}
	blank := func(x int) bool {
		for _, r := range rows {
			if x < len(r) && r[x] != ' ' {
				return false
			}
		}
		return true
	}
	for x := 0; x < width; {
		if !blank(x) {
			x++
			continue
		}
		start := x
		for x < width && blank(x) {
			x++
		}
		if x == width {
			return inner, x - start
		}
		inner = append(inner, [2]int{start, x - start})
	}
	return inner, 0
}

// TestNoBlankColumnsWhileNamesAreCut is issue 36 point 7 at the widths people use: on 50-, 60-, 70- and
// 80-column terminals the dashboard's Runs pane, where it cuts names, has no column with blank cells at its
// end (no blank wider than the gap between two columns) and no blank cells after its last column; status's
// table has none between its columns. Before, STAGE was 20 cells for stages of 15, 55 to 70 columns showed
// 8 to 18 blank cells and no WHY, and status padded RUN to 24 and 34 cells around ids cut to 16.
func TestNoBlankColumnsWhileNamesAreCut(t *testing.T) {
	t.Parallel()
	ws := demoWorkspace(t)
	for _, w := range []int{50, 60, 70, 80} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			// dashboardOn waits for the footer's "focus Runs", which a 50-column footer cuts.
			d := newTmuxDemo(t)
			exitFile := filepath.Join(t.TempDir(), "exit")
			d.must("new-session", "-d", "-x", fmt.Sprint(w), "-y", "40", "-s", "demo",
				fmt.Sprintf("%s %s 2>%s.stderr; echo $? > %s", realBinary(t), strings.Join(ws.Paths(), " "), exitFile, exitFile))
			s := waitEveryRun(d)
			d.press(keys.ActQuit)
			d.waitExit(exitFile)
			var table []string
			cut := false
			for _, l := range strings.Split(s, "\n") {
				inner := strings.TrimSuffix(strings.TrimPrefix(l, "┃"), "┃")
				if inner == l || strings.TrimSpace(inner) == "" || len(table) == 0 && !strings.Contains(inner, "NAME") {
					if len(table) > 0 {
						break
					}
					continue
				}
				table = append(table, inner)
				if f := strings.Fields(inner); len(table) > 1 && len(f) > 1 && strings.Contains(f[1], "…") {
					cut = true
				}
			}
			if len(table) < 8 || !cut {
				t.Fatalf("at %d columns: want the header, 7 runs and a name cut:\n%s", w, s)
			}
			inner, tail := blankStripes(table)
			for _, st := range inner {
				if st[1] > 2 {
					t.Errorf("at %d columns: %d blank cells from cell %d in every row while names are cut:\n%s", w, st[1], st[0], s)
				}
			}
			if tail > 0 {
				t.Errorf("at %d columns: %d blank cells after the last column while names are cut:\n%s", w, tail, s)
			}

			out, _ := inPane(t, w, 30, nil, realBinary(t)+" status "+strings.Join(ws.Paths(), " "))
			var rows []string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "RUN ") || len(rows) > 0 && strings.TrimSpace(l) != "" {
					rows = append(rows, l)
				} else if len(rows) > 0 {
					break
				}
			}
			if len(rows) < 8 || !strings.Contains(out, "…") {
				t.Fatalf("status at %d columns: want the header, 7 runs and an id cut:\n%s", w, out)
			}
			inner, _ = blankStripes(rows)
			for _, st := range inner {
				if st[1] > 2 {
					t.Errorf("status at %d columns: %d blank cells from cell %d in every row while ids are cut:\n%s", w, st[1], st[0], out)
				}
			}
		})
	}
}
