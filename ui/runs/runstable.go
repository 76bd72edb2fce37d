package runs

import (
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"runwatch/colfit"
	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
)

// The runs table. lipgloss/table is not used: its column sizing cannot do "the name takes the slack, every
// other column is exactly its widest cell, columns go by priority as the width shrinks", which is what the
// table is for. Each run's cells are built once per change of the run and their widths kept (Pane.widths), so
// a frame measures the columns from cached widths and renders only the rows it shows: with 1,200 runs
// loading, rebuilding every row's cells on every frame was most of the dashboard's CPU and garbage. The
// cells themselves are kept only for the rows shown (Pane.cells).

// colID is a column of the runs table after NAME, in the order they are drawn.
type colID int

const (
	colStatus colID = iota
	colHost
	colStage
	colDone
	colLock
	colKind
	colChanged
	colWhy
	colCount
)

var (
	colTitle = [colCount]string{"STATUS", "HOST", "STAGE", "DONE", "LOCK", "KIND", "CHANGED", "WHY"}
	colRight = [colCount]bool{colDone: true, colChanged: true}
)

// Every cell has a long and a short form; a column with one form has the same text in both.
const (
	formLong = iota
	formShort
)

// runCells is one run's row as plain text in every form the layout may choose, with its widths and what
// picks each cell's style.
type runCells struct {
	name      string
	archived  bool
	status    model.RunStatus
	verdict   model.Verdict
	hostStale bool
	updated   time.Time
	// The CHANGED cell reads as worked out from agoFrom until agoUntil (zero: forever).
	agoFrom, agoUntil time.Time
	agoSet            bool
	// run is the run itself (app.Runs' value, never changed in place, not a copy: issue 35), whose
	// attention's reason may hold an age; eta: the history gives it an ETA. The WHY cell reads as worked
	// out from whyFrom until whyUntil (zero: forever), so their times count on without the run changing.
	run               *model.Run
	eta               bool
	whyCalm           bool
	whySet            bool
	whyFrom, whyUntil time.Time
	whySlack          time.Duration
	text              [colCount][2]string
	// width is each text's width, at most 65,535 (cellWidth): 16 bits, not 64, keep a run's cells in 704
	// bytes, not 896, over 10,000 runs (issue 35).
	width [colCount][2]uint16
	// stageReach (in each form) and doneReach are the widest STAGE and DONE cells the run may show as it
	// goes on (reach).
	stageReach [2]uint16
	doneReach  uint16
	nameW      uint16
}

// cellWidth is the width of a cell's text as runCells keeps it: wider than 65,535 columns reads as that,
// which is wider than any terminal.
func cellWidth(s string) uint16 {
	return uint16(min(text.VisibleWidth(s), math.MaxUint16))
}

// widthOf is the width of column id's text in form f.
func (c *runCells) widthOf(id colID, f int) int { return int(c.width[id][f]) }

func newRunCells(run *model.Run) *runCells {
	c := &runCells{}
	c.fill(run)
	return c
}

// fill builds the cells of run into c, which is empty.
func (c *runCells) fill(run *model.Run) {
	if run == nil {
		run = &model.Run{} // not shown: a row of nothing, as a missing run's always was
	}
	r := *run
	*c = runCells{name: text.Sanitize(r.ID), archived: r.Archived, status: r.Status, updated: r.UpdatedAt, run: run}
	c.nameW = cellWidth(c.name)
	set := func(id colID, long, short string) { c.text[id] = [2]string{long, short} }
	if r.Archived {
		set(colStatus, "archived", "archived")
	} else {
		set(colStatus, string(r.Status), shortStatus(r.Status))
	}
	h := hostOf(r)
	if r.Remote != nil && r.Remote.StaleSince != nil {
		// The host cannot be reached: the row is as it was last seen.
		h, c.hostStale = h+" ⚠", true
	}
	set(colHost, h, h)
	set(colStage, stageCell(r, true), stageCell(r, false))
	done := fmt.Sprintf("%d/%d", r.Progress.Done, r.Progress.Total)
	set(colDone, done, done)
	badge, verdict := lockBadge(r)
	c.verdict = verdict
	set(colLock, badge, badge)
	set(colKind, string(r.Kind), string(r.Kind))
	if r.Attention.NeedsYou {
		why := text.Sanitize(r.Attention.Reason)
		set(colWhy, why, why)
	} else if _, ok := r.ETA(r.UpdatedAt); ok {
		c.eta, c.whyCalm = true, true
	}
	for id := range colCount {
		for f := range 2 {
			c.width[id][f] = cellWidth(c.text[id][f])
		}
	}
	c.reach(r)
}

