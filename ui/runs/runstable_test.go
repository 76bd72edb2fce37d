// Tests of the table's layout rule at every width: the STAGE column and the columns' widths.

package runs

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"runwatch/model"
	"runwatch/ui/text"
)

// TestStageColumnShowsThePhaseName: at every width where the table shows its STAGE column, the row of each
// run whose current stage has a name carries that name (issue 11 point 16); the column goes only where the
// name beside it has no more than nameMin.
func TestStageColumnShowsThePhaseName(t *testing.T) {
	p := fixturePane(t, 200, 100)
	shownAt, droppedAt := 0, 0
	for w := 30; w <= 200; w++ {
		lines := p.renderTable(w, 100)
		if !strings.Contains(text.Stripped(lines[0]), "STAGE") {
			droppedAt++
			if lay := p.fit(w); lay.nameW > nameMin {
				t.Errorf("w=%d: STAGE dropped although the name has %d cells", w, lay.nameW)
			}
			continue
		}
		shownAt++
		for i, sp := range p.order {
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

// TestNoBlankCellsWhileANameIsCut is issue 36 point 7 at every width: each column is exactly as wide as its
// widest cell or header (STAGE was as wide as every stage a run may reach, 20 cells for stages of 15, while
// names were cut and WHY dropped); while a name or a reason is cut the table leaves no cell blank that the
// next change, one width on, could have used; WHY has whyMin before the name grows past nameMin (names are
// cut before the reason is lost); the gaps are two cells once the name has grown past nameMin; and nothing
// shown one cell narrower is taken back (a name of 20 cells at 50 columns was cut to 16 at 60).
func TestNoBlankCellsWhileANameIsCut(t *testing.T) {
	p := fixturePane(t, 200, 60)
	need, whyNeed := 0, 0
	for _, sp := range p.order {
		c := p.cellsOf(sp, fixtureNow)
		if !c.archived {
			need = max(need, int(c.nameW))
		}
		whyNeed = max(whyNeed, c.widthOf(colWhy, formLong))
	}
	whole := p.NaturalWidth()
	cutSeen, blankSeen, wholeSeen := false, false, false
	var prev tableLayout
	for w := 30; w <= 300; w++ {
		lay := p.fit(w)
		used := 2 + lay.nameW
		for _, c := range lay.cols {
			widest := text.VisibleWidth(colTitle[c.id])
			for _, sp := range p.order {
				widest = max(widest, text.VisibleWidth(p.cellsOf(sp, fixtureNow).text[c.id][c.form]))
			}
			if c.width != widest && w < whole {
				t.Errorf("w=%d: column %s is %d wide, its widest cell %d", w, colTitle[c.id], c.width, widest)
			}
			used += c.gap + c.width
		}
		if lay.whyW > 0 {
			used += lay.whyGap + lay.whyW
		}
		cut := lay.nameW < need || lay.whyW < whyNeed
		if cut && used < w {
			blankSeen = true
			next := w + 1
			for ; next < 1000 && fmt.Sprint(p.fit(next)) == fmt.Sprint(lay); next++ {
			}
			if _, nextUsed := p.grow(next); nextUsed <= w {
				t.Errorf("w=%d: %d cells blank beside a cut name or reason, and what %d columns add fits in them", w, w-used, next)
			}
		}
		cutSeen = cutSeen || lay.nameW < need
		wholeSeen = wholeSeen || !cut
		if lay.nameW > nameMin && (lay.whyW < min(whyMin, whyNeed) || lay.sep != 2) {
			t.Errorf("w=%d: the name has %d cells, WHY %d and the gaps %d", w, lay.nameW, lay.whyW, lay.sep)
		}
		if w > 30 {
			if lost := lessIn(prev, lay); lost != "" {
				t.Errorf("w=%d shows less than %d: %s", w, w-1, lost)
			}
		}
		prev = lay
	}
	if !cutSeen || !blankSeen || !wholeSeen {
		t.Fatalf("the widths tried cut a name %v, left cells blank %v, fitted everything %v: the test proves nothing", cutSeen, blankSeen, wholeSeen)
	}
}

// TestStageIsAsWideAsTheStagesRunsAreAt: STAGE is as wide as the stages the runs are at, not as every stage
// they may reach (20 cells for stages of 15 beside cut names, issue 36 point 7), until nothing is cut: then
// it is padded to those, so the pane beside Detail keeps its width as the runs go on.
func TestStageIsAsWideAsTheStagesRunsAreAt(t *testing.T) {
	stages := []model.Stage{{Key: "1", Name: "setup"}, {Key: "10", Name: "design-verification"}}
	var runs []model.Run
	for i, id := range []string{"fix-the-login-form-mxd9tmzg", "fix-the-footer-typo-mxd3kusi"} {
		runs = append(runs, model.Run{ID: id, StatePath: "/r/" + id + "/state.env", Kind: model.KindJonggrang,
			Status: model.StatusRunning, CurrentStage: "1", Stages: stages, Progress: model.Progress{Done: i, Total: 18},
			Attention: model.Attention{NeedsYou: true, Code: model.AttentionAwaitingInput,
				Reason: "waiting for your answer at phase 1 (setup), asked an hour ago"}})
	}
	p := paneOf(runs, 200, 20)
	for w := 30; w <= 300; w++ {
		lay := p.fit(w)
		for _, c := range lay.cols {
			if c.id == colStage && c.width > len("1 setup") && lay.whyW < len(runs[0].Attention.Reason) {
				t.Errorf("w=%d: STAGE is %d cells for stages of %d beside a cut reason", w, c.width, len("1 setup"))
			}
		}
	}
	natural := p.fit(1 << 20)
	for _, c := range natural.cols {
		if c.id == colStage && c.width != len("10 design-verification") {
			t.Errorf("every step taken, STAGE is %d cells, not as wide as the stage the runs go on to", c.width)
		}
	}
}

// lessIn names what a shows that b does not, or shows narrower ("" when b shows all of it, as wide).
func lessIn(a, b tableLayout) string {
	var lost []string
	shown := map[colID]shownCol{}
	for _, c := range b.cols {
		shown[c.id] = c
	}
	for _, c := range a.cols {
		if bc, ok := shown[c.id]; !ok || bc.width < c.width || bc.gap < c.gap || bc.form == formShort && c.form == formLong {
			lost = append(lost, fmt.Sprintf("%s %+v → %+v", colTitle[c.id], c, bc))
		}
	}
	if b.nameW < a.nameW || b.whyW < a.whyW || b.whyGap < a.whyGap {
		lost = append(lost, fmt.Sprintf("NAME %d→%d, WHY %d→%d", a.nameW, b.nameW, a.whyW, b.whyW))
	}
	return strings.Join(lost, ", ")
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
