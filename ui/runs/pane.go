// Package runs is the runs pane: the table of every run (runstable.go: cells, the widths measured over all
// rows, which columns fit), its filter (filter.go) and its sort and hide-done. Moving its cursor sets
// App.Selected, which the other panes follow; the root re-sorts it on every batch (Resort, Forget) and reads
// its counts for the header. It imports no other component.
//
// pane.go: the pane, its keys, filter prompt and sort.
package runs

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
)

// sortKey is how the runs list is ordered; `s` cycles through them.
type sortKey int

const (
	SortAttention sortKey = iota // runs that need you first, then the rest by name
	sortName
	sortChanged // most recently changed first
	sortCount
)

func (s sortKey) String() string {
	return [...]string{"attention", "name", "last change"}[s]
}

// runsPane is the list of runs: a table with headers that fits its width, a filter, a sort order, and the
// selection every other pane follows.
type Pane struct {
	app *app.App

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
	// manyHosts: the runs come from more than one machine, so the HOST column is worth its room.
	manyHosts bool
	// needYou counts the runs (all, not only those listed) that need a person, for the header.
	needYou int

	// widths caches each run's cells' widths by Run.Key, cells the cells of the rows shown; gen counts
	// changes to the order or to any run, so the column widths measured over all rows are measured again
	// only then (or when the clock moves on).
	widths   map[string]*rowWidths
	cells    map[string]*runCells
	gen      int
	measured tableMeasure

	w, h int
}

func New(a *app.App) *Pane {
	in := textinput.New()
	in.Prompt = "filter runs: "
	in.Placeholder = "text, !not, is:stalled, kind:resumable, has:lock"
	st := in.Styles()
	st.Cursor.Blink = false // a blinking cursor would redraw twice a second for nothing
	in.SetStyles(st)
	return &Pane{app: a, input: in}
}

func (p *Pane) SetSize(w, h int) { p.w, p.h = w, h; p.input.SetWidth(max(10, w-16)); p.clamp() }

// rowsH is how many runs fit under the header row.
func (p *Pane) rowsH() int { return max(1, p.h-theme.BorderCells-1) }

func (p *Pane) Capturing() bool { return p.editing }

func (p *Pane) LineInput() string {
	if !p.editing {
		return ""
	}
	return p.input.View()
}

func (p *Pane) ShortHelp() []key.Binding {
	k := p.app.Keys
	if p.editing {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear")),
		}
	}
	var out []key.Binding
	run, _ := p.app.SelectedRun()
	if p.NotHere()[keys.ActOpen] {
		return k.BindingsOf(keys.ActFilter, keys.ActBack, keys.ActHideDone, keys.ActHelp, keys.ActQuit)
	}
	if b, ok := app.AttentionBinding(p.app, run); ok && run.Attention.NeedsYou {
		out = append(out, b)
	}
	if b, ok := keys.AgentBinding(k, run.Attention); ok {
		out = append(out, b)
	}
	// The key that settles the run is offered only where it is not refused (app.NotHere, as help marks it).
	out = k.Without(out, p.app.NotHereSet(app.RowID{}))
	return keys.AppendNew(out, k.BindingsOf(keys.ActOpen, keys.ActFilter, keys.ActSort, keys.ActHideDone, keys.ActBrief, keys.ActNextPane, keys.ActHelp, keys.ActQuit)...)
}

// notHere is the actions that cannot apply with no run listed: open, brief and every change have no run to
// act on. The footer leaves them out and the help overlay marks them "(not here)".
func (p *Pane) NotHere() map[string]bool {
	if _, ok := p.app.SelectedRun(); !ok || len(p.order) == 0 {
		// No run in the list: app.NotHere's word on every key that acts on one.
		no := keys.Set(app.RuledKeys...)
		delete(no, keys.ActInstall)
		return no
	}
	return nil
}

func (p *Pane) FullHelp() [][]key.Binding {
	k := p.app.Keys
	return [][]key.Binding{k.BindingsOf(keys.ActUp, keys.ActDown, keys.ActTop, keys.ActBottom, keys.ActPageUp, keys.ActPageDown, keys.ActOpen),
		k.BindingsOf(keys.ActFilter, keys.ActBack, keys.ActSort, keys.ActHideDone)}
}

func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	if p.editing {
		return p.updateInput(km)
	}
	switch p.app.Keys.Of(km) {
	case keys.ActFilter:
		// The filter starts empty each time: what you type is the whole query, as in less and k9s.
		p.editing = true
		p.input.SetValue("")
		p.setFilter("")
		return p.input.Focus()
	case keys.ActBack:
		if p.filter != "" {
			p.setFilter("")
		} else {
			p.app.Msgs.Clear()
		}
	case keys.ActSort:
		p.sortBy = (p.sortBy + 1) % sortCount
		p.Resort()
		p.app.Note("sorted by " + p.sortBy.String())
	case keys.ActHideDone:
		p.hideDone = !p.hideDone
		p.Resort()
	case keys.ActUp:
		p.moveTo(p.cursor - 1)
	case keys.ActDown:
		p.moveTo(p.cursor + 1)
	case keys.ActTop:
		p.moveTo(0)
	case keys.ActBottom:
		p.moveTo(len(p.order) - 1)
	case keys.ActPageUp:
		p.moveTo(p.cursor - max(1, p.rowsH()/2))
	case keys.ActPageDown:
		p.moveTo(p.cursor + max(1, p.rowsH()/2))
	}
	return nil
}

