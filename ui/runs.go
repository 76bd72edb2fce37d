package ui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"runwatch/model"
)

// sortKey is how the runs list is ordered; `s` cycles through them.
type sortKey int

const (
	sortAttention sortKey = iota // runs that need you first, then the rest by name
	sortName
	sortChanged // most recently changed first
	sortCount
)

func (s sortKey) String() string {
	return [...]string{"attention", "name", "last change"}[s]
}

// runsPane is the list of runs: a table with headers that fits its width, a filter, a sort order, and the
// selection every other pane follows.
type runsPane struct {
	app *app

	order    []string // visible StatePaths in display order
	cursor   int
	top      int
	filter   string
	terms    []filterTerm
	input    textinput.Model
	editing  bool
	sortBy   sortKey
	hideDone bool
	hidden   int // runs left out by hideDone
	// chosen is set once the person moves the cursor: until then the selection is the top run (the one
	// that most needs them), whatever arrives; after, it stays on the run they chose.
	chosen bool

	w, h int
}

func newRunsPane(a *app) *runsPane {
	in := textinput.New()
	in.Prompt = "filter runs: "
	in.Placeholder = "text, !not, is:stalled, kind:resumable, has:lock"
	st := in.Styles()
	st.Cursor.Blink = false // a blinking cursor would redraw twice a second for nothing
	in.SetStyles(st)
	return &runsPane{app: a, input: in}
}

func (p *runsPane) SetSize(w, h int) { p.w, p.h = w, h; p.input.SetWidth(max(10, w-16)); p.clamp() }

// rowsH is how many runs fit under the header row.
func (p *runsPane) rowsH() int { return max(1, p.h-borderCells-1) }

func (p *runsPane) Capturing() bool { return p.editing }

func (p *runsPane) lineInput() string {
	if !p.editing {
		return ""
	}
	return p.input.View()
}

func (p *runsPane) ShortHelp() []key.Binding {
	k := p.app.keys
	if p.editing {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear")),
		}
	}
	var out []key.Binding
	if run, ok := p.app.selectedRun(); ok {
		if b, ok := attentionBinding(k, run.Attention.Action); ok && run.Attention.NeedsYou {
			out = append(out, b)
		}
	}
	out = append(out, k.bindings(ActOpen, ActFilter, ActSort, ActHideDone, ActBrief, ActNextPane, ActHelp, ActQuit)...)
	return out
}

func (p *runsPane) FullHelp() [][]key.Binding {
	k := p.app.keys
	return [][]key.Binding{k.bindings(ActUp, ActDown, ActTop, ActBottom, ActPageUp, ActPageDown, ActOpen),
		k.bindings(ActFilter, ActBack, ActSort, ActHideDone)}
}

func (p *runsPane) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	if p.editing {
		return p.updateInput(km)
	}
	switch p.app.keys.Of(km) {
	case ActFilter:
		// The filter starts empty each time: what you type is the whole query, as in less and k9s.
		p.editing = true
		p.input.SetValue("")
		p.setFilter("")
		return p.input.Focus()
	case ActBack:
		if p.filter != "" {
			p.setFilter("")
		} else {
			p.app.msgs.clear()
		}
	case ActSort:
		p.sortBy = (p.sortBy + 1) % sortCount
		p.resort()
		p.app.note("sorted by " + p.sortBy.String())
	case ActHideDone:
		p.hideDone = !p.hideDone
		p.resort()
	case ActUp:
		p.moveTo(p.cursor - 1)
	case ActDown:
		p.moveTo(p.cursor + 1)
	case ActTop:
		p.moveTo(0)
	case ActBottom:
		p.moveTo(len(p.order) - 1)
	case ActPageUp:
		p.moveTo(p.cursor - max(1, p.rowsH()/2))
	case ActPageDown:
		p.moveTo(p.cursor + max(1, p.rowsH()/2))
	}
	return nil
}

