// Package pager shows one text whole over the panes: a timeline entry with its continuation lines, the
// resume brief, the last message. It wraps with hanging indents or scrolls sideways, searches with the
// timeline's rules and copies; it is an app.Overlay and imports no other component.
//
// pager.go: the pager and its search.
package pager

import (
	"fmt"
	"regexp"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"runwatch/state/runlog"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
)

// Pager shows one text whole in the centre of the screen: a timeline entry with all its continuation lines
// (enter) or the resume brief (b). It wraps by default, keeping each line's indentation or list marker as
// the indent of its continuation rows; with wrap off it scrolls sideways. / and ctrl+r search it with the
// timeline's rules (literal, smart case, tab for regex), n/N go round, y copies the text.
//
// The rows are laid out in Update (layout) as ranges of their line, and View draws only the rows on screen,
// so an entry with a 50 MiB line opens, scrolls and searches without drawing all of it each frame.
// bubbles/viewport would hold every row drawn, and its soft wrap has no hanging indent and its horizontal
// scroll shows no continuation marks, which are the point of this view.
type Pager struct {
	app      *app.App
	copyable bool
	done     bool
	outerW   int
	outerH   int

	title string
	lines []string // sanitized, one per source line
	text  string   // the text as it was read, which y copies
	wrap  bool

	w, h      int       // inner size
	split     []hanging // each line's list marker or indentation and its text, for wrap
	widths    []int     // each line's width in cells
	rows      []pagerRow
	top, xoff int

	pattern string
	regex   bool
	forward bool
	re      *regexp.Regexp
	hits    []int // lines holding a match
	hit     int   // index into hits of the current match, -1 none
	note    string

	typing  bool
	input   textinput.Model
	inRegex bool
	inFwd   bool
}

// hanging is a line split by hangingPrefix.
type hanging struct{ prefix, body string }

// pagerRow is one row on screen: bytes [a, b) of line's text (its body when wrapped, after the prefix on the
// first row or the hanging indent after it; the whole line sideways).
type pagerRow struct {
	line, a, b int
	first      bool
	ind        int
}

func New(a *app.App, title, txt string, copyable bool) *Pager {
	p := &Pager{app: a, title: title, lines: text.SanitizeLines(trimNL(txt)), text: txt, copyable: copyable, wrap: true, hit: -1, forward: true}
	p.split = make([]hanging, len(p.lines))
	p.widths = make([]int, len(p.lines))
	for i, l := range p.lines {
		p.split[i].prefix, p.split[i].body = text.HangingPrefix(l)
		p.widths[i] = cellWidth(l)
	}
	return p
}

// cellWidth is the width of sanitized text in cells, walking it once (ASCII without the width table).
func cellWidth(s string) int {
	w := 0
	for i := 0; i < len(s); {
		next, cw := text.NextCell(s, i)
		w += cw
		i = next
	}
	return w
}

func trimNL(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}

// SetSize lays the text out for a box of w×h cells.
func (p *Pager) SetSize(w, h int) {
	p.outerW, p.outerH = w, h
	p.w, p.h = max(1, w-theme.BorderCells), max(1, h-theme.BorderCells)
	p.layout(p.app.Theme)
}

func (p *Pager) Done() bool { return p.done }

// Capturing is true while the search prompt reads a pattern: q is typed there, not a way out.
func (p *Pager) Capturing() bool { return p.typing }

// Update handles the pager's keys.
func (p *Pager) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	if !p.typing {
		switch p.app.Keys.Of(km) {
		case keys.ActHelp, keys.ActMessage:
			p.done = true
			return nil
		}
	}
	cmd, closed, txt := p.update(km, p.app.Keys, p.app.Theme)
	if closed {
		p.done = true
	}
	if txt != "" && p.copyable {
		return app.CopyText(p.app, txt)
	}
	return cmd
}

