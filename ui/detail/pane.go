// Package detail is the Detail pane: the selected run, what it needs from you first, then where it stands,
// its stages (the completed ones folded), checklists, flags, gates, locks, problems, folder and time bars.
// Rows are focusable (a checklist item, a lock) and named by what they show (app.RowID), so the focus stays
// put while the run changes live. The root asks it for the focused row (Selection) when a key asks for an
// action and tells it when another run is selected (SelectionChanged); it imports no other component.
//
// pane.go: the pane, its keys, focus and scrolling.
package detail

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
)

type detailRow struct {
	id   app.RowID
	text string
}

// detailPane shows the selected run: first what it needs from you, then where it stands, its stages (the
// completed ones folded into one line), checklists, flags, gates, locks and problems. Its rows are drawn by
// hand rather than through a viewport because rows are focusable (a checklist item, a lock) and the
// focused one must stay put while the content around it changes live.
type Pane struct {
	app *app.App
	sel map[string]app.RowID // per run: the focused row
	// open holds, per run, the stages expanded with enter beside the current one, and whether the
	// completed stages are unfolded. Moving the cursor never changes which rows exist, so nothing below it
	// reflows.
	open     map[string]map[string]bool
	unfolded map[string]bool
	top      int
	w, h     int
	// Long rows: wrapped (w) with their indentation kept, or scrolled sideways by x cells.
	wrap bool
	x    int
}

func New(a *app.App) *Pane {
	return &Pane{app: a, sel: map[string]app.RowID{}, open: map[string]map[string]bool{}, unfolded: map[string]bool{}}
}

func (p *Pane) SetSize(w, h int) { p.w, p.h = w, h }

func (p *Pane) innerW() int { return max(1, p.w-theme.BorderCells) }
func (p *Pane) innerH() int { return max(1, p.h-theme.BorderCells) }

// selectionChanged is called by the root when another run is selected: Detail opens every run at its top
// with its current stage focused (in view where the pane is tall enough), also one visited before (a run left scrolled down to a lock came back
// with its first lines out of sight).
func (p *Pane) SelectionChanged() {
	p.top = 0
	clear(p.sel)
}

// pinned is how many of rows are Detail's first line ("Needs you: … → press U" / "Nothing to do: …"): they
// stay at the top of the pane while the rest scrolls under them, so at every size the pane says first what
// the run needs. h is the pane's inner height; the rows under them get what is left.
func (p *Pane) pinned(run model.Run, w, h int) (n, bodyH int) {
	n = min(len(p.attentionLine(run, w)), h)
	return n, max(1, h-n)
}

// selection is the focused row of the selected run, defaulting to its current stage.
func (p *Pane) Selection() app.RowID {
	run, ok := p.app.SelectedRun()
	if !ok {
		return app.RowID{}
	}
	return p.SelectionOf(run)
}

func (p *Pane) SelectionOf(run model.Run) app.RowID {
	if id, ok := p.sel[run.Key()]; ok {
		for _, r := range p.Rows(run, p.innerW()) {
			if r.id == id {
				return id
			}
		}
	}
	if st := run.Stage(run.CurrentStage); st != nil {
		if id := (app.RowID{Kind: app.RowStage, Stage: st.Key, Key: st.Key}); p.hasRow(run, id) {
			return id
		}
	}
	for _, r := range p.Rows(run, p.innerW()) {
		if r.id.Kind != app.RowText {
			return r.id
		}
	}
	return app.RowID{}
}

func (p *Pane) hasRow(run model.Run, id app.RowID) bool {
	for _, r := range p.Rows(run, p.innerW()) {
		if r.id == id {
			return true
		}
	}
	return false
}

// expanded reports whether a stage's checklist or outputs are shown: the current stage always, others when
// opened with enter.
func (p *Pane) expanded(run model.Run, stage string) bool {
	if strings.EqualFold(stage, run.CurrentStage) {
		return !p.open[run.Key()]["-"+stage]
	}
	return p.open[run.Key()][stage]
}

func (p *Pane) toggle(run model.Run, stage string) {
	o := p.open[run.Key()]
	if o == nil {
		o = map[string]bool{}
		p.open[run.Key()] = o
	}
	if strings.EqualFold(stage, run.CurrentStage) {
		o["-"+stage] = !o["-"+stage]
		return
	}
	o[stage] = !o[stage]
}