// rowWidths is what the columns' measure needs of one run: its cells' widths, not their texts. It is kept
// for every run, 10,000 and more, and the cells only for the rows shown: 80 bytes a run, not 512 (issue 35).
type rowWidths struct {
	width      [colCount][2]uint16
	stageReach [2]uint16
	doneReach  uint16
	nameW      uint16
	archived   bool
	eta        bool
	agoSet     bool
	whySet     bool
	// The CHANGED and WHY widths hold from agoFrom until agoUntil and from whyFrom until whyUntil, in Unix
	// nanoseconds (until 0: forever), as the cells' texts do (runCells).
	agoFrom, agoUntil, whyFrom, whyUntil int64
}

// widths is what rowWidths keeps of c.
func (c *runCells) widths() rowWidths {
	return rowWidths{width: c.width, stageReach: c.stageReach, doneReach: c.doneReach, nameW: c.nameW,
		archived: c.archived, eta: c.eta}
}

// widthOf is the width of column id's text in form f.
func (w *rowWidths) widthOf(id colID, f int) int { return int(w.width[id][f]) }

// held says whether a width worked out at from still holds at now (until 0: forever).
func held(set bool, from, until, now int64) bool {
	return set && now >= from && (until == 0 || now < until)
}

// unixUntil is until in Unix nanoseconds, 0 for the zero time (forever).
func unixUntil(until time.Time) int64 {
	if until.IsZero() {
		return 0
	}
	return max(1, until.UnixNano())
}

// refreshAgo works out the CHANGED width again when the cell's text changes (runCells.refreshAgo).
func (w *rowWidths) refreshAgo(now, updated time.Time) {
	n := now.UnixNano()
	if held(w.agoSet, w.agoFrom, w.agoUntil, n) {
		return
	}
	a, until := agoCell(now, updated)
	w.agoSet, w.agoFrom, w.agoUntil = true, n, unixUntil(until)
	cw := cellWidth(a)
	w.width[colChanged] = [2]uint16{cw, cw}
}

// refreshWhy works out the WHY widths again when the cell's text changes (runCells.refreshWhy).
func (w *rowWidths) refreshWhy(now time.Time, run *model.Run) {
	n := now.UnixNano()
	if held(w.whySet, w.whyFrom, w.whyUntil, n) {
		return
	}
	why, short, until, _, ok := whyCell(run, w.eta, now)
	w.whySet, w.whyFrom, w.whyUntil = true, n, unixUntil(until)
	if ok {
		w.width[colWhy] = [2]uint16{cellWidth(why), cellWidth(short)}
	}
}

// reach finds the widest STAGE and DONE cells the run may show as it goes on, every stage it has and its
// total done. The table pads its columns to them only once nothing is cut (colfit.Pad), so the runs pane
// beside Detail keeps its width as runs progress. Sized by them at every width, STAGE was 20 cells for
// stages of 15 while names were cut and WHY dropped (issue 36 point 7).
func (c *runCells) reach(r model.Run) {
	c.stageReach = c.width[colStage]
	for _, st := range r.Stages {
		for f, long := range [2]bool{formLong: true, formShort: false} {
			c.stageReach[f] = max(c.stageReach[f], cellWidth(stageCellOf(r, st.Key, long)))
		}
	}
	c.doneReach = max(c.width[colDone][formLong], cellWidth(fmt.Sprintf("%d/%d", r.Progress.Total, r.Progress.Total)))
}