func (p *Pager) ShortHelp() []key.Binding {
	k := p.app.Keys
	if p.typing {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "search")),
			key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "regex/literal")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	}
	// In a pager the filter key searches (less, man), and its hint says so.
	search := k.Binding(keys.ActFilter)
	search.SetHelp(search.Help().Key, "search")
	out := append(k.BindingsOf(keys.ActDown, keys.ActUp, keys.ActPageDown), search)
	if p.re != nil {
		out = append(out, k.BindingsOf(keys.ActNextMatch, keys.ActPrevMatch)...)
	}
	out = append(out, k.BindingsOf(keys.ActWrap)...)
	if p.copyable {
		out = append(out, k.BindingsOf(keys.ActCopy)...)
	}
	return append(out, key.NewBinding(key.WithKeys("esc"), key.WithHelp(k.First(keys.ActBack), "close")))
}

func (p *Pager) FullHelp() [][]key.Binding {
	k := p.app.Keys
	return [][]key.Binding{p.ShortHelp(), k.BindingsOf(keys.ActSearchBack, keys.ActScrollLeft, keys.ActScrollRight, keys.ActLineStart, keys.ActLineEnd, keys.ActTop, keys.ActBottom)}
}

// LineInput is the footer's second line while the pager reads a search pattern.
func (p *Pager) LineInput() string { return p.prompt() }

// View draws the pager as a box with "↑/↓ N more" on its border; only the rows on screen are drawn.
func (p *Pager) View() string {
	end := min(len(p.rows), p.top+p.h)
	sc := theme.Scroll{Above: p.top, Below: max(0, len(p.rows)-end)}
	rows := make([]string, 0, end-p.top)
	for _, r := range p.rows[p.top:end] {
		rows = append(rows, p.drawRow(r, p.app.Theme))
	}
	return theme.Box(p.app.Theme, p.status(p.app.Keys), rows, p.outerW, p.outerH, true, sc)
}

// highlightContext is how far around a row the search's matches are looked for, so a match that a wrap
// cuts is highlighted on both rows without searching the whole of a huge line per frame.
const highlightContext = 256

// drawRow draws one row, with the matches of the search inside it highlighted.
func (p *Pager) drawRow(r pagerRow, t theme.Theme) string {
	txt := p.lines[r.line]
	lead := ""
	if p.wrap {
		txt = p.split[r.line].body
		lead = strings.Repeat(" ", r.ind)
		if r.first {
			lead = p.split[r.line].prefix
		}
	}
	end := r.b
	if !p.wrap {
		end = min(len(txt), text.CellOffset(txt, r.a, p.w+1)) // one cell more tells whether the line goes on
	}
	l := text.NewRichLine("", txt[r.a:end], nil)
	if p.re != nil {
		st := t.Match
		if p.hit >= 0 && p.hit < len(p.hits) && p.hits[p.hit] == r.line {
			// The line n/N moved to: of 8 matches alike, the current one could not be found.
			st = t.MatchCurrent
		}
		lo, hi := max(0, r.a-highlightContext), min(len(txt), end+highlightContext)
		for _, m := range p.re.FindAllStringIndex(txt[lo:hi], -1) {
			if m[1] > m[0] {
				l.Style(lo+m[0]-r.a, lo+m[1]-r.a, st)
			}
		}
	}
	if p.wrap {
		return lead + l.Render(0, len(l.Body))
	}
	// Sideways, the list marker scrolls with the text: nothing stays fixed.
	l.LeftMore, l.RightMore = r.a > 0, end < len(txt)
	return l.Window(0, p.w)
}

// layout splits the lines into rows for the pane's width: every row of every line when wrapped (a range
// per row, nothing drawn), one row per line at the horizontal offset otherwise.
func (p *Pager) layout(theme.Theme) {
	p.rows = p.rows[:0]
	for i, line := range p.lines {
		if p.wrap {
			l := &text.RichLine{Prefix: p.split[i].prefix, Body: p.split[i].body}
			lay := l.Rows(p.w)
			for k, r := range lay.Rows {
				p.rows = append(p.rows, pagerRow{line: i, a: max(0, r.A), b: max(0, r.B), first: k == 0, ind: lay.Ind})
			}
			continue
		}
		p.rows = append(p.rows, pagerRow{line: i, a: text.CellOffset(line, 0, p.xoff), b: len(line)})
	}
	p.top = app.Clamp(p.top, 0, max(0, len(p.rows)-p.h))
}

func (p *Pager) widest() int {
	w := 0
	for _, lw := range p.widths {
		w = max(w, lw)
	}
	return w
}

