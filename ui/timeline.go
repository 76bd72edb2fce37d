package ui

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"runwatch/model"
	"runwatch/state/runlog"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
)

// errorPattern finds the entries that e/E jump between: blocked stages, failures and errors.
var errorPattern = regexp.MustCompile(`(?i)(blocked|error|\berr=|fail|panic|fatal)`)

type timeline struct {
	runPath string
	path    string // the log file, or "" for a timeline built from the run
	src     app.LogSource
	err     string
	opening bool

	window []string
	// windowEntries parses window line by line, done in reload (Update) so View only draws.
	windowEntries []model.LogEntry
	windowFrom    int

	top, cursor int
	follow      bool
	absolute    bool

	srch   tlSearch
	marker string // e.g. "log truncated", shown once in the title

	seq    int                // the search whose answer is awaited
	cancel context.CancelFunc // cancels that search

	// filtered shows only the entries the search matches, each whole; windowLines says which log line
	// each window line is.
	filtered    bool
	windowLines []int
	// wrap soft-wraps long lines; off, xoff is the horizontal scroll in cells of the message column.
	wrap          bool
	topSkip       int // wrapped rows of the top line scrolled off above the pane
	xoff          int
	width, height int
	// long holds, for window lines longer than the index keeps (runlog.MaxLineBytes), the part of the line
	// at xoff read from the file, so horizontal scroll reaches the end of a line of any length.
	long map[int]longPart
}

// longPart is a horizontal window of a line read from the file.
type longPart struct {
	text        string // sanitized
	left, right bool   // the line goes on to the left / right
}

// lineByter reads part of a line of any length (runlog.Index).
type lineByter interface {
	LineBytes(line int, off int64, n int) ([]byte, int64, error)
}

// lineSource is the part of a LogSource the timeline lists lines from.
type lineSource interface {
	Len() int
	Lines(from, n int) []string
}

// shown is what the timeline lists: the log, or only its matching lines.
func (tl *timeline) shown() lineSource {
	if tl.filtered && tl.srch.filter != nil {
		return filteredSource{base: tl.src, f: tl.srch.filter}
	}
	return tl.src
}

// logLine is the log line number of the timeline's line i (they differ when filtered).
func (tl *timeline) logLine(i int) (int, bool) {
	if !tl.filtered || tl.srch.filter == nil {
		return i, true
	}
	if j := i - tl.windowFrom; j >= 0 && j < len(tl.windowLines) {
		return tl.windowLines[j], true
	}
	return filteredSource{base: tl.src, f: tl.srch.filter}.line(i)
}

func (tl *timeline) len() int {
	if tl.src == nil {
		return 0
	}
	return tl.shown().Len()
}

// reload fetches the visible window. It is the only place the timeline reads the log, and it reads only h
// lines, so a 1 GiB log costs what a 1 KiB one does.
func (tl *timeline) reload(h int) {
	if tl.src == nil || h <= 0 {
		tl.window, tl.windowEntries = nil, nil
		return
	}
	if r, ok := tl.src.(renumberer); ok {
		// The index replaced its estimate of the lines before its tail with the real count: the line under
		// the cursor now has another number.
		if shift := r.Renumbered(); shift != 0 && !tl.follow {
			tl.cursor, tl.top = max(0, tl.cursor+shift), max(0, tl.top+shift)
		}
	}
	n := tl.len()
	if tl.follow {
		tl.cursor = max(0, n-1)
	}
	tl.cursor = app.Clamp(tl.cursor, 0, max(0, n-1))
	if tl.cursor < tl.top {
		tl.top = tl.cursor
	}
	if tl.cursor >= tl.top+h {
		tl.top = tl.cursor - h + 1
	}
	tl.top = app.Clamp(tl.top, 0, max(0, n-h))
	tl.height = h
	tl.readWindow(h)
	tl.topSkip = 0
	if tl.wrap && tl.width > 0 && tl.cursor > tl.top && tl.rowsThrough(tl.cursor) > h {
		// Wrapped lines take several rows and the cursor line would end below the pane: put its last row
		// on the bottom row, with the rows above it filled from the lines above (the top one maybe in part,
		// as less does).
		tl.top = max(0, tl.cursor-h+1)
		tl.readWindow(h)
		rows, top := 0, tl.cursor
		for ; top >= tl.top; top-- {
			rows += tl.rowCount(top - tl.windowFrom)
			if rows >= h {
				break
			}
		}
		top = max(top, tl.top)
		if top == tl.cursor {
			rows = h // a cursor line taller than the pane shows from its start
		}
		tl.topSkip = max(0, rows-h)
		if top != tl.top {
			tl.top = top
			tl.readWindow(h)
		}
	}
	tl.readLong()
	tl.srch.rankOK = tl.srch.rankOK && tl.srch.rankLine == tl.cursor
}