func (p *runsPane) updateInput(km tea.KeyPressMsg) tea.Cmd {
	switch km.String() {
	case "esc":
		p.editing = false
		p.input.Blur()
		p.setFilter("")
		return nil
	case "enter":
		p.editing = false
		p.input.Blur()
		return nil
	case "ctrl+c":
		return quitCmd()
	}
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(km)
	p.setFilter(p.input.Value())
	return cmd
}

func (p *runsPane) setFilter(f string) {
	p.filter = f
	p.terms = parseFilter(f)
	p.resort()
}

func (p *runsPane) moveTo(i int) {
	p.chosen = true
	p.cursor = clamp(i, 0, len(p.order)-1)
	if len(p.order) > 0 {
		p.app.selected = p.order[p.cursor]
	}
	p.clamp()
}

// sortGroup is the attention order's group: each kind of "needs you" by its rank, then every live run that
// does not need you as one group (so a resumable run flipping between running and paused, as it does on
// each invocation, never moves), then completed, then archived.
func sortGroup(r model.Run) int {
	a := r.Attention
	switch {
	case a.NeedsYou:
		return a.Rank
	case r.Archived:
		return 30
	case r.Status == model.StatusCompleted:
		return 20
	}
	return 10
}

// resort rebuilds the visible order and keeps the selection on the same run when it is still visible.
func (p *runsPane) resort() {
	runs := p.app.runs
	p.order = p.order[:0]
	p.hidden = 0
	for sp, r := range runs {
		if p.hideDone && (r.Archived || r.Status == model.StatusCompleted) {
			p.hidden++
			continue
		}
		if matchesFilter(r, p.terms) {
			p.order = append(p.order, sp)
		}
	}
	sort.Slice(p.order, func(i, j int) bool {
		a, b := runs[p.order[i]], runs[p.order[j]]
		switch p.sortBy {
		case sortAttention:
			if ga, gb := sortGroup(a), sortGroup(b); ga != gb {
				return ga < gb
			}
		case sortChanged:
			if !a.UpdatedAt.Equal(b.UpdatedAt) {
				return a.UpdatedAt.After(b.UpdatedAt)
			}
		}
		// Within a group the order is by id, never by recency: a list that reshuffles on every write to a
		// busy run cannot be read at a glance.
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Key() < b.Key()
	})
	p.cursor = 0
	found := false
	if !p.chosen && len(p.order) > 0 {
		p.app.selected = p.order[0]
	}
	for i, sp := range p.order {
		if sp == p.app.selected {
			p.cursor, found = i, true
			break
		}
	}
	if !found {
		p.app.selected = ""
		if len(p.order) > 0 {
			p.app.selected = p.order[0]
		}
	}
	p.clamp()
}

func (p *runsPane) clamp() {
	h := p.rowsH()
	if p.cursor < p.top {
		p.top = p.cursor
	}
	if p.cursor >= p.top+h {
		p.top = p.cursor - h + 1
	}
	p.top = clamp(p.top, 0, max(0, len(p.order)-h))
}

func (p *runsPane) title() string {
	title := fmt.Sprintf("Runs %d", len(p.order))
	if total := len(p.app.runs); len(p.order) != total {
		title = fmt.Sprintf("Runs %d of %d", len(p.order), total)
	}
	if p.filter != "" {
		title += " /" + Sanitize(p.filter)
	}
	return title
}

func (p *runsPane) View() string {
	iw, ih := max(1, p.w-borderCells), max(1, p.h-borderCells)
	lines := p.renderTable(iw, ih)
	sc := scroll{}
	if len(p.order) > 0 {
		sc = scroll{above: p.top, below: max(0, len(p.order)-p.top-p.rowsH())}
	}
	return box(p.app.theme, p.title(), lines, p.w, p.h, p.app.focus == PaneRuns, sc)
}

