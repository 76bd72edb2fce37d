// Package timeline is the Timeline pane: the line-addressed view of a run's log (timeline.go) that reads
// only the lines it shows from a LogSource, the pane component around it (pane.go), finding and the only-
// matching filter (find.go), the search state with its background count (search.go), the whole entry
// under the cursor (entry.go) and timelines built in memory (memsource.go). It accepts app.BatchMsg and
// its own messages (LogOpenedMsg, SearchDoneMsg, …, routed to it by the root) and emits app.PagerMsg for
// an entry; it imports no other component.
//
// timeline.go: the view's state — which lines are read, the cursor, follow, wrap and the sideways window.
package timeline

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

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
	// numbered: src's line numbers were final (its count done) when the window was last read.
	numbered bool
	err      string
	opening  bool

	window []string
	// windowEntries parses window line by line, done in reload (Update) so View only draws.
	windowEntries []model.LogEntry
	windowFrom    int

	top, cursor int
	follow      bool
	absolute    bool
	days        bool // the log's entries are of more than one day: absolute times carry their date
	daysOf      int  // the log's length, plus one, that days was decided at (0: not yet)

	srch tlSearch
	// last is the search of a run left (its pattern and kind): n and enter on an empty prompt search for it
	// again in this run, as less does in the next file, but it is not this run's search until then (the
	// title of another run read "/lock · no matches").
	last   tlSearch
	marker string // e.g. "log truncated", shown once in the title
	// runLog is the selected run's log as last loaded: which of runwatch's actions were undone since
	// (model.LogRef.IsUndone), whose entries are marked.
	runLog *model.LogRef

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

// LogLine is the log line number of the timeline's line i (they differ when filtered).
func (tl *timeline) LogLine(i int) (int, bool) {
	if !tl.filtered || tl.srch.filter == nil {
		return i, true
	}
	if j := i - tl.windowFrom; j >= 0 && j < len(tl.windowLines) {
		return tl.windowLines[j], true
	}
	return filteredSource{base: tl.src, f: tl.srch.filter}.line(i)
}

func (tl *timeline) Len() int {
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
	n := tl.Len()
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
	tl.decideDays()
}

// daysScan bounds how many lines from each end of the log decideDays reads for a timed entry.
const daysScan = 64

// decideDays says whether the log's entries span more than one day, by its first and last timed entries:
// over the whole log, not the lines in view, so the time column keeps one width while scrolling (it was
// decided a window at a time, and widened and narrowed as days came into view). Decided again only when the
// log's length changes.
func (tl *timeline) decideDays() {
	n := tl.src.Len()
	if tl.daysOf == n+1 {
		return
	}
	tl.daysOf = n + 1
	first, okF := tl.timedEnd(n, true)
	last, okL := tl.timedEnd(n, false)
	tl.days = okF && okL && first.UTC().Format(time.DateOnly) != last.UTC().Format(time.DateOnly)
}