func (tl *timeline) readWindow(h int) {
	tl.windowLines = nil
	if f, ok := tl.shown().(filteredSource); ok {
		tl.windowLines = f.f.Lines(tl.top, h)
		tl.window = f.linesOf(tl.windowLines)
	} else {
		tl.window = tl.src.Lines(tl.top, h)
	}
	tl.windowFrom = tl.top
	tl.windowEntries = make([]model.LogEntry, len(tl.window))
	for i, raw := range tl.window {
		tl.windowEntries[i] = parseLine(raw)
	}
}

// rowsThrough is the rows lines top..line take when wrapped.
func (tl *timeline) rowsThrough(line int) int {
	rows := 0
	for i := tl.top; i <= line; i++ {
		rows += tl.rowCount(i - tl.windowFrom)
	}
	return rows
}

func (tl *timeline) rowCount(i int) int {
	if i < 0 || i >= len(tl.window) {
		return 1
	}
	return len(tl.richLine(theme.Theme{}, time.Time{}, i, false).Rows(tl.width).Rows)
}

// readLong reads, for lines cut by the index's line cap, the part horizontal scroll shows past the cut.
func (tl *timeline) readLong() {
	tl.long = nil
	lb, ok := tl.src.(lineByter)
	if !ok || tl.wrap || tl.xoff == 0 || tl.width <= 0 {
		return
	}
	for i, raw := range tl.window {
		if !isCutLine(raw) {
			continue
		}
		line, ok := tl.logLine(tl.windowFrom + i)
		if !ok {
			continue
		}
		off := int64(bodyOffset(raw, tl.windowEntries[i]) + tl.xoff)
		b, total, err := lb.LineBytes(line, off, tl.width*4+8)
		if err != nil {
			continue
		}
		if tl.long == nil {
			tl.long = map[int]longPart{}
		}
		tl.long[i] = longPart{text: text.Sanitize(trimPartialRunes(b)), left: true, right: off+int64(len(b)) < total}
	}
}

// isCutLine reports a line the index cut at runlog.MaxLineBytes.
func isCutLine(raw string) bool {
	return len(raw) > runlog.MaxLineBytes && strings.HasSuffix(raw, " bytes elided)")
}

// bodyOffset is where the message starts in a raw line: after `[timestamp] ` for an entry, 0 for a
// continuation line.
func bodyOffset(raw string, e model.LogEntry) int {
	if !e.HasTime {
		return 0
	}
	i := strings.IndexByte(raw, ']') + 1
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t') {
		i++
	}
	return i
}

// trimPartialRunes drops the bytes of runes cut at either end of a window read from the middle of a line.
func trimPartialRunes(b []byte) string {
	for len(b) > 0 && b[0]&0xC0 == 0x80 {
		b = b[1:]
	}
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			break
		}
		if c&0xC0 == 0xC0 { // a rune start: complete only if it has all its bytes
			if need := runeLen(c); need > k {
				b = b[:len(b)-k]
			}
			break
		}
	}
	return string(b)
}

func runeLen(c byte) int {
	switch {
	case c&0xE0 == 0xC0:
		return 2
	case c&0xF0 == 0xE0:
		return 3
	}
	return 4
}

func (tl *timeline) opened(msg logOpenedMsg, h int) {
	if msg.runPath != tl.runPath || msg.path != tl.path {
		if msg.src != nil {
			msg.src.Close()
		}
		return
	}
	tl.opening = false
	if msg.err != nil {
		tl.err = text.Sanitize(msg.err.Error())
		return
	}
	tl.src = msg.src
	tl.follow = true
	tl.reload(h)
}

// renumberer is a LogSource whose line numbers can move once (runlog.Index while it counts the head).
type renumberer interface{ Renumbered() int }

// exacter is a LogSource that may still be counting lines; a tick redraws what it has.
type exacter interface{ Exact() bool }

// countingRedraw is how often the timeline redraws while its index still counts the log's lines.
const countingRedraw = time.Second

// poll runs on the clock tick: an index still counting fills in lines and may renumber them.
func (tl *timeline) poll(h int) {
	_, counting := tl.src.(exacter)
	_, moving := tl.src.(renumberer)
	if counting || moving {
		// reload applies any renumbering and reads the h visible lines, which is all a tick costs.
		tl.reload(h)
	}
}

// waiter is a LogSource that indexes appended bytes in the background (runlog.Index).
type waiter interface {
	Wait(ctx context.Context) error
}

type logIndexedMsg struct{ path string }

// indexWait bounds how long a refresh waits for the background indexer. Once the head is counted, appended
// bytes are indexed in microseconds and the wait ends at once; while a huge head is still being counted,
// Wait also waits for that, so the bound keeps new lines from waiting on it for long.
const indexWait = 100 * time.Millisecond