// refreshAgo works out the CHANGED cell again when its text changes: it is the only cell that changes
// without the run changing.
func (c *runCells) refreshAgo(now time.Time) {
	if c.agoSet && !now.Before(c.agoFrom) && (c.agoUntil.IsZero() || now.Before(c.agoUntil)) {
		return
	}
	c.agoSet, c.agoFrom = true, now
	var a string
	a, c.agoUntil = agoCell(now, c.updated)
	c.text[colChanged] = [2]string{a, a}
	w := cellWidth(a)
	c.width[colChanged] = [2]uint16{w, w}
}

// agoCell is the CHANGED cell of a run updated then, as read at now, and until when it reads so (zero:
// forever).
func agoCell(now, updated time.Time) (string, time.Time) {
	var until time.Time
	switch {
	case updated.IsZero():
	case updated.After(now):
		until = updated // "now" until then
	default:
		until = now.Add(model.HumanAgeGrows(now.Sub(updated)))
	}
	return ago(now, updated), until
}

// refreshWhy works out the WHY cell again when its text changes: a reason's age ("silent for 1h30m") and a
// running run's ETA count with the clock.
func (c *runCells) refreshWhy(now time.Time) {
	if c.whySet && !now.Before(c.whyFrom) && (c.whyUntil.IsZero() || now.Before(c.whyUntil)) {
		return
	}
	why, short, until, slack, ok := whyCell(c.run, c.eta, now)
	c.whySet, c.whyFrom, c.whyUntil = true, now, until
	if !ok {
		return
	}
	if !until.IsZero() {
		c.whySlack = slack
	}
	c.text[colWhy] = [2]string{why, short}
	c.width[colWhy] = [2]uint16{cellWidth(why), cellWidth(short)}
}

// whyCell is the WHY cell of run (eta: it has an ETA) in its long and short forms as read at now, until when
// it reads so (zero: forever) and by how much a redraw may lag that; !ok: the cell stays as it is.
func whyCell(run *model.Run, eta bool, now time.Time) (why, short string, until time.Time, slack time.Duration, ok bool) {
	switch {
	case run.Attention.NeedsYou:
		why = text.Sanitize(run.Attention.ReasonAt(now))
		short = why
		if from := run.Attention.AgeFrom(); !from.IsZero() && !from.After(now) {
			until = now.Add(model.HumanAgeGrows(now.Sub(from)))
			slack = model.HumanDurationUnit(now.Sub(from)) - 1
		}
	case eta:
		left, ok := run.ETA(now)
		if !ok {
			return "", "", time.Time{}, 0, false
		}
		why, short = app.ETAText(left, run.Timing.Runs), "~"+model.HumanDuration(left)+" left"
		if sh := model.HumanDurationShrinks(left); sh > 0 {
			until = now.Add(sh)
			slack = model.HumanDurationUnit(left) - 1
		}
	default:
		return "", "", time.Time{}, 0, false
	}
	return why, short, until, slack, true
}

func (c *runCells) style(t theme.Theme, id colID) lipgloss.Style {
	switch id {
	case colStatus:
		if c.archived {
			return t.Dim
		}
		return t.StatusStyle(c.status)
	case colHost:
		if c.hostStale {
			return t.Warn
		}
	case colStage:
		return lipgloss.NewStyle()
	case colLock:
		return t.VerdictStyle(c.verdict)
	case colWhy:
		if c.whyCalm {
			return t.Dim
		}
		return t.Warn
	}
	return t.Dim
}

// agoWidthHorizon bounds how far ahead the CHANGED column's next width is looked for: a re-measure that far
// ahead costs nothing worth a longer search.
const agoWidthHorizon = 24 * time.Hour

// widthChangesAt is when the CHANGED cell of a run updated then may change the column's width w: when it
// grows wider, or, for a cell as wide as the column (wider than its header), when it changes width at all.
func (rw *rowWidths) widthChangesAt(now, updated time.Time, w, header int) time.Time {
	switch {
	case updated.IsZero():
		return time.Time{}
	case updated.After(now):
		return updated
	}
	d := now.Sub(updated)
	if rw.widthOf(colChanged, formLong) == w && w > header {
		return now.Add(model.HumanWidthGrows(d, agoWidthHorizon))
	}
	if g, ok := model.HumanWidthExceeds(d, w, agoWidthHorizon); ok {
		return now.Add(g)
	}
	return time.Time{}
}

