package ui

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/state/runlog"
)

// LogSource is a line-addressed view of a log that never holds the whole file: the timeline asks only for
// the lines it shows. runlog.Index backs it for run.log files.
type LogSource interface {
	Len() int
	Lines(from, n int) []string
	// Search returns the first line at or after from (forward) or at or before from (backward) matching re.
	Search(re *regexp.Regexp, from int, forward bool) (int, bool)
	// Refresh picks up bytes appended since the last call; truncated reports the file shrank.
	Refresh() (truncated bool, err error)
	Close() error
}

// OpenLogFunc opens a log for the timeline. It runs inside a command, never in View.
type OpenLogFunc func(path string) (LogSource, error)

// errorPattern finds the entries that e/E jump between: blocked stages, failures and errors.
var errorPattern = regexp.MustCompile(`(?i)(blocked|error|\berr=|fail|panic|fatal)`)

type timeline struct {
	runPath string
	path    string // the log file, or "" for a timeline built from the run
	src     LogSource
	err     string
	opening bool

	window []string
	// windowEntries parses window line by line, done in reload (Update) so View only draws.
	windowEntries []model.LogEntry
	windowFrom    int

	top, cursor int
	follow      bool
	absolute    bool

	search   string
	searchRe *regexp.Regexp
	marker   string // e.g. "log truncated", shown once in the title

	seq    int                // the search whose answer is awaited
	cancel context.CancelFunc // cancels that search
}

func (tl *timeline) len() int {
	if tl.src == nil {
		return 0
	}
	return tl.src.Len()
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
	tl.cursor = clamp(tl.cursor, 0, max(0, n-1))
	if tl.cursor < tl.top {
		tl.top = tl.cursor
	}
	if tl.cursor >= tl.top+h {
		tl.top = tl.cursor - h + 1
	}
	tl.top = clamp(tl.top, 0, max(0, n-h))
	tl.window = tl.src.Lines(tl.top, h)
	tl.windowFrom = tl.top
	tl.windowEntries = make([]model.LogEntry, len(tl.window))
	for i, raw := range tl.window {
		tl.windowEntries[i] = parseLine(raw)
	}
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
		tl.err = Sanitize(msg.err.Error())
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
func (tl *timeline) appended(a LogAppend, h int) tea.Cmd {
	if tl.src == nil {
		return nil
	}
	truncated, err := tl.src.Refresh()
	if err != nil {
		tl.err = Sanitize(err.Error())
	}
	switch {
	case truncated || a.Truncated:
		tl.marker = "log truncated; reloaded"
		tl.top, tl.cursor = 0, 0
	case a.Rotated:
		tl.marker = "log rotated; reloaded"
	}
	tl.reload(h)
	w, ok := tl.src.(waiter)
	if !ok {
		return nil
	}
	path := tl.path
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), indexWait)
		defer cancel()
		w.Wait(ctx) // a timeout or error still redraws what is indexed; errors surface on the next Refresh
		return logIndexedMsg{path: path}
	}
}

func (tl *timeline) setMemory(runPath string, lines []string, h int) {
	if tl.runPath != runPath || tl.path != "" {
		tl.close()
		tl.runPath, tl.path = runPath, ""
		tl.follow = true
	}
	tl.src = &memSource{lines: lines}
	tl.reload(h)
}

func (tl *timeline) close() {
	if tl.cancel != nil {
		tl.cancel()
	}
	if tl.src != nil {
		tl.src.Close()
	}
	*tl = timeline{follow: true, absolute: tl.absolute, search: tl.search, searchRe: tl.searchRe}
}

// timelinePane shows the selected run's log: run.log through a windowed index for resumable runs, a
// timeline built from the run for jonggrang. The window is drawn by hand rather than by a viewport because a
// viewport holds all its content (O(all lines) per SetContent) and the log can be 1 GiB.
type timelinePane struct {
	timeline
	app     *app
	input   textinput.Model
	editing bool
	w, h    int
}

func newTimelinePane(a *app) *timelinePane {
	in := textinput.New()
	in.Prompt = "search timeline: "
	st := in.Styles()
	st.Cursor.Blink = false
	in.SetStyles(st)
	p := &timelinePane{app: a, input: in}
	p.follow = true
	return p
}