// update handles a key; closed reports that the pager should go away.
func (p *Pager) update(msg tea.KeyPressMsg, ks keys.KeyMap, t theme.Theme) (cmd tea.Cmd, closed bool, copyText string) {
	if p.typing {
		return p.updateInput(msg, t), false, ""
	}
	p.note = ""
	act := ks.Of(msg)
	switch act {
	case keys.ActBack, keys.ActBrief, keys.ActOpen:
		return nil, true, ""
	case keys.ActQuit:
		return tea.Quit, false, ""
	case keys.ActDown:
		p.top++
	case keys.ActUp:
		p.top--
	case keys.ActPageDown:
		p.top += max(1, p.h/2)
	case keys.ActPageUp:
		p.top -= max(1, p.h/2)
	case keys.ActTop:
		p.top = 0
	case keys.ActBottom:
		p.top = len(p.rows)
	case keys.ActWrap:
		p.wrap = !p.wrap
		p.xoff = 0
		line := p.lineAtTop()
		p.layout(t)
		p.showLine(line)
	case keys.ActScrollLeft, keys.ActScrollRight, keys.ActLineStart, keys.ActLineEnd:
		if p.wrap {
			p.note = "wrap is on: w turns it off to scroll sideways"
			return nil, false, ""
		}
		step := max(1, p.w/2)
		switch act {
		case keys.ActScrollLeft:
			p.xoff = max(0, p.xoff-step)
		case keys.ActScrollRight:
			p.xoff = min(p.xoff+step, max(0, p.widest()-p.w+1))
		case keys.ActLineStart:
			p.xoff = 0
		case keys.ActLineEnd:
			p.xoff = max(0, p.widest()-p.w+1)
		}
		p.layout(t)
	case keys.ActFilter, keys.ActSearchBack:
		p.typing, p.inFwd, p.inRegex = true, act == keys.ActFilter, p.regex
		p.input = textinput.New()
		p.input.Prompt = ""
		// Empty, as the filter's prompt; enter on it searches for the last pattern again (less, vim).
		p.input.SetValue("")
		return p.input.Focus(), false, ""
	case keys.ActNextMatch, keys.ActPrevMatch:
		p.next(p.forward == (act == keys.ActNextMatch))
	case keys.ActCopy:
		if !p.copyable {
			p.note = "nothing to copy here"
		}
		return nil, false, p.text
	}
	p.top = app.Clamp(p.top, 0, max(0, len(p.rows)-p.h))
	return nil, false, ""
}

func (p *Pager) updateInput(msg tea.KeyPressMsg, t theme.Theme) tea.Cmd {
	switch msg.String() {
	case "esc":
		p.typing = false
		return nil
	case "tab":
		p.inRegex = !p.inRegex
		return nil
	case "enter":
		p.typing = false
		pattern := p.input.Value()
		if pattern == "" {
			pattern = p.pattern
		}
		p.SetSearch(pattern, p.inRegex, p.inFwd, t)
		return nil
	}
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(msg)
	return cmd
}

func (p *Pager) SetSearch(pattern string, regex, forward bool, t theme.Theme) {
	if pattern == "" {
		p.re, p.pattern, p.hits, p.hit = nil, "", nil, -1
		return
	}
	re, err := runlog.CompilePattern(pattern, regex)
	if err != nil {
		p.note = text.Sanitize(err.Error())
		return
	}
	p.re, p.pattern, p.regex, p.forward = re, pattern, regex, forward
	p.hits = p.hits[:0]
	for i, l := range p.lines {
		if re.MatchString(l) {
			p.hits = append(p.hits, i)
		}
	}
	p.hit = -1 // the rows stay: drawRow highlights the matches on screen
	if len(p.hits) == 0 {
		p.note = "pattern not found"
		return
	}
	p.next(forward)
}