// NotHere is the actions that cannot apply to the focused row as it is now, by app.NotHere, the one rule
// the footer, the help overlay's "(not here)" and the refusal of a key pressed all follow.
func (p *Pane) NotHere() map[string]bool { return p.app.NotHereSet(p.Selection()) }

func (p *Pane) ShortHelp() []key.Binding {
	k := p.app.Keys
	run, ok := p.app.SelectedRun()
	if !ok {
		return k.BindingsOf(keys.ActBack, keys.ActNextPane, keys.ActHelp)
	}
	no := p.NotHere()
	var out []key.Binding
	switch sel := p.SelectionOf(run); sel.Kind {
	case app.RowItem:
		out = append(out, k.BindingsOf(keys.ActTick, keys.ActStep)...)
	case app.RowLock:
		out = append(out, k.BindingsOf(keys.ActUnlock)...)
	case app.RowFold:
		out = append(out, key.NewBinding(key.WithKeys("enter"), key.WithHelp(k.First(keys.ActOpen), "unfold")))
	case app.RowStage:
		out = append(out, k.BindingsOf(keys.ActRetry, keys.ActStep)...)
		out = append(out, key.NewBinding(key.WithKeys("enter"), key.WithHelp(k.First(keys.ActOpen), "expand")))
	}
	if b, ok := app.AttentionBinding(p.app, run); ok && run.Attention.NeedsYou && !keys.ContainsBinding(out, b) {
		out = append([]key.Binding{b}, out...)
	}
	if b, ok := keys.AgentBinding(k, run.Attention); ok && !keys.ContainsBinding(out, b) {
		out = append([]key.Binding{b}, out...)
	}
	out = k.Without(out, no)
	return keys.AppendNew(out, k.BindingsOf(keys.ActCopy, keys.ActBrief, keys.ActBack, keys.ActHelp)...)
}

func (p *Pane) FullHelp() [][]key.Binding {
	k := p.app.Keys
	return [][]key.Binding{k.BindingsOf(keys.ActUp, keys.ActDown, keys.ActTop, keys.ActBottom, keys.ActPageUp, keys.ActPageDown, keys.ActOpen, keys.ActBack),
		k.BindingsOf(keys.ActTick, keys.ActStep, keys.ActUnlock, keys.ActRetry, keys.ActPause, keys.ActUndo)}
}

func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	act := p.app.Keys.Of(km)
	switch act {
	case keys.ActWrap:
		p.wrap, p.x = !p.wrap, 0
		return nil
	case keys.ActScrollLeft, keys.ActScrollRight, keys.ActLineStart, keys.ActLineEnd:
		p.scrollSideways(act)
		return nil
	}
	if act == keys.ActOpen {
		run, ok := p.app.SelectedRun()
		if !ok {
			return nil
		}
		switch sel := p.SelectionOf(run); sel.Kind {
		case app.RowFold:
			p.unfolded[run.Key()] = !p.unfolded[run.Key()]
		case app.RowStage:
			p.toggle(run, sel.Stage)
		}
		return nil
	}
	p.move(act)
	return nil
}

func (p *Pane) move(act string) {
	run, ok := p.app.SelectedRun()
	if !ok {
		return
	}
	w, h := p.innerW(), p.innerH()
	n, h := p.pinned(run, w, h)
	rows := p.Rows(run, w)[n:]
	var ids []int
	for i, r := range rows {
		if r.id.Kind != app.RowText {
			ids = append(ids, i)
		}
	}
	if len(ids) == 0 {
		p.top = moveScroll(p.top, act, len(rows), h)
		return
	}
	cur := p.SelectionOf(run)
	pos := 0
	for i, ri := range ids {
		if rows[ri].id == cur {
			pos = i
		}
	}
	page := max(1, h/2)
	switch act {
	case keys.ActUp:
		pos--
	case keys.ActDown:
		pos++
	case keys.ActTop:
		pos = 0
	case keys.ActBottom:
		pos = len(ids) - 1
	case keys.ActPageUp:
		pos -= page
	case keys.ActPageDown:
		pos += page
	default:
		return
	}
	// Past the first or last focusable row, keys scroll the text around it (problems and hints below the
	// last lock are still reachable).
	if pos < 0 || pos > len(ids)-1 {
		p.top = moveScroll(p.top, act, len(rows), h)
		return
	}
	p.sel[run.Key()] = rows[ids[pos]].id
	idx := ids[pos]
	if idx < p.top {
		p.top = idx
	}
	if idx >= p.top+h {
		p.top = idx - h + 1
	}
	if act == keys.ActBottom {
		// The end of the text, as g shows its top: the last focusable row is focused, and the Time bars and
		// problems below it are shown (it stopped at the last phase with "↓ 30 more" on the border).
		p.top = max(0, len(rows)-h)
	}
	if act == keys.ActTop {
		p.top = 0
	}
}

