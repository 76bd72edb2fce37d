package runs

import (
	"testing"
	"time"
	"unsafe"
)

// A run's cached row is kept for the rows shown; it points at the run (app.Runs' value, never changed in
// place) rather than keep a copy of its attention, or of the whole run for its ETA, and its widths are 16
// bits (issue 35). A field added to it is counted here and in docs/BENCHMARKS.md.
func TestRunCellsStaySmall(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(runCells{}); n > 512 {
		t.Errorf("a run's cached row is %d bytes; at most 512", n)
	}
}

// What the columns' measure keeps is kept for every run, 10,000 and more, and holds no pointer (issue 35).
func TestRowWidthsStaySmall(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(rowWidths{}); n > 80 {
		t.Errorf("a run's widths are %d bytes; at most 80", n)
	}
}

// The columns are measured over every run, but only the rows a frame shows keep their cells: kept for every
// run to measure the widths, they were 5 MB of the dashboard's heap at 10,000 runs (issue 35).
func TestCellsKeptOnlyForRowsShown(t *testing.T) {
	p := fixturePane(t, 160, 8)
	if len(p.order) <= p.rowsH() {
		t.Fatalf("%d runs fit in %d rows: the test needs more", len(p.order), p.rowsH())
	}
	_ = p.View()
	_ = p.NaturalWidth()
	if len(p.widths) != len(p.app.Runs) {
		t.Errorf("widths kept for %d runs of %d", len(p.widths), len(p.app.Runs))
	}
	if len(p.cells) > p.rowsH() {
		t.Errorf("cells kept for %d runs, %d rows shown", len(p.cells), p.rowsH())
	}
}

// A run's widths are its cells' widths, read at the same time.
func TestRowWidthsAreTheCellsWidths(t *testing.T) {
	p := fixturePane(t, 160, 40)
	for sp, r := range p.app.Runs {
		for _, now := range []int64{0, 90, 3600, 86400 * 3} {
			at := fixtureNow.Add(time.Duration(now) * time.Second)
			c := newRunCells(r)
			c.refreshAgo(at)
			c.refreshWhy(at)
			w := c.widths()
			w2 := p.widthsOf(sp, r, at)
			if w2.width != w.width || w2.stageReach != w.stageReach || w2.doneReach != w.doneReach || w2.nameW != w.nameW {
				t.Errorf("%s at +%ds: widths %v, the cells' %v", r.ID, now, *w2, w)
			}
		}
	}
}
