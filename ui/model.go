// Package ui is the Bubble Tea dashboard. It takes all its data through messages (SnapshotMsg, BatchMsg), so
// it is built and tested against model values and fixtures without a watcher; package main wires the
// watcher in.
package ui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"runwatch/model"
)

// Pane identifies one of the three panes.
type Pane int

const (
	PaneRuns Pane = iota
	PaneDetail
	PaneTimeline
	paneCount
)

func (p Pane) String() string {
	return [...]string{"Runs", "Detail", "Timeline"}[p]
}

// Options configure the dashboard.
type Options struct {
	Theme    string // auto, dark, light, mono
	Keys     KeyMap // from NewKeyMap; the zero value means defaults
	ReadOnly bool
	Actor    Actor // nil disables actions
	OpenLog  OpenLogFunc
	// Now is the clock for "updated Ns ago" and relative times; tests pin it.
	Now func() time.Time
	// Debug, when set, receives one line per message and per frame with its timing.
	Debug io.Writer
	// InTmux makes `y` also wrap the OSC 52 sequence in tmux passthrough.
	InTmux bool
	// Tick is how often "updated Ns ago" refreshes; 0 means every second, negative disables it.
	Tick time.Duration
	// Env gives briefs and resume commands the time, host and process facts (state.NewEnv).
	Env func() model.Env
	// ResumeCommand is the config's resume_command templates, by convention.
	ResumeCommand map[string]string
}

// Model is the dashboard.
type Model struct {
	opts  Options
	keys  KeyMap
	theme Theme
	actor Actor

	width, height int
	// sized is set by the first WindowSizeMsg. Until then the terminal's size is unknown and nothing is
	// drawn: a frame at a guessed size is wrapped or cut by the real terminal, and it is the first thing a
	// person sees.
	sized bool

	runs      map[string]model.Run
	order     []string // visible StatePaths, attention first, after the filter
	cursor    int
	runsTop   int
	selected  string
	filter    string
	inputMode inputMode
	input     string

	focus    Pane
	showHelp bool
	helpTop  int

	detailSel map[string]rowID // per run: the focused detail row
	detailTop int

	tl timeline

	health     Health
	lastChange time.Time
	note       string
	errLine    string

	confirm *confirmState
	brief   *briefState
	loaded  bool
}

type inputMode int

const (
	inputNone inputMode = iota
	inputFilter
	inputSearch
)

// New builds the dashboard model.
func New(opts Options) Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	keys := opts.Keys
	if keys.byKey == nil {
		keys = DefaultKeyMap(opts.ReadOnly)
	}
	if opts.ReadOnly && !keys.ReadOnly {
		// A keymap built for read-write must not leak mutating keys into a read-only session.
		keys = filterMutating(keys)
	}
	m := Model{
		opts:      opts,
		keys:      keys,
		theme:     NewTheme(opts.Theme, true),
		runs:      map[string]model.Run{},
		detailSel: map[string]rowID{},
		width:     120,
		height:    40,
	}
	if !opts.ReadOnly {
		m.actor = opts.Actor
	}
	m.tl.follow = true
	return m
}

func filterMutating(k KeyMap) KeyMap {
	out := KeyMap{byKey: map[string]string{}, ReadOnly: true}
	for _, b := range k.Bindings {
		if b.Mutating {
			continue
		}
		out.Bindings = append(out.Bindings, b)
		for _, key := range b.Keys {
			out.byKey[key] = b.Action
		}
	}
	return out
}