// cellsOf is the cached row of the run sp, built from the run on first use after it changed.
func (p *Pane) cellsOf(sp string, now time.Time) *runCells {
	c, ok := p.cells[sp]
	if !ok {
		if p.cells == nil {
			p.cells = map[string]*runCells{}
		}
		c = newRunCells(p.app.Runs[sp])
		p.cells[sp] = c
	}
	c.refreshAgo(now)
	c.refreshWhy(now)
	return c
}

// widthsOf is the cached widths of run sp (r), built from its cells on first use after it changed.
func (p *Pane) widthsOf(sp string, r *model.Run, now time.Time) *rowWidths {
	w, ok := p.widths[sp]
	if !ok {
		if p.widths == nil {
			p.widths = map[string]*rowWidths{}
		}
		var c runCells
		c.fill(r)
		w = new(rowWidths)
		*w = c.widths()
		p.widths[sp] = w
	}
	w.refreshAgo(now, r.UpdatedAt)
	w.refreshWhy(now, r)
	return w
}

// maxCells bounds the rows whose cells are kept beyond those a frame shows: past it, a frame keeps only its
// own.
const maxCells = 256

// forget drops the cached rows of runs that changed or went; the root calls it for every run it replaces
// or removes.
func (p *Pane) Forget(ks ...string) {
	for _, k := range ks {
		delete(p.cells, k)
		delete(p.widths, k)
	}
	p.gen++
}

// forgetAll drops every cached row (a new snapshot).
func (p *Pane) ForgetAll() {
	p.cells, p.widths = nil, nil
	p.gen++
}

// tableMeasure is what the layout needs from all rows (not only the listed ones): each column's widest
// cell in each form, and the widths of the live runs' names.
type tableMeasure struct {
	gen      int
	at       time.Time
	until    time.Time // the first instant a CHANGED cell's width changes; zero: never
	valid    bool
	width    [colCount][2]int // the header included
	filled   [colCount]bool   // some row has something in the column
	nameNeed int              // the longest live name: archived runs' names may be cut
	// stageReach (in each form) and doneReach are the widest STAGE and DONE cells any run may show as it
	// goes on.
	stageReach [2]int
	doneReach  int
}

// measure is the table's measure for the current order, taken again only when a run or the order changed,
// or some run's CHANGED cell changed its width (its text alone changes no width, so a row off screen that
// turns from 3m to 4m wakes nobody).
func (p *Pane) measure() *tableMeasure {
	now := p.app.Now()
	ms := &p.measured
	if !(ms.valid && ms.gen == p.gen && !now.Before(ms.at) && (ms.until.IsZero() || now.Before(ms.until))) {
		p.remeasure(now)
	}
	p.app.ChangesAt(ms.until)
	return ms
}

func (p *Pane) remeasure(now time.Time) {
	ms := &p.measured
	*ms = tableMeasure{gen: p.gen, at: now, valid: true, nameNeed: len("NAME")}
	for id := range colCount {
		w := text.VisibleWidth(colTitle[id])
		ms.width[id] = [2]int{w, w}
	}
	// Every run, not only the listed ones: the columns and the pane's width stay put while the filter or
	// hide-done changes what is listed.
	for sp, r := range p.app.Runs {
		c := p.widthsOf(sp, r, now)
		for id := range colCount {
			ms.width[id][formLong] = max(ms.width[id][formLong], c.widthOf(id, formLong))
			ms.width[id][formShort] = max(ms.width[id][formShort], c.widthOf(id, formShort))
			ms.filled[id] = ms.filled[id] || c.width[id][formLong] > 0
		}
		if !c.archived {
			ms.nameNeed = max(ms.nameNeed, int(c.nameW))
		}
		for f := range 2 {
			ms.stageReach[f] = max(ms.stageReach[f], int(c.stageReach[f]))
		}
		ms.doneReach = max(ms.doneReach, int(c.doneReach))
	}
	// Only a cell that would widen the column (or one as wide as it, past its header) changes the layout:
	// the other ages change their text, not the table.
	w, header := ms.width[colChanged][formLong], text.VisibleWidth(colTitle[colChanged])
	for _, sp := range p.order {
		if u := p.widths[sp].widthChangesAt(now, p.app.Runs[sp].UpdatedAt, w, header); !u.IsZero() && (ms.until.IsZero() || u.Before(ms.until)) {
			ms.until = u
		}
	}
}