// attentionBinding is the key that settles an attention action, with the action's short word.
func attentionBinding(k KeyMap, a model.Action) (key.Binding, bool) {
	act := attentionKeyAction(a)
	if act == "" {
		return key.Binding{}, false
	}
	b, ok := k.kb[act]
	return b, ok
}

// attentionKeyAction maps model.Judge's action to the dashboard's keymap action.
func attentionKeyAction(a model.Action) string {
	switch a {
	case model.ActionUnlock:
		return ActUnlock
	case model.ActionStep:
		return ActStep
	case model.ActionCheck:
		return ActTick
	case model.ActionRetry:
		return ActRetry
	case model.ActionResume:
		return ActLaunch
	case model.ActionBrief:
		return ActBrief
	case model.ActionInspect:
		return ActOpen
	}
	return ""
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	if t.After(now) {
		return "now" // clock skew between writer and reader: never show a future time as an age
	}
	return model.HumanDuration(now.Sub(t))
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

func shortStatus(s model.RunStatus) string {
	switch s {
	case model.StatusAwaitingInput:
		return "input"
	case model.StatusCompleted:
		return "done"
	}
	return string(s)
}

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

// stageCell is the current stage as "key name", e.g. "10 implementation" or "M2".
func stageCell(r model.Run, withName bool) string {
	key := Sanitize(r.CurrentStage)
	if key == "" {
		return "–"
	}
	if st := r.Stage(r.CurrentStage); st != nil && withName && st.Name != "" && st.Name != st.Key {
		return key + " " + cutEnd(Sanitize(st.Name), maxPhaseName)
	}
	return key
}

// maxPhaseName bounds a phase name in the stage column: the real ones run to 19 cells (design-verification),
// all shown whole; a longer, hostile one is cut.
const maxPhaseName = 19

// cutMiddle shortens s to w cells by removing its middle, keeping more of the end: run ids of one task
// share their start and differ in their suffix (irm-id-full-backfill-20261201T0518Z).
func cutMiddle(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	if w <= 1 {
		return string(r[:max(0, w)])
	}
	tail := (w - 1) * 3 / 5
	head := w - 1 - tail
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

func cutEnd(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	if w <= 1 {
		return string(r[:max(0, w)])
	}
	return string(r[:w-1]) + "…"
}

// column is one column of the runs table: a header, each row's cell as plain text and its style.
type column struct {
	id     string
	title  string
	cells  []string
	styles []lipgloss.Style
	right  bool
	width  int
}

// tableSteps are the ways the table gives up room for the name, least important first: each step either
// shortens a column's text or drops the column.
var tableSteps = []struct{ col, how string }{
	{"why", "drop"}, // the why column is placed last, in the room left over
	{"kind", "short"}, {"stage", "short"}, {"status", "short"}, {"kind", "drop"},
	{"lock", "drop"}, {"done", "drop"}, {"status", "drop"}, {"host", "drop"}, {"changed", "drop"},
}

// tableLayout decides, for the width w, which columns show in which form and how wide each is: every
// column is exactly as wide as its widest cell or header (no slack), the name takes what is left, and
// columns go (least important first) while the longest name does not fit. The why column, last, takes
// any room left over.
type tableLayout struct {
	short map[string]bool
	drop  map[string]bool
	nameW int
	whyW  int
	sep   int
}

func (p *runsPane) columns(lay tableLayout, rows []model.Run) []*column {
	t := p.app.theme
	now := p.app.now()
	mk := func(id, title string, right bool) *column {
		return &column{id: id, title: title, right: right}
	}
	status, stage, done, lock, kind, changed := mk("status", "STATUS", false), mk("stage", "STAGE", false),
		mk("done", "DONE", true), mk("lock", "LOCK", false), mk("kind", "KIND", false), mk("changed", "CHANGED", true)
	host := mk("host", "HOST", false)
	for _, r := range rows {
		h, hs := hostOf(r), t.Dim
		if r.Remote != nil && r.Remote.StaleSince != nil {
			// The host cannot be reached: the row is as it was last seen.
			h, hs = h+" ↻", t.Warn
		}
		host.cells = append(host.cells, h)
		host.styles = append(host.styles, hs)
		word := string(r.Status)
		if lay.short["status"] {
			word = shortStatus(r.Status)
		}
		st := t.statusStyle(r.Status)
		if r.Archived {
			word, st = "archived", t.Dim
		}
		status.cells = append(status.cells, word)
		status.styles = append(status.styles, st)
		stage.cells = append(stage.cells, stageCell(r, !lay.short["stage"]))
		stage.styles = append(stage.styles, lipgloss.NewStyle())
		done.cells = append(done.cells, fmt.Sprintf("%d/%d", r.Progress.Done, r.Progress.Total))
		done.styles = append(done.styles, t.Dim)
		badge, verdict := lockBadge(r)
		lock.cells = append(lock.cells, badge)
		lock.styles = append(lock.styles, t.verdictStyle(verdict))
		k := string(r.Kind)
		if lay.short["kind"] {
			k = kindShort(r.Kind)
		}
		kind.cells = append(kind.cells, k)
		kind.styles = append(kind.styles, t.Dim)
		changed.cells = append(changed.cells, ago(now, r.UpdatedAt))
		changed.styles = append(changed.styles, t.Dim)
	}
	var cols []*column
	for _, c := range []*column{status, host, stage, done, lock, kind, changed} {
		if lay.drop[c.id] || (c == host && !p.app.manyHosts()) {
			continue
		}
		c.width = visibleWidth(c.title)
		for _, s := range c.cells {
			c.width = max(c.width, visibleWidth(s))
		}
		cols = append(cols, c)
	}
	return cols
}

// fit chooses the layout for inner width w over rows: it gives up room step by step while the longest
// name does not fit, then takes back every step that did not let more names show whole.
func (p *runsPane) fit(w int, rows []model.Run) (tableLayout, []*column) {
	sep := 2
	if w < 80 {
		sep = 1
	}
	// Archived runs are history: their names (the run's name plus a .reset-<time> suffix) may be cut in
	// the middle rather than cost a live run's column.
	var names []int
	nameNeed := len("NAME")
	for _, r := range rows {
		if r.Archived {
			continue
		}
		nw := visibleWidth(Sanitize(r.ID))
		names = append(names, nw)
		nameNeed = max(nameNeed, nw)
	}
	const glyphW = 2 // status glyph and a space
	room := func(lay tableLayout) (int, []*column) {
		cols := p.columns(lay, rows)
		used := glyphW
		for _, c := range cols {
			used += c.width + sep
		}
		return w - used, cols
	}
	whole := func(r int) int {
		n := 0
		for _, nw := range names {
			if nw <= r {
				n++
			}
		}
		return n
	}
	lay := tableLayout{short: map[string]bool{}, drop: map[string]bool{"why": true}, sep: sep}
	r, _ := room(lay)
	var applied []int
	for step := 1; step < len(tableSteps) && r < nameNeed; step++ {
		before := whole(r)
		apply(&lay, tableSteps[step], true)
		r, _ = room(lay)
		applied = append(applied, step)
		_ = before
	}
	// Take back, last first, each step whose undoing shows as many whole names.
	for i := len(applied) - 1; i >= 0; i-- {
		st := tableSteps[applied[i]]
		apply(&lay, st, false)
		r2, _ := room(lay)
		if whole(r2) < whole(r) || r2 < 4 {
			apply(&lay, st, true)
			continue
		}
		r = r2
	}
	r, cols := room(lay)
	lay.nameW = max(4, min(nameNeed, r))
	// The why column takes what is left once every name fits; otherwise the name takes the slack.
	if rest := r - nameNeed - sep; rest >= 12 {
		lay.drop["why"] = false
		lay.whyW = rest
	} else if r > lay.nameW {
		lay.nameW = r
	}
	return lay, cols
}

func apply(lay *tableLayout, s struct{ col, how string }, on bool) {
	if s.how == "drop" {
		lay.drop[s.col] = on
	} else {
		lay.short[s.col] = on
	}
}

// naturalWidth is the width the table needs to show every column and every live name whole, with room
// for a short why; the wide layout sizes the runs pane from it.
func (p *runsPane) naturalWidth() int {
	rows := make([]model.Run, 0, len(p.order))
	nameNeed := len("NAME")
	for _, sp := range p.order {
		r := p.app.runs[sp]
		rows = append(rows, r)
		if !r.Archived {
			nameNeed = max(nameNeed, visibleWidth(Sanitize(r.ID)))
		}
	}
	w := 2 + nameNeed
	for _, c := range p.columns(tableLayout{short: map[string]bool{}, drop: map[string]bool{}}, rows) {
		w += 2 + c.width
	}
	return w + 2 + 24
}

// renderTable draws the header and the visible rows into w×h cells.
func (p *runsPane) renderTable(w, h int) []string {
	t := p.app.theme
	a := p.app
	if len(p.order) == 0 {
		switch {
		case !a.loaded:
			return []string{t.Dim.Render("scanning…")}
		case a.health.Loading > 0:
			return []string{t.Dim.Render(fmt.Sprintf("reading %d runs…", a.health.Loading))}
		case p.filter != "":
			return []string{t.Dim.Render(truncate("no run matches /"+Sanitize(p.filter), w)), t.Dim.Render("esc clears the filter")}
		case p.hidden > 0:
			return []string{t.Dim.Render(fmt.Sprintf("all %d runs are done; %s shows them", p.hidden, a.keys.First(ActHideDone)))}
		}
		return []string{t.Dim.Render("no runs found under the given paths")}
	}
	rows := make([]model.Run, len(p.order))
	for i, sp := range p.order {
		rows[i] = a.runs[sp]
	}
	lay, cols := p.fit(w, rows)
	sep := strings.Repeat(" ", lay.sep)
	cell := func(c *column, s string) string {
		if c.right {
			return strings.Repeat(" ", c.width-visibleWidth(s)) + s
		}
		return padRight(s, c.width)
	}
	hdr := "  " + padRight("NAME", lay.nameW)
	for _, c := range cols {
		hdr += sep + cell(c, c.title)
	}
	if lay.whyW > 0 {
		hdr += sep + "WHY"
	}
	lines := []string{t.Dim.Render(truncate(hdr, w))}
	for i := p.top; i < len(rows) && len(lines) < h; i++ {
		r := rows[i]
		glyph := r.Status.Glyph()
		gst := t.statusStyle(r.Status)
		if r.Archived {
			glyph, gst = "⌂", t.Dim
		}
		name := padRight(cutMiddle(Sanitize(r.ID), lay.nameW), lay.nameW)
		plainRow := glyph + " " + name
		styled := gst.Render(glyph) + " " + name
		for _, c := range cols {
			s := cell(c, c.cells[i])
			plainRow += sep + s
			styled += sep + c.styles[i].Render(s)
		}
		if lay.whyW > 0 {
			why := ""
			if r.Attention.NeedsYou {
				why = cutEnd(Sanitize(r.Attention.Reason), lay.whyW)
			}
			plainRow += sep + why
			styled += sep + t.Warn.Render(why)
		}
		line := styled
		if i == p.cursor {
			line = selectStyle(a, PaneRuns).Render(padRight(truncate(plainRow, w), w))
		}
		lines = append(lines, truncate(line, w))
	}
	return lines
}

func selectStyle(a *app, p Pane) lipgloss.Style {
	if a.focus == p {
		return a.theme.Selected
	}
	return a.theme.SelectedDim
}