// Init asks the terminal for its background (for the auto theme) and starts the freshness clock.
func (m Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	if m.opts.Theme == "" || m.opts.Theme == "auto" {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	cmds = append(cmds, m.tick())
	return tea.Batch(cmds...)
}

func (m Model) tick() tea.Cmd {
	d := m.opts.Tick
	if d < 0 {
		return nil
	}
	if d == 0 {
		d = time.Second
	}
	return tea.Tick(d, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	start := time.Now()
	cmd := m.update(msg)
	if m.opts.Debug != nil {
		fmt.Fprintf(m.opts.Debug, "%s update %T %s\n", start.UTC().Format("15:04:05.000000"), msg, time.Since(start))
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.sized = true
		m.clampAll()
		m.tl.reload(m.timelineHeight())
	case tea.BackgroundColorMsg:
		if m.opts.Theme == "" || m.opts.Theme == "auto" {
			m.theme = NewTheme("auto", msg.IsDark())
		}
	case tickMsg:
		m.tl.poll(m.timelineHeight())
		return m.tick()
	case SnapshotMsg:
		m.runs = make(map[string]model.Run, len(msg.Runs))
		for _, r := range msg.Runs {
			m.runs[r.StatePath] = r
		}
		m.health = msg.Health
		m.lastChange = msg.At
		m.loaded = true
		m.resort()
		return m.syncTimeline()
	case BatchMsg:
		return m.applyBatch(msg)
	case ErrorMsg:
		m.setError(msg.Err)
	case WatcherStoppedMsg:
		m.health.Err = "stopped"
		m.setError(errors.New("watcher stopped: the runs shown are no longer updated"))
	case logOpenedMsg:
		m.tl.opened(msg, m.timelineHeight())
	case logIndexedMsg:
		if msg.path == m.tl.path {
			m.tl.reload(m.timelineHeight())
		}
	case searchDoneMsg:
		m.tl.found(msg, m.timelineHeight())
	case planMsg:
		if msg.err != nil {
			m.setError(msg.err)
			return nil
		}
		m.confirm = &confirmState{req: msg.req, planned: msg.planned, preview: SanitizeLines(strings.TrimRight(msg.planned.Preview(), "\n"))}
	case briefMsg:
		m.brief = &briefState{runID: msg.runID, markdown: msg.markdown, lines: briefLines(msg.markdown)}
	case appliedMsg:
		if msg.err != nil {
			m.setError(msg.err)
		} else {
			m.errLine = ""
			m.setNote(msg.summary)
		}
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	}
	return nil
}

func (m *Model) applyBatch(msg BatchMsg) tea.Cmd {
	for _, r := range msg.Changed {
		m.runs[r.StatePath] = r
	}
	for _, p := range msg.Removed {
		delete(m.runs, p)
	}
	m.health = msg.Health
	if len(msg.Changed) > 0 || len(msg.Removed) > 0 || len(msg.Appended) > 0 {
		m.lastChange = msg.At
	}
	if msg.Health.Err != "" {
		m.errLine = "watcher: " + Sanitize(msg.Health.Err)
	}
	m.resort()
	var indexed tea.Cmd
	for _, a := range msg.Appended {
		if a.Path == m.tl.path {
			indexed = m.tl.appended(a, m.timelineHeight())
		}
	}
	// A jonggrang timeline is built from the run itself, so a changed run rebuilds it.
	if run, ok := m.selectedRun(); ok && run.Kind == model.KindJonggrang {
		for _, r := range msg.Changed {
			if r.StatePath == run.StatePath {
				m.tl.setMemory(run.StatePath, jonggrangTimeline(run), m.timelineHeight())
			}
		}
	}
	return tea.Batch(indexed, m.syncTimeline())
}

func (m *Model) setError(err error) {
	m.errLine = Sanitize(err.Error())
	m.note = ""
}

func (m *Model) setNote(s string) { m.note = Sanitize(s) }

func (m Model) selectedRun() (model.Run, bool) {
	r, ok := m.runs[m.selected]
	return r, ok
}

// handleKey routes a key: dialogs and line inputs first, then the keymap.
func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.confirm != nil {
		return m.updateConfirm(msg)
	}
	if m.inputMode != inputNone {
		return m.updateInput(msg)
	}
	if m.brief != nil {
		return m.updateBrief(msg)
	}
	act := m.keys.Action(msg.String())
	if m.showHelp {
		switch act {
		case ActHelp, ActBack:
			m.showHelp = false
		case ActQuit:
			return tea.Quit
		case ActDown:
			m.helpTop++
		case ActUp:
			m.helpTop = max(0, m.helpTop-1)
		}
		return nil
	}
	switch act {
	case ActQuit:
		return tea.Quit
	case ActHelp:
		m.showHelp = true
		m.helpTop = 0
	case ActNextPane:
		m.focus = (m.focus + 1) % paneCount
	case ActPrevPane:
		m.focus = (m.focus + paneCount - 1) % paneCount
	case ActOpen:
		if m.focus == PaneRuns {
			m.focus = PaneDetail
		}
	case ActBack:
		switch {
		case m.focus != PaneRuns:
			m.focus = PaneRuns
		case m.filter != "":
			m.filter = ""
			m.resort()
			return m.syncTimeline()
		default:
			m.errLine, m.note = "", ""
		}
	case ActFilter:
		if m.focus == PaneTimeline {
			m.inputMode, m.input = inputSearch, m.tl.search
		} else {
			m.inputMode, m.input = inputFilter, m.filter
		}
	case ActCopy:
		return m.copyFocused()
	case ActTimeFormat:
		m.tl.absolute = !m.tl.absolute
	case ActFollow:
		m.tl.toggleFollow(m.timelineHeight())
	case ActNextMatch, ActPrevMatch:
		m.focus = PaneTimeline
		return m.tl.findNext(act == ActNextMatch, m.timelineHeight())
	case ActNextError, ActPrevError:
		m.focus = PaneTimeline
		return m.tl.findError(act == ActNextError, m.timelineHeight())
	case ActUp, ActDown, ActTop, ActBottom, ActPageUp, ActPageDown:
		return m.move(act)
	case ActUnlock, ActStep, ActTick, ActRetry, ActPause, ActUndo:
		return m.requestAction(act)
	case ActBrief:
		return m.showBrief()
	case ActLaunch:
		return m.requestLaunch()
	}
	return nil
}

func (m *Model) updateInput(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "ctrl+c":
		return tea.Quit
	case "esc":
		mode := m.inputMode
		m.inputMode, m.input = inputNone, ""
		if mode == inputFilter {
			m.filter = ""
			m.resort()
			return m.syncTimeline()
		}
		return nil
	case "enter":
		mode := m.inputMode
		m.inputMode = inputNone
		if mode == inputSearch {
			return m.tl.setSearch(m.input, m.timelineHeight())
		}
		return nil
	case "backspace":
		if r := []rune(m.input); len(r) > 0 {
			m.input = string(r[:len(r)-1])
		}
	case "ctrl+u":
		m.input = ""
	default:
		m.input += keyText(msg)
	}
	if m.inputMode == inputFilter {
		m.filter = m.input
		m.resort()
		return m.syncTimeline()
	}
	return nil
}