// The layout rule is colfit's: the table is built up from nothing, one step at a time, in the order of what
// matters most, each step taken while the width pays for it. No cell is lent and taken back, so a wider
// table shows what a narrower one showed, and more (every column, form, width and gap only grows with the
// width: TestTableGrowsWithWidth). The growing steps (the name, WHY, the gaps) fill the width; cells stay
// blank only while a whole column waits for its room.
type tableStep struct {
	kind stepKind
	col  colID
}

type stepKind int

const (
	stepName     stepKind = iota // the name grows to nameMin
	stepNameAll                  // the name grows to the longest live name
	stepAdd                      // col is shown in its short form (WHY: from whyIn cells up to whyMin)
	stepLong                     // col takes its long form
	stepWhyAll                   // WHY grows to its widest cell (up to whyMax)
	stepSpacing                  // the gaps widen from one cell to two
	stepWhyRest                  // once every other column is shown, WHY takes what is left, to its widest cell
	stepReach                    // STAGE is counted as wide as the widest stage its runs may reach
	stepReachAll                 // and in its long form, and DONE as its runs' totals
)

const (
	// nameMin and whyMin are colfit's, the same as status's table.
	nameMin = colfit.LeadMin
	whyMin  = colfit.ReasonMin
	// whyIn is the fewest cells WHY comes in with: its header's.
	whyIn = len("WHY")
	// whyMax bounds WHY while columns still wait for room: the table says enough to tell runs apart.
	whyMax = 40
)

// tableSteps is the order of the rule, by priority: NAME at nameMin, STATUS, STAGE (as wide as the stages
// the runs are at), WHY growing to whyMin (names are cut before the reason is lost, as status's table
// does: colfit.LeadMin, colfit.ReasonMin), the gaps from one cell to two, the whole name; then STAGE counted
// as wide as every stage its runs may reach (grow gives the cells the stages shown leave to WHY), so the
// columns after it stay put as the runs go on: CHANGED, WHY to whyMax, DONE, HOST, LOCK, the stage's key
// beside its name and KIND, which say least, then the reason in all that is left. The name, WHY and the
// gaps come first and grow a cell at a time: from 50 to 100 columns the table fills its width (at 80
// columns CHANGED and two-cell gaps would leave WHY under whyMin). STATUS keeps its short form ("input",
// "done"): the glyph and Detail say the rest. The column the list is sorted by comes straight after the
// name, so a sort is never on a column that is not shown.
func (p *Pane) tableSteps() []tableStep {
	steps := []tableStep{
		{stepName, 0}, {stepAdd, colStatus}, {stepAdd, colStage}, {stepAdd, colWhy}, {stepSpacing, 0},
		{stepNameAll, 0}, {stepReach, 0}, {stepAdd, colChanged}, {stepWhyAll, colWhy}, {stepAdd, colDone},
		{stepAdd, colHost}, {stepAdd, colLock}, {stepLong, colStage}, {stepAdd, colKind}, {stepWhyRest, colWhy},
		{stepReachAll, 0},
	}
	if p.sortBy == sortChanged {
		steps = append([]tableStep{steps[0], {stepAdd, colChanged}}, steps[1:]...)
	}
	return steps
}

// tableLayout is, for one width, which columns show in which form and how wide each is: every column is
// exactly as wide as its widest cell or header (until every step is taken: then STAGE and DONE as wide as
// their runs may reach).
type tableLayout struct {
	show, long  [colCount]bool
	nameW, whyW int
	whyGap      int
	sep         int // the widest gap
	cols        []shownCol
}