// next moves to the next matching line after (or before) the one at the top, wrapping with a note.
func (p *Pager) next(forward bool) {
	if len(p.hits) == 0 {
		if p.re == nil {
			p.note = "no search: press / first"
		} else {
			p.note = "pattern not found"
		}
		return
	}
	cur := p.lineAtTop()
	if p.hit >= 0 {
		cur = p.hits[p.hit]
	}
	wrapped, only := false, len(p.hits) == 1 && p.hit == 0
	if forward {
		i := 0
		for i < len(p.hits) && (p.hits[i] < cur || (p.hit >= 0 && p.hits[i] == cur)) {
			i++
		}
		if i == len(p.hits) {
			i, wrapped = 0, p.hit >= 0 || p.hits[0] < cur
		}
		p.hit = i
	} else {
		i := len(p.hits) - 1
		for i >= 0 && (p.hits[i] > cur || (p.hit >= 0 && p.hits[i] == cur)) {
			i--
		}
		if i < 0 {
			i, wrapped = len(p.hits)-1, true
		}
		p.hit = i
	}
	p.note = text.WrapNote(wrapped, only, forward, "match")
	p.showLine(p.hits[p.hit])
}

func (p *Pager) lineAtTop() int {
	if p.top < len(p.rows) {
		return p.rows[p.top].line
	}
	return 0
}

// showLine scrolls so line's first row is on screen, a third of the way down when it was not.
func (p *Pager) showLine(line int) {
	for r, row := range p.rows {
		if row.line == line {
			if r < p.top || r >= p.top+p.h {
				p.top = max(0, r-p.h/3)
			}
			break
		}
	}
	p.top = app.Clamp(p.top, 0, max(0, len(p.rows)-p.h))
}

// status is the pager's title line: what it shows, where in it, the search and its count.
func (p *Pager) status(ks keys.KeyMap) string {
	tags := []string{p.title}
	if p.pattern != "" {
		q := "/" + text.Sanitize(p.pattern)
		if p.regex {
			q += " (regex)"
		}
		if p.hit >= 0 {
			q += fmt.Sprintf(" match %d/%d", p.hit+1, len(p.hits))
		} else {
			q += fmt.Sprintf(" %d matches", len(p.hits))
		}
		tags = append(tags, q)
	}
	if !p.wrap && p.xoff > 0 {
		tags = append(tags, fmt.Sprintf("→ col %d", p.xoff+1))
	}
	if p.note != "" {
		tags = append(tags, p.note)
	}
	// On a narrow screen the title gives way, so the search's count and the note stay in view.
	full := text.Sanitize(strings.Join(tags, " · "))
	iw := max(0, p.outerW-theme.BorderCells)
	room := iw - 3
	if up := fmt.Sprintf(" ↑ %d more ", p.top); p.top > 0 && text.VisibleWidth(up) <= iw/3 {
		room -= text.VisibleWidth(up)
	}
	if len(tags) == 1 || text.VisibleWidth(full) <= room {
		return full
	}
	rest := text.Sanitize(strings.Join(tags[1:], " · "))
	return text.Truncate(text.Sanitize(p.title), max(8, room-text.VisibleWidth(rest)-3)) + " · " + rest
}

// prompt is the search line while typing, "" otherwise.
func (p *Pager) prompt() string {
	if !p.typing {
		return ""
	}
	return text.SearchPrompt(p.inFwd, p.inRegex) + p.input.View()
}

// pagerState is what can be read of a pager from outside it (the tests of the dashboard, which open pagers
// through keys): copies, so nothing outside can change the pager.
type State struct {
	Title, Text, Pattern string
	Input                string // the search prompt's text
	Lines                []string
	Hits                 int // lines holding a match
	Hit                  int // index of the current match among them, -1 none
	Searching            bool
	Top, Rows, Width     int // first row shown, rows laid out, inner width
	Wrap                 bool
}

func (p *Pager) State() State {
	return State{
		Title: p.title, Text: p.text, Pattern: p.pattern, Input: p.input.Value(), Lines: p.lines,
		Hits: len(p.hits), Hit: p.hit, Searching: p.re != nil, Top: p.top, Rows: len(p.rows), Width: p.w, Wrap: p.wrap,
	}
}

// DrawAll draws every row laid out, not only those on screen.
func (p *Pager) DrawAll() []string {
	out := make([]string, 0, len(p.rows))
	for _, r := range p.rows {
		out = append(out, p.drawRow(r, p.app.Theme))
	}
	return out
}