// timedEnd is the time of the first (forward) or last timed entry among the log's n lines, looking at most
// daysScan lines in from that end.
func (tl *timeline) timedEnd(n int, forward bool) (time.Time, bool) {
	k := min(n, daysScan)
	at := 0
	if !forward {
		at = n - k
	}
	lines := tl.src.Lines(at, k)
	for i := range lines {
		j := i
		if !forward {
			j = len(lines) - 1 - i
		}
		if e := parseLine(lines[j]); e.HasTime {
			return e.Time, true
		}
	}
	return time.Time{}, false
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
		line, ok := tl.LogLine(tl.windowFrom + i)
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

func (tl *timeline) opened(msg LogOpenedMsg, h int) {
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
	tl.src, tl.numbered = msg.src, false
	tl.follow = true
	tl.reload(h)
}

// renumberer is a LogSource whose line numbers can move once (runlog.Index while it counts the head).
type renumberer interface{ Renumbered() int }

// exacter is a LogSource that may still be counting lines; a tick redraws what it has.
type exacter interface{ Exact() bool }

// countingRedraw is how often the timeline redraws while its index still counts the log's lines.
const countingRedraw = time.Second

// poll runs on the clock tick: an index still counting fills in lines and may renumber them. Once the count
// is done and its numbers shown, a tick reads nothing: the ticks of an idle dashboard (an age turning a
// minute) re-read and re-parsed the visible lines of the log each time, to show the same lines.
func (tl *timeline) poll(h int) {
	e, counting := tl.src.(exacter)
	_, moving := tl.src.(renumberer)
	if !counting && !moving {
		return
	}
	exact := counting && e.Exact() // before reload: a count done now is renumbered by it
	if exact && tl.numbered {
		return
	}
	// reload applies any renumbering and reads the h visible lines, which is all a tick costs.
	tl.reload(h)
	tl.numbered = exact
}

// Waiter is a LogSource that indexes appended bytes in the background (runlog.Index).
type Waiter interface {
	Wait(ctx context.Context) error
}

type LogIndexedMsg struct{ path string }

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
	w, ok := tl.src.(Waiter)
	if !ok {
		return tea.Batch(recount, tl.runCount(), tl.runFilter())
	}
	path := tl.path
	return tea.Batch(recount, func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), indexWait)
		defer cancel()
		w.Wait(ctx) // a timeout or error still redraws what is indexed; errors surface on the next Refresh
		return LogIndexedMsg{path: path}
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
	tl.src = NewMemSource(lines)
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
	last := tl.last
	if tl.srch.pattern != "" {
		last = tlSearch{pattern: tl.srch.pattern, regex: tl.srch.regex, forward: tl.srch.forward}
	}
	*tl = timeline{follow: true, absolute: tl.absolute, last: last, wrap: tl.wrap, width: tl.width, height: tl.height}
}

func (tl *timeline) move(act string, h int) {
	n := tl.Len()
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

// hscroll moves the horizontal window (wrap off): half a pane per step, or to either end of the longest
// visible line.
func (tl *timeline) hscroll(act string, h int) {
	if tl.wrap {
		tl.marker = "wrap is on: w turns it off to scroll sideways"
		return
	}
	room := max(1, tl.width-tl.PrefixWidth())
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
		if line, ok := tl.LogLine(tl.windowFrom + i); ok && lb != nil && isCutLine(raw) {
			if _, total, err := lb.LineBytes(line, 0, 0); err == nil {
				w = max(w, int(total)-bodyOffset(raw, e))
				continue
			}
		}
		w = max(w, tl.richLine(theme.Theme{}, time.Time{}, i, false).Width())
	}
	return w
}

func (tl *timeline) TimeWidth() int {
	if tl.absolute && tl.days {
		return len(absoluteDayStamp)
	}
	if tl.absolute {
		return 8
	}
	return 6
}

// absoluteDayStamp is t's time with its date, for entries of more than one day (21:14:08 then 00:03:11
// read as one evening).
const absoluteDayStamp = "Jan 02 15:04:05"

// undoneMark is drawn before an entry of an action runwatch undid since.
const undoneMark = "undone"

// PrefixWidth is the time column and level glyph before each message.
func (tl *timeline) PrefixWidth() int { return tl.TimeWidth() + 3 }

func (tl *timeline) toggleWrap(h int) {
	tl.wrap = !tl.wrap
	tl.xoff = 0
	tl.reload(h)
}

func (tl *timeline) CursorLine() (string, bool) {
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
	timeW := tl.TimeWidth()
	var l *text.RichLine
	if e.HasTime {
		stamp := e.Time.UTC().Format("15:04:05")
		if tl.days {
			stamp = e.Time.UTC().Format(absoluteDayStamp)
		}
		if !tl.absolute {
			stamp = model.HumanAge(now.Sub(e.Time))
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
		if tl.runLog.IsUndone(e) {
			// The entry no longer holds: marked in the prefix, so it shows however far the line is scrolled,
			// and drawn struck through.
			prefix += t.Warn.Render(undoneMark) + " "
			st := t.Dim.Strikethrough(true)
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
		pos = fmt.Sprintf("%d/%d", min(tl.cursor+1, tl.Len()), tl.Len())
	}
	if tl.srch.pattern != "" {
		pattern = "/" + text.Sanitize(tl.srch.pattern)
		if tl.srch.regex {
			pattern += " (regex)"
		}
		count = tl.CountTag()
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

type LogOpenedMsg struct {
	runPath, path string
	src           app.LogSource
	err           error
}