func (p *Pane) updateInput(km tea.KeyPressMsg) tea.Cmd {
	switch km.String() {
	case "esc":
		p.editing = false
		p.input.Blur()
		p.setFilter("")
		return nil
	case "enter":
		p.editing = false
		p.input.Blur()
		if bad, words := unknownTerms(p.terms); len(bad) > 0 {
			// Kept, the word would list nothing, silently: it is left out, and the footer says why.
			kept := p.filter
			for _, w := range words {
				kept = strings.Join(strings.Fields(strings.ReplaceAll(" "+kept+" ", " "+w+" ", " ")), " ")
			}
			p.input.SetValue(kept)
			p.setFilter(kept)
			p.app.Fail(fmt.Errorf("unknown filter word %s", strings.Join(bad, "; ")))
		}
		return nil
	case "ctrl+c":
		return app.QuitCmd()
	}
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(km)
	p.setFilter(p.input.Value())
	return cmd
}

func (p *Pane) setFilter(f string) {
	p.filter = f
	p.terms = parseFilter(f)
	p.Resort()
}

// ClickRow selects the run on row i of the rows shown (0: the first under the header); nothing when there
// is no run there.
func (p *Pane) ClickRow(i int) {
	if i >= 0 && i < p.rowsH() && p.top+i < len(p.order) {
		p.moveTo(p.top + i)
	}
}

func (p *Pane) moveTo(i int) {
	p.chosen = true
	p.cursor = app.Clamp(i, 0, len(p.order)-1)
	if len(p.order) > 0 {
		p.app.Selected = p.order[p.cursor]
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

// SamePlace reports whether run now, replacing old (the same Run.Key), leaves the order and what the pane
// counts as they are: the same group, id and (sorted by change) time, shown or hidden alike, needing you
// alike. A host whose logs flood changes its runs' log sizes a batch after another; re-sorting every run
// of the fleet for each (8,000 at 20 batches a second) was most of what the flood cost (issue 35).
func (p *Pane) SamePlace(old, now model.Run) bool {
	if sortGroup(old) != sortGroup(now) || old.ID != now.ID || old.Attention.NeedsYou != now.Attention.NeedsYou {
		return false
	}
	if p.sortBy == sortChanged && !old.UpdatedAt.Equal(now.UpdatedAt) {
		return false
	}
	done := func(r model.Run) bool { return r.Archived || r.Status == model.StatusCompleted }
	if p.hideDone && done(old) != done(now) {
		return false
	}
	return len(p.terms) == 0 || matchesFilter(old, p.terms) == matchesFilter(now, p.terms)
}

// resort rebuilds the visible order and keeps the selection on the same run when it is still visible.
func (p *Pane) Resort() {
	runs := p.app.Runs
	p.order = p.order[:0]
	p.hidden = 0
	p.gen++
	// Sorting on these small keys rather than on the runs themselves keeps a re-sort of 1,200 runs from
	// copying whole runs in every comparison.
	type sortRow struct {
		sp, id, key string
		group       int
		updated     time.Time
	}
	ks := make([]sortRow, 0, len(runs))
	firstHost := ""
	p.manyHosts = false
	p.needYou = 0
	for sp, r := range runs {
		if r.Attention.NeedsYou {
			p.needYou++
		}
		if h := hostOf(*r); firstHost == "" {
			firstHost = h
		} else if h != firstHost {
			p.manyHosts = true
		}
		if p.hideDone && (r.Archived || r.Status == model.StatusCompleted) {
			p.hidden++
			continue
		}
		if matchesFilter(*r, p.terms) {
			ks = append(ks, sortRow{sp: sp, id: r.ID, key: r.Key(), group: sortGroup(*r), updated: r.UpdatedAt})
		}
	}
	sort.Slice(ks, func(i, j int) bool {
		a, b := &ks[i], &ks[j]
		switch p.sortBy {
		case SortAttention:
			if a.group != b.group {
				return a.group < b.group
			}
		case sortChanged:
			if !a.updated.Equal(b.updated) {
				return a.updated.After(b.updated)
			}
		}
		// Within a group the order is by id, never by recency: a list that reshuffles on every write to a
		// busy run cannot be read at a glance.
		if a.id != b.id {
			return a.id < b.id
		}
		return a.key < b.key
	})
	for _, k := range ks {
		p.order = append(p.order, k.sp)
	}
	p.cursor = 0
	found := false
	if !p.chosen && len(p.order) > 0 {
		p.app.Selected = p.order[0]
	}
	for i, sp := range p.order {
		if sp == p.app.Selected {
			p.cursor, found = i, true
			break
		}
	}
	if !found {
		p.app.Selected = ""
		if len(p.order) > 0 {
			p.app.Selected = p.order[0]
		}
	}
	p.clamp()
}

func (p *Pane) clamp() {
	h := p.rowsH()
	if p.cursor < p.top {
		p.top = p.cursor
	}
	if p.cursor >= p.top+h {
		p.top = p.cursor - h + 1
	}
	p.top = app.Clamp(p.top, 0, max(0, len(p.order)-h))
}

func (p *Pane) title() string {
	title := fmt.Sprintf("Runs %d", len(p.order))
	if total := len(p.app.Runs); len(p.order) != total {
		title = fmt.Sprintf("Runs %d of %d", len(p.order), total)
	}
	if p.filter != "" {
		title += " /" + text.Sanitize(p.filter)
	}
	return title
}

func (p *Pane) View() string {
	iw, ih := max(1, p.w-theme.BorderCells), max(1, p.h-theme.BorderCells)
	lines := p.renderTable(iw, ih)
	sc := theme.Scroll{}
	if len(p.order) > 0 {
		sc = theme.Scroll{Above: p.top, Below: max(0, len(p.order)-p.top-p.rowsH())}
	}
	return theme.Box(p.app.Theme, p.title(), lines, p.w, p.h, p.app.Focus == app.PaneRuns, sc)
}
