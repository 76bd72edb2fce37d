// The timeline pane: the component the root routes to, drawing the timeline of the selected run and
// turning keys into its moves, searches and filters.

package timeline

import (
	"fmt"
	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// timelinePane shows the selected run's log: run.log through a windowed index for resumable runs, a
// timeline built from the run for jonggrang. The window is drawn by hand rather than by a viewport because a
// viewport holds all its content (O(all lines) per SetContent) and the log can be 1 GiB.
type Pane struct {
	timeline
	app     *app.App
	input   textinput.Model
	editing bool
	// The search prompt: which way it searches and whether the pattern is a regexp (tab switches).
	inForward, InRegex bool
	w, h               int
}

func New(a *app.App) *Pane {
	in := textinput.New()
	in.Prompt = text.SearchPrompt(true, false)
	st := in.Styles()
	st.Cursor.Blink = false
	in.SetStyles(st)
	p := &Pane{app: a, input: in}
	p.follow = true
	return p
}

func (p *Pane) SetSize(w, h int) {
	changed := p.InnerH() != max(1, h-theme.BorderCells) || p.width != max(1, w-theme.BorderCells)
	p.w, p.h = w, h
	p.width = max(1, w-theme.BorderCells)
	p.input.SetWidth(max(10, w-20))
	if changed {
		p.reload(p.InnerH())
	}
}

func (p *Pane) InnerH() int { return max(1, p.h-theme.BorderCells) }

func (p *Pane) Capturing() bool { return p.editing }

// LineInput is the footer's second line: the search prompt while typing, else a running search's progress
// or what the last search said (wrapped around, not found), like less's bottom line.
func (p *Pane) LineInput() string {
	if !p.editing {
		return p.status(time.Now())
	}
	return p.input.View()
}

func (p *Pane) ShortHelp() []key.Binding {
	k := p.app.Keys
	if p.editing {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "search")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	}
	if p.srch.running {
		return []key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp(k.First(keys.ActBack), "cancel search"))}
	}
	// In the timeline the filter key searches: the footer says so rather than "filter".
	out := append(k.Relabel(keys.ActFilter, "search"), k.BindingsOf(keys.ActSearchBack)...)
	if p.srch.re != nil {
		out = append(out, k.BindingsOf(keys.ActNextMatch, keys.ActPrevMatch, keys.ActOnlyMatch)...)
	}
	return append(out, k.BindingsOf(keys.ActOpen, keys.ActWrap, keys.ActNextError, keys.ActFollow, keys.ActCopy, keys.ActHelp)...)
}

func (p *Pane) FullHelp() [][]key.Binding {
	k := p.app.Keys
	return [][]key.Binding{k.BindingsOf(keys.ActUp, keys.ActDown, keys.ActTop, keys.ActBottom, keys.ActPageUp, keys.ActPageDown, keys.ActOpen),
		k.BindingsOf(keys.ActFilter, keys.ActSearchBack, keys.ActNextMatch, keys.ActPrevMatch, keys.ActOnlyMatch, keys.ActNextError, keys.ActPrevError),
		k.BindingsOf(keys.ActWrap, keys.ActScrollLeft, keys.ActScrollRight, keys.ActLineStart, keys.ActLineEnd, keys.ActFollow, keys.ActTimeFormat)}
}

// Update handles the timeline's keys and the messages of its log: opened, indexed, searched, ticked.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	h := p.InnerH()
	switch msg := msg.(type) {
	case app.TickMsg:
		p.poll(h)
	case LogOpenedMsg:
		p.opened(msg, h)
	case LogIndexedMsg:
		if msg.path == p.path {
			return p.indexed(h)
		}
	case SearchDoneMsg:
		p.found(msg, h)
	case SearchTickMsg:
		return p.searchTicked(msg)
	case CountDoneMsg:
		p.countDone(msg)
	case FilterDoneMsg:
		p.filterDone(msg, h)
	case tea.KeyPressMsg:
		return p.key(msg)
	}
	return nil
}