func (p *timelinePane) SetSize(w, h int) {
	changed := p.innerH() != max(1, h-borderCells)
	p.w, p.h = w, h
	p.input.SetWidth(max(10, w-20))
	if changed {
		p.reload(p.innerH())
	}
}

func (p *timelinePane) innerH() int { return max(1, p.h-borderCells) }

func (p *timelinePane) Capturing() bool { return p.editing }

func (p *timelinePane) lineInput() string {
	if !p.editing {
		return ""
	}
	return p.input.View()
}

func (p *timelinePane) ShortHelp() []key.Binding {
	k := p.app.keys
	if p.editing {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "search")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	}
	out := k.bindings(ActFilter)
	if p.searchRe != nil {
		out = append(out, k.bindings(ActNextMatch, ActPrevMatch)...)
	}
	return append(out, k.bindings(ActNextError, ActFollow, ActTimeFormat, ActCopy, ActBack, ActHelp)...)
}

func (p *timelinePane) FullHelp() [][]key.Binding {
	k := p.app.keys
	return [][]key.Binding{k.bindings(ActUp, ActDown, ActTop, ActBottom, ActPageUp, ActPageDown),
		k.bindings(ActFilter, ActNextMatch, ActPrevMatch, ActNextError, ActPrevError, ActFollow, ActTimeFormat)}
}

// Update handles the timeline's keys and the messages of its log: opened, indexed, searched, ticked.
func (p *timelinePane) Update(msg tea.Msg) tea.Cmd {
	h := p.innerH()
	switch msg := msg.(type) {
	case tickMsg:
		p.poll(h)
	case logOpenedMsg:
		p.opened(msg, h)
	case logIndexedMsg:
		if msg.path == p.path {
			p.reload(h)
		}
	case searchDoneMsg:
		p.found(msg, h)
	case tea.KeyPressMsg:
		return p.key(msg)
	}
	return nil
}

func (p *timelinePane) key(msg tea.KeyPressMsg) tea.Cmd {
	h := p.innerH()
	if p.editing {
		switch msg.String() {
		case "esc":
			p.editing = false
			p.input.Blur()
			return nil
		case "enter":
			p.editing = false
			p.input.Blur()
			return p.setSearch(p.input.Value(), h)
		case "ctrl+c":
			return quitCmd()
		}
		var cmd tea.Cmd
		p.input, cmd = p.input.Update(msg)
		return cmd
	}
	switch act := p.app.keys.Of(msg); act {
	case ActFilter:
		p.editing = true
		p.input.SetValue(p.search)
		p.input.CursorEnd()
		return p.input.Focus()
	case ActTimeFormat:
		p.absolute = !p.absolute
	case ActFollow:
		p.toggleFollow(h)
	case ActNextMatch, ActPrevMatch:
		return p.findNext(act == ActNextMatch, h)
	case ActNextError, ActPrevError:
		return p.findError(act == ActNextError, h)
	case ActUp, ActDown, ActTop, ActBottom, ActPageUp, ActPageDown:
		p.move(act, h)
	}
	return nil
}

// batch applies a watcher batch: appended lines of the open log, and a rebuilt timeline when the selected
// jonggrang run changed (its timeline is built from the run itself).
func (p *timelinePane) batch(msg BatchMsg) tea.Cmd {
	h := p.innerH()
	var indexed tea.Cmd
	for _, a := range msg.Appended {
		if a.Path == p.path {
			indexed = p.appended(a, h)
		}
	}
	if run, ok := p.app.selectedRun(); ok && run.Kind == model.KindJonggrang {
		for _, r := range msg.Changed {
			if r.StatePath == run.StatePath {
				p.setMemory(run.StatePath, jonggrangTimeline(run), h)
			}
		}
	}
	return indexed
}

