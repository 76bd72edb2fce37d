// Tests of the table's layout rule at every width: the STAGE column and the columns' widths.

package runs

import (
	"math"
	"strings"
	"testing"

	"runwatch/ui/text"
)

// TestStageColumnShowsThePhaseName: at every width where the table shows its STAGE column, the row of each
// run whose current stage has a name carries that name (issue 11 point 16); the column goes only where a
// name beside it would be cut below nameMin.
func TestStageColumnShowsThePhaseName(t *testing.T) {
	p := fixturePane(t, 200, 100)
	shownAt, droppedAt := 0, 0
	for w := 30; w <= 200; w++ {
		lines := p.renderTable(w, 100)
		if !strings.Contains(text.Stripped(lines[0]), "STAGE") {
			droppedAt++
			if lay := p.Fit(w); lay.nameW >= nameMin+stageWidth(p)+lay.sep {
				t.Errorf("w=%d: STAGE dropped although the name keeps %d cells with it", w, lay.nameW-stageWidth(p)-lay.sep)
			}
			continue
		}
		shownAt++
		for i, sp := range p.Order() {
			r := p.app.Runs[sp]
			st := r.Stage(r.CurrentStage)
			if st == nil || st.Name == "" || st.Name == st.Key {
				continue
			}
			if row := text.Stripped(lines[1+i]); !strings.Contains(row, st.Name) {
				t.Errorf("w=%d: the row of %s shows STAGE without the phase name %q:\n%s", w, r.ID, st.Name, row)
			}
		}
	}
	if shownAt == 0 || droppedAt == 0 {
		t.Fatalf("STAGE shown at %d widths, dropped at %d: the widths tried do not cover both", shownAt, droppedAt)
	}
}

func stageWidth(p *Pane) int { return p.measure().width[colStage][formShort] }

// TestNoColumnSlackWhileTheNameIsCut: at every width, each column is exactly as wide as its widest cell or
// header, and when a live run's name is cut the cells left blank are fewer than the next column of the rule
// needs (TestTableGrowsWithWidth: they are not lent to the name only to be taken back a column later), and
// a reason beside it has at least whyMin cells (names are cut before the reason is lost, issue 36).
func TestNoColumnSlackWhileTheNameIsCut(t *testing.T) {
	p := fixturePane(t, 200, 60)
	need := 0
	for _, sp := range p.Order() {
		if r := p.app.Runs[sp]; !r.Archived {
			need = max(need, len(r.ID))
		}
	}
	cutSeen, wholeSeen := false, false
	for w := 30; w <= 200; w++ {
		lay := p.Fit(w)
		used := 2 + lay.nameW
		for _, c := range lay.cols {
			widest := text.VisibleWidth(ColTitle[c.id])
			for _, sp := range p.Order() {
				widest = max(widest, text.VisibleWidth(p.cellsOf(sp, fixtureNow).text[c.id][c.form]))
			}
			if c.width != widest {
				t.Errorf("w=%d: column %s is %d wide, its widest cell %d", w, ColTitle[c.id], c.width, widest)
			}
			used += lay.sep + c.width
		}
		if lay.whyW > 0 {
			used += lay.sep + lay.whyW
		}
		if lay.nameW < need {
			cutSeen = true
			next := 0 // what the first column the rule takes before the whole name, not yet shown, needs
			for _, id := range []ColID{ColStatus, colStage, colChanged, colWhy} {
				if !lay.show[id] {
					next = lay.sep + p.measure().width[id][formShort]
					if id == colWhy {
						next = lay.sep + whyMin
					}
					break
				}
			}
			if used != w && w-used >= next {
				t.Errorf("w=%d: the name is cut to %d of %d while %d cells are unused", w, lay.nameW, need, w-used)
			}
			if lay.whyW > 0 && lay.whyW < whyMin {
				t.Errorf("w=%d: a why column is cut below %d beside a cut name", w, whyMin)
			}
		} else {
			wholeSeen = true
		}
	}
	if !cutSeen || !wholeSeen {
		t.Fatalf("the widths tried never cut a name (%v) or never fit them all (%v): the test proves nothing", cutSeen, wholeSeen)
	}
}

// A cell's width is kept in 16 bits: one wider than that (a reason built from a hostile file) reads as the
// widest, never wraps round to a narrow one.
func TestCellWidthSaturates(t *testing.T) {
	if got := cellWidth("stage S2 · build"); got != 16 {
		t.Errorf("cellWidth of a 16-column text: %d", got)
	}
	if got := cellWidth(strings.Repeat("x", 70000)); got != math.MaxUint16 {
		t.Errorf("cellWidth of a 70,000-column text: %d, want %d", got, math.MaxUint16)
	}
}