// appended refreshes the log after the watcher saw it grow. For a background index it returns a command
// that redraws once the new bytes are indexed.
func (tl *timeline) appended(a app.LogAppend, h int) tea.Cmd {
	if tl.src == nil {
		return nil
	}
	truncated, err := tl.src.Refresh()
	if err != nil {
		tl.err = text.Sanitize(err.Error())
	}
	switch {
	case truncated || a.Truncated:
		tl.marker = "log truncated; reloaded"
		tl.top, tl.cursor = 0, 0
	case a.Rotated:
		tl.marker = "log rotated; reloaded"
	}
	var recount tea.Cmd
	if truncated || a.Truncated || a.Rotated {
		tl.filtered = false
		tl.srch.stopFilter()
		tl.srch.filter = nil
		recount = tl.startCount()
	}
	tl.reload(h)
	w, ok := tl.src.(waiter)
	if !ok {
		return tea.Batch(recount, tl.runCount(), tl.runFilter())
	}
	path := tl.path
	return tea.Batch(recount, func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), indexWait)
		defer cancel()
		w.Wait(ctx) // a timeout or error still redraws what is indexed; errors surface on the next Refresh
		return logIndexedMsg{path: path}
	})
}

// indexed redraws once appended bytes are indexed, and counts the matches among them.
func (tl *timeline) indexed(h int) tea.Cmd {
	tl.reload(h)
	return tea.Batch(tl.runCount(), tl.runFilter())
}

func (tl *timeline) setMemory(runPath string, lines []string, h int) {
	if tl.runPath != runPath || tl.path != "" {
		tl.close()
		tl.runPath, tl.path = runPath, ""
		tl.follow = true
	}
	tl.src = &memSource{lines: lines}
	if tl.srch.re != nil {
		tl.startCount() // in memory: counted at once, no command
		if tl.filtered {
			tl.startFilter()
		}
	}
	tl.reload(h)
}

func (tl *timeline) close() {
	if tl.cancel != nil {
		tl.cancel()
	}
	if tl.src != nil {
		tl.src.Close()
	}
	tl.srch.stopCount()
	tl.srch.stopFilter()
	srch := tlSearch{pattern: tl.srch.pattern, regex: tl.srch.regex, re: tl.srch.re, forward: tl.srch.forward}
	*tl = timeline{follow: true, absolute: tl.absolute, srch: srch, wrap: tl.wrap, width: tl.width, height: tl.height}
}

// timelinePane shows the selected run's log: run.log through a windowed index for resumable runs, a
// timeline built from the run for jonggrang. The window is drawn by hand rather than by a viewport because a
// viewport holds all its content (O(all lines) per SetContent) and the log can be 1 GiB.
type timelinePane struct {
	timeline
	app     *app.App
	input   textinput.Model
	editing bool
	// The search prompt: which way it searches and whether the pattern is a regexp (tab switches).
	inForward, inRegex bool
	w, h               int
}

func newTimelinePane(a *app.App) *timelinePane {
	in := textinput.New()
	in.Prompt = text.SearchPrompt(true, false)
	st := in.Styles()
	st.Cursor.Blink = false
	in.SetStyles(st)
	p := &timelinePane{app: a, input: in}
	p.follow = true
	return p
}

func (p *timelinePane) SetSize(w, h int) {
	changed := p.innerH() != max(1, h-theme.BorderCells) || p.width != max(1, w-theme.BorderCells)
	p.w, p.h = w, h
	p.width = max(1, w-theme.BorderCells)
	p.input.SetWidth(max(10, w-20))
	if changed {
		p.reload(p.innerH())
	}
}

func (p *timelinePane) innerH() int { return max(1, p.h-theme.BorderCells) }

func (p *timelinePane) Capturing() bool { return p.editing }

// lineInput is the footer's second line: the search prompt while typing, else a running search's progress
// or what the last search said (wrapped around, not found), like less's bottom line.
func (p *timelinePane) LineInput() string {
	if !p.editing {
		return p.status(time.Now())
	}
	return p.input.View()
}