// sync points the timeline at the selected run: a jonggrang run's timeline is built from the run, a
// resumable run's log is opened in a command.
func (p *timelinePane) sync() tea.Cmd {
	run, ok := p.app.selectedRun()
	if !ok {
		if p.runPath != "" || p.src != nil {
			p.close()
		}
		return nil
	}
	h := p.innerH()
	if run.Kind == model.KindJonggrang {
		if p.runPath != run.StatePath {
			p.setMemory(run.StatePath, jonggrangTimeline(run), h)
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
	if p.app.opts.OpenLog == nil {
		p.err = "no log reader configured"
		return nil
	}
	p.opening = true
	open, runPath := p.app.opts.OpenLog, run.StatePath
	return func() tea.Msg {
		src, err := open(path)
		return logOpenedMsg{runPath: runPath, path: path, src: src, err: err}
	}
}

func (tl *timeline) move(act string, h int) {
	n := tl.len()
	page := max(1, h/2)
	switch act {
	case ActUp:
		tl.cursor--
	case ActDown:
		tl.cursor++
	case ActTop:
		tl.cursor = 0
	case ActBottom:
		tl.cursor = n - 1
	case ActPageUp:
		tl.cursor -= page
	case ActPageDown:
		tl.cursor += page
	}
	tl.cursor = clamp(tl.cursor, 0, max(0, n-1))
	// Scrolling up pauses follow; arriving at the end resumes it, as in `less +F` and lnav.
	tl.follow = n == 0 || tl.cursor >= n-1
	tl.reload(h)
}

func (tl *timeline) toggleFollow(h int) {
	tl.follow = !tl.follow
	tl.reload(h)
}

// setSearch compiles the query and finds its first match from the cursor.
func (tl *timeline) setSearch(q string, h int) tea.Cmd {
	tl.search = q
	if q == "" {
		tl.searchRe = nil
		return nil
	}
	re, err := regexp.Compile("(?i)" + q)
	if err != nil {
		// A search box is not a regex editor: an invalid pattern is taken literally.
		re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(q))
	}
	tl.searchRe = re
	return tl.find(findMatch, tl.cursor, true, h)
}

func (tl *timeline) findNext(forward bool, h int) tea.Cmd {
	if tl.searchRe == nil {
		tl.marker = "no search: press / first"
		return nil
	}
	return tl.find(findMatch, tl.cursor+step(forward), forward, h)
}

func (tl *timeline) findError(forward bool, h int) tea.Cmd {
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
	seq      int
	kind     findKind
	line     int
	ok       bool
	canceled bool
}

// find looks for the next match or error. In-memory sources answer at once; a file index answers in a
// command, and a newer search cancels an older one.
func (tl *timeline) find(kind findKind, from int, forward bool, h int) tea.Cmd {
	if tl.src == nil || from < 0 || from >= tl.len() {
		tl.marker = notFound(kind)
		return nil
	}
	if tl.cancel != nil {
		tl.cancel()
		tl.cancel = nil
	}
	tl.seq++
	seq, src, re := tl.seq, tl.src, tl.searchRe
	cs, async := src.(contextSearcher)
	if !async {
		var line int
		var ok bool
		if kind == findError {
			line, ok = src.Search(errorPattern, from, forward)
		} else {
			line, ok = src.Search(re, from, forward)
		}
		tl.found(searchDoneMsg{seq: seq, kind: kind, line: line, ok: ok}, h)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	tl.cancel = cancel
	tl.marker = "searching…"
	return func() tea.Msg {
		var line int
		var ok bool
		if lf, isLF := src.(levelFinder); isLF && kind == findError {
			// NextLevel has no context; errors are common, so it returns soon in real logs.
			line, ok = lf.NextLevel(from, model.LevelError, forward)
		} else if kind == findError {
			line, ok = cs.SearchContext(ctx, errorPattern, from, forward)
		} else {
			line, ok = cs.SearchContext(ctx, re, from, forward)
		}
		return searchDoneMsg{seq: seq, kind: kind, line: line, ok: ok, canceled: ctx.Err() != nil}
	}
}

func notFound(kind findKind) string {
	if kind == findError {
		return "no more errors"
	}
	return "no more matches"
}

func (tl *timeline) found(msg searchDoneMsg, h int) {
	if msg.seq != tl.seq || msg.canceled {
		return
	}
	if tl.cancel != nil {
		tl.cancel()
		tl.cancel = nil
	}
	if !msg.ok {
		tl.marker = notFound(msg.kind)
		return
	}
	tl.marker = ""
	tl.cursor = msg.line
	tl.follow = false
	// Put the match a third of the way down, so its context above is visible.
	tl.top = max(0, msg.line-h/3)
	tl.reload(h)
}

func (tl *timeline) cursorLine() (string, bool) {
	i := tl.cursor - tl.windowFrom
	if i < 0 || i >= len(tl.window) {
		return "", false
	}
	return Sanitize(tl.window[i]), true
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

func (p *timelinePane) View() string {
	w, h := max(1, p.w-borderCells), p.innerH()
	lines := p.renderLines(w, h)
	sc := scroll{}
	if p.src != nil && len(p.window) > 0 {
		sc = scroll{above: p.windowFrom, below: max(0, p.len()-p.windowFrom-len(p.window))}
	}
	kind := model.KindResumable
	if run, ok := p.app.selectedRun(); ok {
		kind = run.Kind
	}
	return box(p.app.theme, p.title(kind), lines, p.w, p.h, p.app.focus == PaneTimeline, sc)
}

func (p *timelinePane) renderLines(w, h int) []string {
	t := p.app.theme
	tl := &p.timeline
	switch {
	case tl.src == nil && tl.opening:
		return []string{t.Dim.Render("opening " + truncate(Sanitize(tl.path), w-8) + " …")}
	case tl.src == nil && tl.err != "":
		return []string{t.Dim.Render(truncate(tl.err, w))}
	case tl.src == nil:
		return []string{t.Dim.Render("no timeline")}
	}
	if len(tl.window) == 0 {
		return []string{t.Dim.Render("(empty)")}
	}
	now := p.app.now()
	timeW := 8
	if !tl.absolute {
		timeW = 6
	}
	var out []string
	for i, raw := range tl.window {
		if len(out) >= h {
			break
		}
		idx := tl.windowFrom + i
		e := tl.windowEntries[i]
		var line string
		if e.HasTime {
			level := e.Level
			stamp := e.Time.UTC().Format("15:04:05")
			if !tl.absolute {
				stamp = model.HumanDuration(now.Sub(e.Time))
			}
			text := Sanitize(e.Message)
			body := text
			if e.Event != "" {
				if before, after, ok := strings.Cut(text, Sanitize(e.Event)); ok {
					body = before + t.Bold.Render(Sanitize(e.Event)) + after
				}
			}
			if level != model.LevelNone {
				body = t.levelStyle(level).Render(text)
			}
			line = t.Dim.Render(fmt.Sprintf("%*s ", timeW, stamp)) + t.levelStyle(level).Render(levelGlyph(level)) + " " + body
		} else {
			line = strings.Repeat(" ", timeW+1) + t.Dim.Render("│ "+Sanitize(raw))
		}
		line = truncate(line, w)
		if tl.searchRe != nil && tl.searchRe.MatchString(raw) && idx != tl.cursor {
			line = t.Match.Render(stripped(line))
		}
		if idx == tl.cursor && p.app.focus == PaneTimeline {
			line = selectStyle(p.app, PaneTimeline).Render(padRight(stripped(line), w))
		}
		out = append(out, line)
	}
	return out
}

func (tl timeline) title(kind model.Kind) string {
	name := "Timeline"
	if tl.path != "" {
		name += " run.log"
	}
	var tags []string
	if tl.src != nil {
		if tl.follow {
			tags = append(tags, "▶ follow")
		} else {
			tags = append(tags, "‖ paused")
		}
		tags = append(tags, fmt.Sprintf("%d/%d", min(tl.cursor+1, tl.len()), tl.len()))
	}
	if tl.search != "" {
		tags = append(tags, "/"+Sanitize(tl.search))
	}
	if tl.marker != "" {
		tags = append(tags, tl.marker)
	}
	if len(tags) == 0 {
		return name
	}
	return name + " · " + strings.Join(tags, " · ")
}

// memSource is a timeline built in memory (jonggrang runs have no run.log).
type memSource struct{ lines []string }

func (s *memSource) Len() int { return len(s.lines) }
func (s *memSource) Lines(from, n int) []string {
	from = clamp(from, 0, len(s.lines))
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
func (s *memSource) Close() error           { return nil }

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
			addT(a.CompletedAt, "agent_%s agent=%s role=%s", strings.ToLower(orDash(a.Status)), a.ID, a.Role)
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