// shownCol is a column the layout shows, in its form and width, and the gap before it.
type shownCol struct {
	id    colID
	form  int
	width int
	gap   int
}

func (lay *tableLayout) form(id colID) int {
	if lay.long[id] {
		return formLong
	}
	return formShort
}

// wanted says whether a column is worth any room at all: one no run has anything in (LOCK when no run
// holds a lock, WHY when none needs you) is left out, and HOST shows only when the runs come from more than
// one machine. It is judged over every run, not only the listed ones, so the table does not change its
// columns as the filter changes.
func (p *Pane) wanted(id colID, ms *tableMeasure) bool {
	return ms.filled[id] && (id != colHost || p.manyHosts)
}

// fit chooses the layout for inner width w by the rule above.
func (p *Pane) fit(w int) tableLayout {
	lay, _ := p.grow(w)
	return lay
}

// grow takes the rule's steps while width w pays for them (colfit.Table.Fit); it returns the layout and the
// width it uses.
func (p *Pane) grow(w int) (tableLayout, int) {
	ms := p.measure()
	const glyphW = 2           // status glyph and a space
	const name = int(colCount) // the lead column, after the others in colfit's terms
	cols := make([]colfit.Natural, colCount+1)
	for id := range colCount {
		cols[id] = colfit.Natural{Long: ms.width[id][formLong], Short: ms.width[id][formShort]}
	}
	cols[name] = colfit.Natural{Long: ms.nameNeed, Short: ms.nameNeed}
	var steps []colfit.Step
	for _, st := range p.tableSteps() {
		col := int(st.col)
		switch st.kind {
		case stepName:
			steps = append(steps, colfit.Step{Kind: colfit.Grow, Col: name, Upto: nameMin})
		case stepNameAll:
			steps = append(steps, colfit.Step{Kind: colfit.Grow, Col: name, Upto: ms.nameNeed})
		case stepAdd:
			if !p.wanted(st.col, ms) {
				continue
			}
			step := colfit.Step{Kind: colfit.Add, Col: col}
			if st.col == colWhy {
				step.Upto, step.Min = whyMin, whyIn
			}
			steps = append(steps, step)
		case stepLong:
			steps = append(steps, colfit.Step{Kind: colfit.Long, Col: col})
		case stepWhyAll:
			steps = append(steps, colfit.Step{Kind: colfit.Grow, Col: col, Upto: whyMax})
		case stepWhyRest:
			// No bound: at 280 columns reasons were cut at 96 cells beside 65 blank ones (issue 36 point 7).
			// The runs go beside Detail only where every reason is whole there (NaturalWidth), so a wider
			// terminal never shows less of one.
			steps = append(steps, colfit.Step{Kind: colfit.Grow, Col: col, Upto: cols[colWhy].Long})
		case stepSpacing:
			steps = append(steps, colfit.Step{Kind: colfit.Spacing})
		case stepReach:
			// Short: STAGE has not taken its long form yet (stepLong comes after the first reach).
			steps = append(steps, colfit.Step{Kind: colfit.Pad, Col: int(colStage), Upto: ms.stageReach[formShort]})
		case stepReachAll:
			steps = append(steps, colfit.Step{Kind: colfit.Pad, Col: int(colStage), Upto: ms.stageReach[formLong]},
				colfit.Step{Kind: colfit.Pad, Col: int(colDone), Upto: ms.doneReach})
		}
	}
	fit := colfit.Table{Cols: cols, Lead: name, Steps: steps, Sep: 1}.Fit(w - glyphW)
	// STAGE and DONE are counted as wide as their runs may reach, so the columns after them stay put as the
	// runs go on (at 120 columns DONE dropped out whenever a run reached design-verification); the cells the
	// stages shown now leave go to WHY while it is cut: no column holds blank cells beside a cut one.
	for _, id := range [2]colID{colStage, colDone} {
		if fit.Show[id] && fit.Show[colWhy] {
			f := formShort
			if fit.LongForm[id] {
				f = formLong
			}
			move := min(fit.Width[id]-ms.width[id][f], cols[colWhy].Long-fit.Width[colWhy])
			fit.Width[id], fit.Width[colWhy] = fit.Width[id]-move, fit.Width[colWhy]+move
		}
	}
	lay := tableLayout{nameW: fit.Width[name]}
	for id := range colCount {
		lay.show[id], lay.long[id] = fit.Show[id], fit.LongForm[id]
		if !lay.show[id] {
			continue
		}
		lay.sep = max(lay.sep, fit.Gap[id])
		if id == colWhy {
			lay.whyW, lay.whyGap = fit.Width[id], fit.Gap[id]
			continue
		}
		col := shownCol{id: id, form: lay.form(id), width: fit.Width[id], gap: fit.Gap[id]}
		if id == colChanged && p.sortBy == sortChanged {
			// The column the list is sorted by comes straight after the name, as docs/DASHBOARD.md says.
			lay.cols = append([]shownCol{col}, lay.cols...)
			continue
		}
		lay.cols = append(lay.cols, col)
	}
	return lay, glyphW + fit.Used
}