func (p *timelinePane) ShortHelp() []key.Binding {
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

func (p *timelinePane) FullHelp() [][]key.Binding {
	k := p.app.Keys
	return [][]key.Binding{k.BindingsOf(keys.ActUp, keys.ActDown, keys.ActTop, keys.ActBottom, keys.ActPageUp, keys.ActPageDown, keys.ActOpen),
		k.BindingsOf(keys.ActFilter, keys.ActSearchBack, keys.ActNextMatch, keys.ActPrevMatch, keys.ActOnlyMatch, keys.ActNextError, keys.ActPrevError),
		k.BindingsOf(keys.ActWrap, keys.ActScrollLeft, keys.ActScrollRight, keys.ActLineStart, keys.ActLineEnd, keys.ActFollow, keys.ActTimeFormat)}
}

// Update handles the timeline's keys and the messages of its log: opened, indexed, searched, ticked.
func (p *timelinePane) Update(msg tea.Msg) tea.Cmd {
	h := p.innerH()
	switch msg := msg.(type) {
	case app.TickMsg:
		p.poll(h)
	case logOpenedMsg:
		p.opened(msg, h)
	case logIndexedMsg:
		if msg.path == p.path {
			return p.indexed(h)
		}
	case searchDoneMsg:
		p.found(msg, h)
	case searchTickMsg:
		return p.searchTicked(msg)
	case countDoneMsg:
		p.countDone(msg)
	case filterDoneMsg:
		p.filterDone(msg, h)
	case tea.KeyPressMsg:
		return p.key(msg)
	}
	return nil
}

func (p *timelinePane) key(msg tea.KeyPressMsg) tea.Cmd {
	h := p.innerH()
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
			}
			return p.setSearch(pattern, p.inRegex, p.inForward, h)
		case "tab":
			p.inRegex = !p.inRegex
			p.input.Prompt = text.SearchPrompt(p.inForward, p.inRegex)
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
		p.inForward, p.inRegex = act == keys.ActFilter, p.srch.regex
		p.input.Prompt = text.SearchPrompt(p.inForward, p.inRegex)
		// The prompt starts empty, as the filter's does: the last pattern kept there took what was typed
		// as more of it (stage_start + lock_ → stage_startlock_, not found).
		p.input.SetValue("")
		return p.input.Focus()
	case keys.ActBack:
		p.cancelSearch()
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

// batch applies a watcher batch: appended lines of the open log, and a rebuilt timeline when the selected
// jonggrang run changed (its timeline is built from the run itself).
func (p *timelinePane) batch(msg app.BatchMsg) tea.Cmd {
	h := p.innerH()
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

// sync points the timeline at the selected run: a jonggrang run's timeline is built from the run, a
// resumable run's log is opened in a command.
func (p *timelinePane) sync() tea.Cmd {
	run, ok := p.app.SelectedRun()
	if !ok {
		if p.runPath != "" || p.src != nil {
			p.close()
		}
		return nil
	}
	h := p.innerH()
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
		return logOpenedMsg{runPath: runPath, path: path, src: src, err: err}
	}
}

func (tl *timeline) move(act string, h int) {
	n := tl.len()
	page := max(1, h/2)
	switch act {
	case keys.ActUp:
		tl.cursor--
	case keys.ActDown:
		tl.cursor++
	case keys.ActTop:
		tl.cursor = 0
	case keys.ActBottom:
		tl.cursor = n - 1
	case keys.ActPageUp:
		tl.cursor -= page
	case keys.ActPageDown:
		tl.cursor += page
	}
	tl.cursor = app.Clamp(tl.cursor, 0, max(0, n-1))
	// Scrolling up pauses follow; arriving at the end resumes it, as in `less +F` and lnav.
	tl.follow = n == 0 || tl.cursor >= n-1
	tl.reload(h)
}

func (tl *timeline) toggleFollow(h int) {
	tl.follow = !tl.follow
	tl.reload(h)
}

// setSearch compiles the query and finds its first match from the cursor, in the direction it was asked
// for, wrapping at the end; the matches are counted in the background.
func (tl *timeline) setSearch(q string, regex, forward bool, h int) tea.Cmd {
	if q == "" {
		tl.srch.stopCount()
		tl.srch.stopFilter()
		tl.srch = tlSearch{}
		tl.filtered = false
		tl.reload(h)
		return nil
	}
	if err := tl.srch.compile(q, regex); err != nil {
		tl.marker = text.Sanitize(err.Error())
		return nil
	}
	tl.srch.forward = forward
	wasFiltered := tl.filtered
	if wasFiltered {
		tl.unfilter()
	}
	count := tl.startCount()
	if wasFiltered {
		return tea.Batch(count, tl.filterFrom(tl.cursor, h))
	}
	return tea.Batch(count, tl.find(findMatch, tl.cursor+step(forward), forward, h))
}

// findNext is n (same direction as the search) and N (the other way).
func (tl *timeline) findNext(same bool, h int) tea.Cmd {
	if tl.srch.re == nil {
		tl.marker = "no search: press / first"
		return nil
	}
	forward := tl.srch.forward == same
	from := tl.cursor
	if line, ok := tl.logLine(tl.cursor); ok {
		from = line // filtered: the search runs over the log, and its hit is shown in the filtered view
	}
	return tl.find(findMatch, from+step(forward), forward, h)
}

func (tl *timeline) findError(forward bool, h int) tea.Cmd {
	if tl.filtered {
		tl.marker = "e/E work on the whole log: press & to show it"
		return nil
	}
	return tl.find(findError, tl.cursor+step(forward), forward, h)
}

func step(forward bool) int {
	if forward {
		return 1
	}
	return -1
}

type findKind int

const (
	findMatch findKind = iota
	findError
)

// contextSearcher is a LogSource whose searches may run off the UI goroutine and be abandoned (runlog.Index:
// a search over a 1 GiB log takes seconds and must not freeze the dashboard).
type contextSearcher interface {
	SearchContext(ctx context.Context, re *regexp.Regexp, from int, forward bool) (int, bool)
}

// levelFinder finds entries by the level runlog classifies them with, the same classification the timeline
// colours by, so e/E stop exactly at the lines shown as errors.
type levelFinder interface {
	NextLevel(from int, level model.Level, forward bool) (int, bool)
}

type searchDoneMsg struct {
	seq     int
	kind    findKind
	line    int
	ok      bool
	wrapped bool
	forward bool
	err     error
}

// find looks for the next match (wrapping around, like less and vim) or error (not wrapping: e at the last
// error says so). In-memory sources answer at once; a file index answers in a command that shows its
// progress and can be cancelled, and a newer search cancels an older one.
func (tl *timeline) find(kind findKind, from int, forward bool, h int) tea.Cmd {
	if tl.src == nil || tl.src.Len() == 0 {
		tl.marker = notFound(kind)
		return nil
	}
	n := tl.src.Len()     // the log's lines, also when filtered: from is a log line
	startWrapped := false // "next" from the last line starts over at the top: that is a wrap too
	if kind == findMatch {
		startWrapped = from < 0 || from >= n
		from = (from%n + n) % n
	} else if from < 0 || from >= n {
		tl.marker = notFound(kind)
		return nil
	}
	if tl.cancel != nil {
		tl.cancel()
		tl.cancel = nil
	}
	tl.seq++
	seq, src, re := tl.seq, tl.src, tl.srch.re
	fd, async := src.(finder)
	if !async {
		msg := searchDoneMsg{seq: seq, kind: kind, forward: forward}
		if kind == findError {
			msg.line, msg.ok = src.Search(errorPattern, from, forward)
		} else if ms, ok := src.(*memSource); ok {
			hit, err := runlog.FindLines(ms.lines, re, from, forward)
			msg.line, msg.ok, msg.wrapped = hit.Line, err == nil, hit.Wrapped || startWrapped
		} else {
			msg.line, msg.ok = src.Search(re, from, forward)
		}
		tl.found(msg, h)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	tl.cancel = cancel
	tl.marker = ""
	tl.srch.running, tl.srch.started, tl.srch.prog = true, time.Now(), &runlog.Progress{}
	prog := tl.srch.prog
	search := func() tea.Msg {
		msg := searchDoneMsg{seq: seq, kind: kind, forward: forward}
		switch lf, isLF := src.(levelFinder); {
		case kind == findError && isLF:
			// NextLevel has no context; errors are common, so it returns soon in real logs.
			msg.line, msg.ok = lf.NextLevel(from, model.LevelError, forward)
		case kind == findError:
			cs, _ := src.(contextSearcher)
			if cs != nil {
				msg.line, msg.ok = cs.SearchContext(ctx, errorPattern, from, forward)
			}
		default:
			hit, err := fd.Find(ctx, re, from, forward, prog)
			msg.line, msg.ok, msg.wrapped, msg.err = hit.Line, err == nil, hit.Wrapped || startWrapped, err
		}
		return msg
	}
	return tea.Batch(search, tl.tickCmd())
}

func notFound(kind findKind) string {
	if kind == findError {
		return "no more errors"
	}
	return "pattern not found"
}

func (tl *timeline) found(msg searchDoneMsg, h int) {
	if msg.seq != tl.seq {
		return // cancelled, or replaced by a newer search
	}
	tl.srch.running = false
	if tl.cancel != nil {
		tl.cancel()
		tl.cancel = nil
	}
	if !msg.ok {
		switch {
		case msg.err != nil && errors.Is(msg.err, context.Canceled):
			tl.marker = "search cancelled"
		case msg.err != nil && !errors.Is(msg.err, runlog.ErrNoMatch):
			tl.marker = text.Sanitize(msg.err.Error())
		default:
			tl.marker = notFound(msg.kind)
		}
		return
	}
	if r, ok := tl.src.(renumberer); ok {
		// The hit is in counted line numbers (a search waits for the count); a renumbering still pending
		// from the estimate would otherwise move the cursor off it.
		r.Renumbered()
	}
	tl.marker = text.WrapNote(msg.wrapped, msg.forward)
	tl.follow = false
	if tl.filtered && tl.srch.filter != nil {
		// The hit's entry is in the filtered view once the filter has read that far.
		k, ok := tl.srch.filter.Pos(msg.line)
		if shown, _, _ := tl.srch.filter.Len(); !ok || k >= shown {
			tl.marker = fmt.Sprintf("the next match (line %d) is past what the filter has read so far", msg.line+1)
			return
		}
		tl.cursor = k
		tl.top = max(0, k-h/3)
		tl.reload(h)
		return
	}
	tl.cursor = msg.line
	// Put the match a third of the way down, so its context above is visible.
	tl.top = max(0, msg.line-h/3)
	tl.reload(h)
	tl.srch.rankOK = false
	tl.updateRank()
}

// toggleFiltered switches between highlighting the matches and showing only the entries that match, each
// whole (less's &, lnav's filter-in), keeping the cursor on the same log line where it can.
func (tl *timeline) toggleFiltered(h int) tea.Cmd {
	if tl.srch.re == nil {
		tl.marker = "no search: press / first, then & shows only the matches"
		return nil
	}
	if tl.filtered {
		tl.unfilter()
		tl.reload(h)
		tl.updateRank()
		return nil
	}
	line, _ := tl.logLine(tl.cursor)
	return tl.filterFrom(line, h)
}

// filterFrom shows only the matching entries, with the cursor going to log line line (or the next shown
// line after it) as soon as the filter has read that far.
func (tl *timeline) filterFrom(line, h int) tea.Cmd {
	switch tl.src.(type) {
	case filterSourcer, *memSource:
	default:
		tl.marker = "this timeline cannot be filtered"
		return nil
	}
	tl.filtered = true
	tl.follow = false
	tl.cursor, tl.top = 0, 0
	tl.srch.wantLine = line
	cmd := tl.startFilter()
	tl.placeFiltered()
	tl.reload(h)
	return cmd
}

func (tl *timeline) unfilter() {
	if line, ok := tl.logLine(tl.cursor); ok && tl.len() > 0 {
		tl.cursor = line
	}
	tl.filtered = false
	tl.srch.stopFilter()
	tl.srch.filter = nil
	tl.top = max(0, tl.cursor-tl.height/3)
	tl.follow = false
}

// hscroll moves the horizontal window (wrap off): half a pane per step, or to either end of the longest
// visible line.
func (tl *timeline) hscroll(act string, h int) {
	if tl.wrap {
		tl.marker = "wrap is on: w turns it off to scroll sideways"
		return
	}
	room := max(1, tl.width-tl.prefixWidth())
	switch act {
	case keys.ActScrollLeft:
		tl.xoff = max(0, tl.xoff-max(1, room/2))
	case keys.ActScrollRight:
		tl.xoff = min(tl.xoff+max(1, room/2), max(0, tl.widest()-room+1))
	case keys.ActLineStart:
		tl.xoff = 0
	case keys.ActLineEnd:
		tl.xoff = max(0, tl.widest()-room+1)
	}
	tl.reload(h)
}

// widest is the width of the longest visible message, reading the length of cut lines from the file.
func (tl *timeline) widest() int {
	lb, _ := tl.src.(lineByter)
	w := 0
	for i, raw := range tl.window {
		e := tl.windowEntries[i]
		if line, ok := tl.logLine(tl.windowFrom + i); ok && lb != nil && isCutLine(raw) {
			if _, total, err := lb.LineBytes(line, 0, 0); err == nil {
				w = max(w, int(total)-bodyOffset(raw, e))
				continue
			}
		}
		w = max(w, tl.richLine(theme.Theme{}, time.Time{}, i, false).Width())
	}
	return w
}

func (tl *timeline) timeWidth() int {
	if tl.absolute {
		return 8
	}
	return 6
}

// prefixWidth is the time column and level glyph before each message.
func (tl *timeline) prefixWidth() int { return tl.timeWidth() + 3 }

func (tl *timeline) toggleWrap(h int) {
	tl.wrap = !tl.wrap
	tl.xoff = 0
	tl.reload(h)
}

func (tl *timeline) cursorLine() (string, bool) {
	i := tl.cursor - tl.windowFrom
	if i < 0 || i >= len(tl.window) {
		return "", false
	}
	return text.Sanitize(tl.window[i]), true
}

// parseLine reads one log line the way runlog does; a line without a timestamp is a continuation line of
// the entry above it.
func parseLine(raw string) model.LogEntry {
	entries, _ := runlog.ParseEntries([]byte(raw+"\n"), 0)
	if len(entries) == 0 {
		return model.LogEntry{Message: raw}
	}
	return entries[0]
}

// richLine builds window line i for drawing: the time column and glyph as prefix, the message styled by
// level with the event name bold, and the search's matches highlighted (the cursor line's as the current
// one). selected draws it as the cursor.
func (tl *timeline) richLine(t theme.Theme, now time.Time, i int, selected bool) *text.RichLine {
	raw, e := tl.window[i], tl.windowEntries[i]
	timeW := tl.timeWidth()
	var l *text.RichLine
	if e.HasTime {
		stamp := e.Time.UTC().Format("15:04:05")
		if !tl.absolute {
			stamp = model.HumanDuration(now.Sub(e.Time))
			if d := strings.IndexByte(stamp, 'd'); len(stamp) > timeW && d > 0 {
				stamp = stamp[:d+1] // 274d23h: past 99 days the hours give way, so the column keeps its width
			}
		}
		prefix := t.Dim.Render(fmt.Sprintf("%*s ", timeW, stamp)) + t.LevelStyle(e.Level).Render(theme.LevelGlyph(e.Level)) + " "
		txt := text.Sanitize(e.Message)
		if lp, ok := tl.long[i]; ok {
			txt = lp.text
		}
		var base *lipgloss.Style
		if e.Level != model.LevelNone {
			st := t.LevelStyle(e.Level)
			base = &st
		}
		if selected {
			prefix = t.Selected.Render(text.Stripped(prefix))
		}
		l = text.NewRichLine(prefix, txt, base)
		if ev := text.Sanitize(e.Event); ev != "" && e.Level == model.LevelNone {
			if k := strings.Index(txt, ev); k >= 0 {
				l.Style(k, k+len(ev), t.Bold)
			}
		}
	} else {
		txt := text.Sanitize(raw)
		if lp, ok := tl.long[i]; ok {
			txt = lp.text
		}
		prefix := strings.Repeat(" ", timeW+1) + t.Dim.Render("│ ")
		if selected {
			prefix = t.Selected.Render(text.Stripped(prefix))
		}
		dim := t.Dim
		l = text.NewRichLine(prefix, txt, &dim)
	}
	if selected {
		sel := t.Selected
		for k := range l.Styles {
			l.Styles[k] = &sel
		}
	}
	if lp, ok := tl.long[i]; ok {
		l.LeftMore, l.RightMore = lp.left, lp.right
	}
	if tl.srch.re != nil {
		st := t.Match
		if tl.windowFrom+i == tl.cursor {
			// The line n/N moved to (and `match k/N` counts): its match is the current one, drawn as the
			// pagers draw theirs, so it stands out from the other visible matches, focused or not.
			st = t.MatchCurrent
		}
		l.Highlight(tl.srch.re, st)
	}
	return l
}

func (p *timelinePane) View() string {
	w, h := max(1, p.w-theme.BorderCells), p.innerH()
	lines := p.renderLines(w, h)
	sc := theme.Scroll{}
	if p.src != nil && len(p.window) > 0 {
		sc = theme.Scroll{Above: p.windowFrom, Below: max(0, p.len()-p.windowFrom-len(p.window))}
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

func (p *timelinePane) renderLines(w, h int) []string {
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

func (tl timeline) title(kind model.Kind) string { return tl.titleFit(kind, 1<<30) }

// titleFit is the pane's title in at most room cells: on a narrow pane the search's count (`match 3/17`,
// `only matches: 4 entries`) is what stays, and the wrap mark, position, follow state and pattern give way
// first, in that order.
func (tl timeline) titleFit(_ model.Kind, room int) string {
	name := "Timeline"
	if tl.path != "" {
		name += " run.log"
	}
	var follow, pattern, count, pos, view string
	if tl.src != nil {
		follow = "‖ paused"
		if tl.follow {
			follow = "▶ follow"
		}
		pos = fmt.Sprintf("%d/%d", min(tl.cursor+1, tl.len()), tl.len())
	}
	if tl.srch.pattern != "" {
		pattern = "/" + text.Sanitize(tl.srch.pattern)
		if tl.srch.regex {
			pattern += " (regex)"
		}
		count = tl.countTag()
	}
	if tl.wrap {
		view = "wrap"
	} else if tl.xoff > 0 {
		view = fmt.Sprintf("→ col %d", tl.xoff+1)
	}
	join := func(parts ...string) string {
		out := name
		for _, p := range parts {
			if p != "" {
				out += " · " + p
			}
		}
		return out
	}
	short := pattern
	if text.VisibleWidth(short) > 10 {
		short = text.Truncate(short, 10)
	}
	for _, t := range []string{
		join(follow, pattern, count, pos, view),
		join(follow, pattern, count, pos),
		join(follow, pattern, count),
		join(pattern, count),
		join(short, count),
		join(count),
	} {
		if text.VisibleWidth(t) <= room {
			return t
		}
	}
	if count != "" {
		return count
	}
	return name
}

// status is the timeline's line for the footer: a running search's progress, or what the last search or
// reload said (a wrap-around, not found, log truncated), like less's bottom line.
func (tl timeline) status(now time.Time) string {
	if p := tl.progressTag(now); p != "" {
		return p
	}
	return tl.marker
}

// memSource is a timeline built in memory (jonggrang runs have no run.log).
type memSource struct{ lines []string }

func (s *memSource) Len() int { return len(s.lines) }
func (s *memSource) Lines(from, n int) []string {
	from = app.Clamp(from, 0, len(s.lines))
	return s.lines[from:min(len(s.lines), from+n)]
}
func (s *memSource) Search(re *regexp.Regexp, from int, forward bool) (int, bool) {
	for i := from; i >= 0 && i < len(s.lines); {
		if re.MatchString(s.lines[i]) {
			return i, true
		}
		if forward {
			i++
		} else {
			i--
		}
	}
	return 0, false
}
func (s *memSource) Refresh() (bool, error) { return false, nil }

// EntryStart is the entry holding line: the nearest timestamped line at or above it.
func (s *memSource) EntryStart(line int) int {
	for i := min(line, len(s.lines)-1); i > 0; i-- {
		if parseLine(s.lines[i]).HasTime {
			return i
		}
	}
	return 0
}
func (s *memSource) Close() error { return nil }

// jonggrangTimeline renders a jonggrang run's history as run.log-shaped lines, so one renderer, search and
// error jump serve both conventions: phase and agent timestamps, phase outputs and interruptions in time
// order, after the tail of progress.txt (which has no timestamps).
func jonggrangTimeline(run model.Run) []string {
	type ev struct {
		at   time.Time
		text string
	}
	var evs []ev
	addT := func(at *time.Time, format string, args ...any) {
		if at != nil && !at.IsZero() {
			evs = append(evs, ev{*at, fmt.Sprintf(format, args...)})
		}
	}
	for _, st := range run.Stages {
		addT(st.StartedAt, "phase_start phase=%s name=%s", st.Key, st.Name)
		switch st.Status {
		case model.StageFailed:
			at := st.CompletedAt
			if at == nil {
				at = st.StartedAt
			}
			addT(at, "phase_failed phase=%s error=%q", st.Key, st.Error)
		case model.StageCompleted:
			addT(st.CompletedAt, "phase_complete phase=%s name=%s", st.Key, st.Name)
		case model.StageSkipped:
			addT(st.CompletedAt, "phase_skipped phase=%s reason=%q", st.Key, st.SkipReason)
		}
	}
	if jd := run.Jonggrang; jd != nil {
		for _, a := range jd.Agents {
			addT(a.StartedAt, "agent_start agent=%s role=%s", a.ID, a.Role)
			addT(a.CompletedAt, "agent_%s agent=%s role=%s", strings.ToLower(text.OrDash(a.Status)), a.ID, a.Role)
		}
		for _, po := range jd.PhaseOutputs {
			if po.Error != "" {
				addT(po.Timestamp, "output_error file=%s role=%s error=%q", po.File, po.Role, po.Error)
			} else {
				addT(po.Timestamp, "output file=%s role=%s status=%s", po.File, po.Role, po.Status)
			}
		}
		for _, at := range jd.Interruptions {
			a := at
			addT(&a, "run_interrupted (progress.txt)")
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
	lines := make([]string, 0, len(evs)+8)
	// progress.txt has no timestamps, so it goes first: the timed events end the timeline, and follow mode
	// (which shows the end) shows the newest of them.
	if jd := run.Jonggrang; jd != nil && len(jd.ProgressTail) > 0 {
		lines = append(lines, "progress.txt (last lines, untimed):")
		for _, p := range jd.ProgressTail {
			lines = append(lines, "  "+strings.ReplaceAll(p, "\n", " "))
		}
	}
	for _, e := range evs {
		// Newlines in untrusted fields would otherwise fake continuation lines.
		lines = append(lines, "["+e.at.UTC().Format(time.RFC3339)+"] "+strings.ReplaceAll(e.text, "\n", " "))
	}
	return lines
}

type logOpenedMsg struct {
	runPath, path string
	src           app.LogSource
	err           error
}

// tookRemoteTail shows a fetched tail when its run's timeline is open.
func (p *timelinePane) tookRemoteTail(msg app.RemoteTailMsg) {
	p.app.TookRemoteTail(msg)
	if run, ok := p.app.SelectedRun(); ok && run.Remote != nil && app.RemoteLogKey(run) == msg.Key {
		p.setMemory(run.Key(), p.app.RemoteLines(run), p.innerH())
	}
}