func (p *Pane) key(msg tea.KeyPressMsg) tea.Cmd {
	h := p.InnerH()
	p.width = max(1, p.w-theme.BorderCells)
	if p.editing {
		switch msg.String() {
		case "esc":
			p.editing = false
			p.input.Blur()
			return nil
		case "enter":
			p.editing = false
			p.input.Blur()
			pattern := p.input.Value()
			if pattern == "" {
				// As in less and vim: enter on an empty prompt searches for the last pattern again.
				pattern = p.srch.pattern
				if pattern == "" {
					pattern = p.last.pattern
				}
			}
			return p.setSearch(pattern, p.InRegex, p.inForward, h)
		case "tab":
			p.InRegex = !p.InRegex
			p.input.Prompt = text.SearchPrompt(p.inForward, p.InRegex)
			return nil
		case "ctrl+c":
			return app.QuitCmd()
		}
		var cmd tea.Cmd
		p.input, cmd = p.input.Update(msg)
		return cmd
	}
	p.marker = "" // what the last search said stays until the next key, as in less
	switch act := p.app.Keys.Of(msg); act {
	case keys.ActFilter, keys.ActSearchBack:
		p.editing = true
		p.inForward, p.InRegex = act == keys.ActFilter, p.srch.regex
		p.input.Prompt = text.SearchPrompt(p.inForward, p.InRegex)
		// The prompt starts empty, as the filter's does: the last pattern kept there took what was typed
		// as more of it (stage_start + lock_ → stage_startlock_, not found).
		p.input.SetValue("")
		return p.input.Focus()
	case keys.ActBack:
		p.CancelSearch()
	case keys.ActOpen:
		return p.openEntry()
	case keys.ActOnlyMatch:
		return p.toggleFiltered(h)
	case keys.ActWrap:
		p.toggleWrap(h)
	case keys.ActScrollLeft, keys.ActScrollRight, keys.ActLineStart, keys.ActLineEnd:
		p.hscroll(act, h)
	case keys.ActTimeFormat:
		p.absolute = !p.absolute
	case keys.ActFollow:
		p.toggleFollow(h)
	case keys.ActNextMatch, keys.ActPrevMatch:
		return p.findNext(act == keys.ActNextMatch, h)
	case keys.ActNextError, keys.ActPrevError:
		return p.findError(act == keys.ActNextError, h)
	case keys.ActUp, keys.ActDown, keys.ActTop, keys.ActBottom, keys.ActPageUp, keys.ActPageDown:
		p.move(act, h)
		p.updateRankIfPassed()
	}
	return nil
}

// Batch applies a watcher batch: appended lines of the open log, and a rebuilt timeline when the selected
// jonggrang run changed (its timeline is built from the run itself).
func (p *Pane) Batch(msg app.BatchMsg) tea.Cmd {
	h := p.InnerH()
	var indexed tea.Cmd
	for _, a := range msg.Appended {
		if a.Path == p.path {
			indexed = p.appended(a, h)
		}
	}
	run, ok := p.app.SelectedRun()
	if ok && run.Remote != nil {
		if key := app.RemoteLogKey(run); key != "" {
			for _, a := range msg.Appended {
				if a.Path == key {
					p.setMemory(run.Key(), p.app.RemoteLines(run), h)
				}
			}
		}
	}
	if ok && run.Kind == model.KindJonggrang {
		for _, r := range msg.Changed {
			if r.Key() == run.Key() {
				p.setMemory(run.Key(), jonggrangTimeline(run), h)
			}
		}
	}
	return indexed
}

// Sync points the timeline at the selected run: a jonggrang run's timeline is built from the run, a
// resumable run's log is opened in a command.
func (p *Pane) Sync() tea.Cmd {
	run, ok := p.app.SelectedRun()
	// Which of runwatch's actions were undone changes with the run (an undo appends its entry), not with
	// the log's lines: the marks follow the run on every update.
	defer func() { p.runLog = run.Log }()
	if !ok {
		if p.runPath != "" || p.src != nil {
			p.close()
		}
		return nil
	}
	h := p.InnerH()
	if run.Kind == model.KindJonggrang {
		if p.runPath != run.Key() {
			p.setMemory(run.Key(), jonggrangTimeline(run), h)
		}
		return nil
	}
	if run.Remote != nil {
		// The log is on the other machine: its history is fetched from there when the timeline opens, and
		// what its host streams is merged in (remotelog.go).
		if p.runPath != run.Key() {
			fetch := p.app.FetchRemoteTail(run)
			p.setMemory(run.Key(), p.app.RemoteLines(run), h)
			return fetch
		}
		return nil
	}
	path := ""
	if run.Log != nil {
		path = run.Log.Path
	}
	if p.runPath == run.StatePath && p.path == path {
		return nil
	}
	p.close()
	p.runPath, p.path = run.StatePath, path
	if path == "" {
		p.err = "this run has no run.log"
		return nil
	}
	if p.app.Opts.OpenLog == nil {
		p.err = "no log reader configured"
		return nil
	}
	p.opening = true
	open, runPath := p.app.Opts.OpenLog, run.StatePath
	return func() tea.Msg {
		src, err := open(path)
		return LogOpenedMsg{runPath: runPath, path: path, src: src, err: err}
	}
}