// naturalWidth is the width at which the table has taken every step: every column, every live name and
// every reason whole. The wide layout puts the runs pane beside Detail only where it gets this width.
func (p *Pane) NaturalWidth() int {
	_, used := p.grow(1 << 20)
	return used
}

// noRuns is what the empty list says: where it looked, and each host that did not answer with its error, in
// status's words (a host's roots were not looked in: "no runs found in nohost:/x" said the opposite).
func (p *Pane) noRuns(w int) []string {
	t, a := p.app.Theme, p.app
	var out []string
	down := map[string]bool{}
	for _, h := range a.Hosts {
		if h.State != model.HostLive && h.Error != "" {
			down[h.Host] = true
			for i, l := range text.WrapText(text.Sanitize(h.Error), w-2) {
				out = append(out, t.Bad.Render(text.MarkFirst(i, "✗ ")+l))
			}
		}
	}
	var looked []string
	for i, s := range a.Opts.Scanned {
		if i < len(a.Opts.ScannedHosts) && down[a.Opts.ScannedHosts[i]] {
			continue
		}
		looked = append(looked, text.Sanitize(s))
	}
	switch {
	case len(looked) > 0:
		out = append(out, t.Dim.Render("no runs found in "+strings.Join(looked, ", ")))
	case len(a.Opts.Scanned) == 0:
		out = append(out, t.Dim.Render("no runs found in the given paths"))
	default:
		return out // nothing was looked in: the hosts' errors say why
	}
	for _, l := range text.WrapText("(looked for .jonggrang/ projects and state.env run folders); runwatch demo shows the dashboard on simulated runs", w) {
		out = append(out, t.Dim.Render(l))
	}
	return out
}