func moveScroll(top int, act string, total, h int) int {
	switch act {
	case keys.ActUp:
		top--
	case keys.ActDown:
		top++
	case keys.ActTop:
		top = 0
	case keys.ActBottom:
		top = total
	case keys.ActPageUp:
		top -= h / 2
	case keys.ActPageDown:
		top += h / 2
	}
	return app.Clamp(top, 0, max(0, total-h))
}

func (p *Pane) title() string {
	if run, ok := p.app.SelectedRun(); ok {
		return "Detail " + text.Sanitize(run.ID)
	}
	return "Detail"
}

func (p *Pane) View() string {
	w, h := p.innerW(), p.innerH()
	t := p.app.Theme
	run, ok := p.app.SelectedRun()
	if !ok {
		return theme.Box(t, p.title(), []string{t.Dim.Render("no run selected")}, p.w, p.h, p.app.Focus == app.PaneDetail, theme.Scroll{})
	}
	all := p.Rows(run, w)
	n, bodyH := p.pinned(run, w, h)
	var out []string
	for _, r := range all[:n] {
		out = append(out, p.rowLines(r.text, w)...)
	}
	out = out[:min(len(out), h)]
	rows := all[n:]
	sel := p.SelectionOf(run)
	top := app.Clamp(p.top, 0, max(0, len(rows)-bodyH))
	_, moved := p.sel[run.Key()]
	for i, r := range rows {
		if moved && r.id == sel && r.id.Kind != app.RowText && i >= top+bodyH {
			// The row a key focused is always on screen, even in the few rows of a stacked layout. The
			// default one (the current stage) is not scrolled to: a run opens at its top, whose first line
			// names the current stage (at 80x24 Detail opened "↑ 1 more", that line hidden until g).
			top = i - bodyH + 1
			p.top = top
		}
	}
	for i := top; i < len(rows) && len(out) < h; i++ {
		for _, line := range p.rowLines(rows[i].text, w) {
			if len(out) >= h {
				break
			}
			if rows[i].id.Kind != app.RowText && rows[i].id == sel {
				line = app.SelectStyle(p.app, app.PaneDetail).Render(text.PadRight(text.Stripped(line), w))
			}
			out = append(out, line)
		}
	}
	sc := theme.Scroll{Above: top, Below: max(0, len(rows)-top-bodyH)}
	return theme.Box(t, p.title(), out, p.w, p.h, p.app.Focus == app.PaneDetail, sc)
}

// scrollSideways scrolls the detail rows (wrap off) by half a pane, or to either end of the widest.
func (p *Pane) scrollSideways(act string) {
	if p.wrap {
		p.app.Note("wrap is on: w turns it off to scroll sideways")
		return
	}
	w := p.innerW()
	widest := 0
	if run, ok := p.app.SelectedRun(); ok {
		for _, r := range p.Rows(run, w) {
			widest = max(widest, text.VisibleWidth(r.text))
		}
	}
	switch act {
	case keys.ActScrollLeft:
		p.x = max(0, p.x-max(1, w/2))
	case keys.ActScrollRight:
		p.x = min(p.x+max(1, w/2), max(0, widest-w+1))
	case keys.ActLineStart:
		p.x = 0
	case keys.ActLineEnd:
		p.x = max(0, widest-w+1)
	}
}

// rowLines draws one detail row at width w: wrapped into rows with its indentation kept, or windowed at x
// with ‹ › where it goes on.
func (p *Pane) rowLines(txt string, w int) []string {
	if p.wrap {
		return text.WrapStyled(txt, w)
	}
	if p.x == 0 {
		return []string{text.Truncate(txt, w)}
	}
	total := text.VisibleWidth(txt)
	s := "‹" + ansi.Cut(txt, p.x+1, p.x+w-1)
	if p.x+w-1 < total {
		s += "›"
	}
	return []string{s}
}