func (p *Pane) View() string {
	w, h := max(1, p.w-theme.BorderCells), p.InnerH()
	lines := p.renderLines(w, h)
	sc := theme.Scroll{}
	if p.src != nil && len(p.window) > 0 {
		sc = theme.Scroll{Above: p.windowFrom, Below: max(0, p.Len()-p.windowFrom-len(p.window))}
	}
	kind := model.KindResumable
	if run, ok := p.app.SelectedRun(); ok {
		kind = run.Kind
	}
	// The room box leaves the title: the border's corner and mark, a blank, and its "↑ N more".
	iw := max(0, p.w-theme.BorderCells)
	room := iw - 3
	if up := fmt.Sprintf(" ↑ %d more ", sc.Above); sc.Above > 0 && text.VisibleWidth(up) <= iw/3 {
		room -= text.VisibleWidth(up)
	}
	return theme.Box(p.app.Theme, p.titleFit(kind, room), lines, p.w, p.h, p.app.Focus == app.PaneTimeline, sc)
}

func (p *Pane) renderLines(w, h int) []string {
	t := p.app.Theme
	tl := &p.timeline
	switch {
	case tl.src == nil && tl.opening:
		return []string{t.Dim.Render("opening " + text.Truncate(text.Sanitize(tl.path), w-8) + " …")}
	case tl.src == nil && tl.err != "":
		return []string{t.Dim.Render(text.Truncate(tl.err, w))}
	case tl.src == nil:
		return []string{t.Dim.Render("no timeline")}
	}
	if len(tl.window) == 0 {
		if tl.filtered {
			return []string{t.Dim.Render("no line matches (yet): & shows the whole log")}
		}
		return []string{t.Dim.Render("(empty)")}
	}
	now := p.app.Now()
	if x, ok := tl.src.(exacter); ok && !x.Exact() {
		// The index still counts lines in the background: the next tick shows what it has (poll).
		p.app.ChangesAt(now.Add(countingRedraw))
	}
	sel := app.SelectStyle(p.app, app.PaneTimeline)
	var out []string
	for i := range tl.window {
		if len(out) >= h {
			break
		}
		idx := tl.windowFrom + i
		selected := idx == tl.cursor && p.app.Focus == app.PaneTimeline
		th := t
		th.Selected = sel
		l := tl.richLine(th, now, i, selected)
		if e := tl.windowEntries[i]; e.HasTime && !tl.absolute {
			p.app.AgeChanges(now, now.Sub(e.Time))
		}
		var rows []string
		if tl.wrap {
			// Only the rows that fit are drawn: a 50 KiB line on the bottom row costs one row.
			lay := l.Rows(w)
			skip := 0
			if i == 0 {
				skip = min(tl.topSkip, len(lay.Rows))
			}
			for k := skip; k < len(lay.Rows) && len(out)+len(rows) < h; k++ {
				rows = append(rows, l.DrawRow(lay, k))
			}
		} else {
			rows = []string{l.Window(tl.xoff, w)}
		}
		for _, r := range rows {
			if len(out) >= h {
				break
			}
			if selected {
				if pad := w - text.VisibleWidth(r); pad > 0 {
					r += sel.Render(strings.Repeat(" ", pad))
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// TookRemoteTail shows a fetched tail when its run's timeline is open.
func (p *Pane) TookRemoteTail(msg app.RemoteTailMsg) {
	p.app.TookRemoteTail(msg)
	if run, ok := p.app.SelectedRun(); ok && run.Remote != nil && app.RemoteLogKey(run) == msg.Key {
		p.setMemory(run.Key(), p.app.RemoteLines(run), p.InnerH())
	}
}