// renderTable draws the header and the visible rows into w×h cells.
func (p *Pane) renderTable(w, h int) []string {
	t := p.app.Theme
	a := p.app
	if len(p.order) == 0 {
		switch {
		case !a.Loaded:
			return []string{t.Dim.Render("scanning…")}
		case a.Health.Loading > 0:
			return []string{t.Dim.Render("reading " + text.RunsCount(a.Health.Loading) + "…")}
		case p.filter != "":
			return []string{t.Dim.Render(text.Truncate("no run matches /"+text.Sanitize(p.filter), w)), t.Dim.Render("esc clears the filter")}
		case p.hidden > 0:
			return []string{t.Dim.Render(fmt.Sprintf("all %d runs are done; %s shows them", p.hidden, a.Keys.First(keys.ActHideDone)))}
		}
		return p.noRuns(w)
	}
	lay := p.fit(w)
	now := a.Now()
	align := func(c shownCol, s string) string {
		if colRight[c.id] {
			return strings.Repeat(" ", c.width-text.VisibleWidth(s)) + s
		}
		return text.PadRight(s, c.width)
	}
	hdr := "  " + text.PadRight("NAME", lay.nameW)
	for _, c := range lay.cols {
		hdr += gap(c.gap) + align(c, colTitle[c.id])
	}
	if lay.whyW > 0 {
		hdr += gap(lay.whyGap) + text.CutEnd(colTitle[colWhy], lay.whyW)
	}
	lines := []string{t.Dim.Render(text.Truncate(hdr, w))}
	if len(p.cells) > maxCells {
		p.cells = nil
	}
	for i := p.top; i < len(p.order) && len(lines) < h; i++ {
		rc := p.cellsOf(p.order[i], now)
		if !rc.updated.IsZero() && !rc.updated.After(now) {
			a.AgeChanges(now, now.Sub(rc.updated))
		} else {
			a.ChangesAt(rc.agoUntil)
		}
		// One wake-up may serve this cell and the ages beside it: it may lag by less than its unit, as they do.
		a.ChangesWithin(rc.whyUntil, rc.whySlack)
		glyph, gst := rc.status.Glyph(), t.StatusStyle(rc.status)
		if rc.archived {
			glyph, gst = "⌂", t.Dim
		}
		name := text.PadRight(text.CutMiddle(rc.name, lay.nameW), lay.nameW)
		plainRow := glyph + " " + name
		styled := gst.Render(glyph) + " " + name
		for _, c := range lay.cols {
			s := align(c, rc.text[c.id][c.form])
			plainRow += gap(c.gap) + s
			styled += gap(c.gap) + rc.style(t, c.id).Render(s)
		}
		if lay.whyW > 0 {
			why := text.CutEnd(rc.text[colWhy][formLong], lay.whyW)
			plainRow += gap(lay.whyGap) + why
			styled += gap(lay.whyGap) + rc.style(t, colWhy).Render(why)
		}
		line := styled
		if i == p.cursor {
			line = app.SelectStyle(a, app.PaneRuns).Render(text.PadRight(text.Truncate(plainRow, w), w))
		}
		lines = append(lines, text.Truncate(line, w))
	}
	return lines
}

// gap is n cells of space between columns.
func gap(n int) string { return strings.Repeat(" ", n) }

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	if t.After(now) {
		return "now" // clock skew between writer and reader: never show a future time as an age
	}
	return model.HumanAge(now.Sub(t))
}

func kindShort(k model.Kind) string {
	switch k {
	case model.KindJonggrang:
		return "jg"
	case model.KindResumable:
		return "rs"
	}
	return "??"
}

func shortStatus(s model.RunStatus) string { return s.Short() }

// lockBadge summarises a run's locks by the most important verdict: live holders matter most to someone
// about to act, then unknown ones (which need a typed confirmation), then stale ones.
func lockBadge(r model.Run) (string, model.Verdict) {
	var live, stale, unknown int
	for _, l := range r.Locks {
		switch l.Verdict {
		case model.VerdictLive:
			live++
		case model.VerdictStale:
			stale++
		default:
			unknown++
		}
	}
	switch {
	case live > 0:
		return "live", model.VerdictLive
	case unknown > 0:
		return "unknown", model.VerdictUnknown
	case stale > 0:
		return "stale", model.VerdictStale
	}
	return "", ""
}

// stageCell is the current stage: in its long form "key name" ("10 design-verification"), in its short
// form the name alone where the stage has one ("design-verification"; a number alone told no one which phase
// it was), else the key ("M2").
func stageCell(r model.Run, long bool) string { return stageCellOf(r, r.ShownStage(), long) }

// stageCellOf is stageCell for the run's stage current, one it may show.
func stageCellOf(r model.Run, current string, long bool) string {
	key := text.Sanitize(current)
	if key == "" {
		return "–"
	}
	if st := r.Stage(current); st != nil && st.Name != "" && st.Name != st.Key {
		name := text.CutEnd(text.Sanitize(st.Name), maxPhaseName)
		if long {
			return key + " " + name
		}
		return name
	}
	return key
}

// maxPhaseName bounds a phase name in the stage column: the real ones run to 19 cells (design-verification),
// all shown whole; a longer, hostile one is cut.
const maxPhaseName = 19