func (m *Model) move(act string) tea.Cmd {
	switch m.focus {
	case PaneRuns:
		page := max(1, m.paneHeight(PaneRuns)/2)
		switch act {
		case ActUp:
			m.cursor--
		case ActDown:
			m.cursor++
		case ActTop:
			m.cursor = 0
		case ActBottom:
			m.cursor = len(m.order) - 1
		case ActPageUp:
			m.cursor -= page
		case ActPageDown:
			m.cursor += page
		}
		m.cursor = clamp(m.cursor, 0, len(m.order)-1)
		if len(m.order) > 0 && m.selected != m.order[m.cursor] {
			m.selected = m.order[m.cursor]
			m.detailTop = 0
		}
		m.clampAll()
		return m.syncTimeline()
	case PaneDetail:
		m.moveDetail(act)
	case PaneTimeline:
		m.tl.move(act, m.timelineHeight())
	}
	return nil
}

// copyFocused copies the focused item with OSC 52. Inside tmux the sequence is also sent wrapped in
// passthrough, because tmux only forwards OSC 52 itself when set-clipboard is on.
func (m *Model) copyFocused() tea.Cmd { return m.copyText(m.focusedText()) }

func (m *Model) copyText(text string) tea.Cmd {
	if text == "" {
		m.setNote("nothing to copy")
		return nil
	}
	m.setNote(fmt.Sprintf("copied %d bytes", len(text)))
	cmds := []tea.Cmd{tea.SetClipboard(text)}
	if m.opts.InTmux {
		cmds = append(cmds, tea.Raw(ansi.TmuxPassthrough(ansi.SetSystemClipboard(text))))
	}
	return tea.Batch(cmds...)
}

func (m Model) focusedText() string {
	run, ok := m.selectedRun()
	if !ok {
		return ""
	}
	switch m.focus {
	case PaneDetail:
		sel := m.detailSelection(run)
		if sel.key != "" {
			return sel.key
		}
	case PaneTimeline:
		if line, ok := m.tl.cursorLine(); ok {
			return line
		}
	}
	return run.Dir
}

// InTmux reports whether this process runs inside tmux.
func InTmux() bool { return os.Getenv("TMUX") != "" }

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return max(lo, min(v, hi))
}
