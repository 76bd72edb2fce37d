// Package ui is the Bubble Tea dashboard. It takes all its data through messages (SnapshotMsg, BatchMsg), so
// it is built and tested against model values and fixtures without a watcher; package cli wires the
// watcher in.
//
// Where things are: root.go routes keys and keeps the overlay stack; runs.go, detail.go and timeline.go are
// the three panes; confirm.go, pager.go (brief, long messages) and helpview.go are the overlays; footer.go
// and header.go frame them; keys.go is the keymap every hint and `?` come from; actions.go turns keys into
// action requests; filter.go parses the runs filter; layout.go sizes the panes.
package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/notify"
	"runwatch/state/action"
	"runwatch/ui/keys"
	"runwatch/ui/theme"
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
	Theme    string      // auto, dark, light, mono
	Keys     keys.KeyMap // from NewKeyMap; the zero value means defaults
	ReadOnly bool
	// NoMouse leaves the mouse to the terminal (its own text selection without shift); otherwise the wheel
	// scrolls the pane under the pointer and selecting text takes shift-drag.
	NoMouse bool
	// Scanned names the folders (and remote roots) the runs are looked for in, for the empty list to say
	// where it looked.
	Scanned []string
	Actor   Actor // nil disables actions
	OpenLog OpenLogFunc
	// RemoteLog fetches a remote run's log history when its timeline opens; nil shows only what its host
	// streams.
	RemoteLog RemoteLogFunc
	// RemoteBrief asks a remote run's host for its brief (the host reads its own files and runs its own
	// git); nil refuses the brief of a remote run rather than building one here from paths of that host.
	RemoteBrief func(ctx context.Context, run model.Run) (string, error)
	// Now is the clock for "updated Ns ago" and relative times; tests pin it. nil means Clock's.
	Now func() time.Time
	// Clock wakes the dashboard when time passing changes what it shows (see Clock); nil means the system's.
	Clock Clock
	// Send delivers those wake-ups into the running program (tea.Program.Send); nil means none are set
	// (tests drive the model by hand).
	Send func(tea.Msg)
	// Debug, when set, receives one line per message and per frame with its timing.
	Debug io.Writer
	// InTmux makes `y` copy through tmux (load-buffer -w) as well as OSC 52.
	InTmux bool
	// Env gives briefs and resume commands the time, host and process facts (state.NewEnv).
	Env func() model.Env
	// ResumeCommand is the config's resume_command templates, by convention.
	ResumeCommand map[string]string
	// Copy puts text on the clipboard through something other than the terminal (tmux load-buffer); nil
	// picks tmux when InTmux. Tests replace it.
	Copy func(txt string) error
	// Notifier mutes notifications for the session (the mute key); nil when there is none.
	Notifier Notifier
}

// Model is the dashboard's root: it owns the shared state, sizes the panes, routes each key to the top
// overlay or the focused pane, and keeps overlays on a stack. Behaviour lives in the components.
type Model struct {
	app *app

	list   *runsPane
	detail *detailPane
	tl     *timelinePane
	footer *footer

	overlays []overlay

	laidOut [paneCount]rect // the pane sizes the components were last given

	width, height int
	sized         bool // a WindowSizeMsg has arrived
}

// New builds the dashboard model.
func New(opts Options) Model {
	if opts.Clock == nil {
		opts.Clock = systemClock{}
	}
	if opts.Now == nil {
		opts.Now = opts.Clock.Now
	}
	ks := opts.Keys
	if ks.IsZero() {
		ks = keys.DefaultKeyMap(opts.ReadOnly)
	}
	if opts.ReadOnly && !ks.ReadOnly {
		// A keymap built for read-write must not leak mutating keys into a read-only session.
		ks = keys.BuildKeyMap(ks.Bindings, true)
	}
	th := opts.Theme
	dark := true
	if (th == "" || th == "auto") && os.Getenv("NO_COLOR") != "" {
		// NO_COLOR strips colour from every style; the mono theme's selection is reverse video, which
		// survives, where the colour theme's would be left as mere bold.
		th = "mono"
	}
	if th == "" || th == "auto" {
		// COLORFGBG ("15;0": light text on a dark background) answers before the terminal does, and is the
		// only answer where the terminal ignores the background query.
		if d, ok := theme.DarkFromColorFGBG(os.Getenv("COLORFGBG")); ok {
			dark = d
		}
	}
	a := &app{opts: opts, keys: ks, theme: theme.NewTheme(th, dark), runs: map[string]model.Run{}}
	if !opts.ReadOnly {
		a.actor = opts.Actor
	}
	m := Model{app: a, width: 120, height: 40}
	m.list = newRunsPane(a)
	m.detail = newDetailPane(a)
	m.tl = newTimelinePane(a)
	m.footer = newFooter(a)
	m.footer.segments = m.defaultSegments()
	if opts.Notifier != nil {
		a.notify.status = opts.Notifier.Status()
	}
	m.layout()
	return m
}

// Init asks the terminal for its background (for the auto theme). No clock starts here: each frame sets
// the one wake-up it needs (see Clock).
func (m Model) Init() tea.Cmd {
	if m.app.opts.Theme == "" || m.app.opts.Theme == "auto" {
		return tea.RequestBackgroundColor
	}
	return nil
}

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	start := time.Now()
	cmd := m.update(msg)
	if m.app.opts.Debug != nil {
		fmt.Fprintf(m.app.opts.Debug, "%s update %T %s\n", start.UTC().Format("15:04:05.000000"), msg, time.Since(start))
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	a := m.app
	before := a.selected
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height, m.sized = msg.Width, msg.Height, true
		m.layout()
	case tea.BackgroundColorMsg:
		if (a.opts.Theme == "" || a.opts.Theme == "auto") && a.theme.Name != "mono" {
			a.theme = theme.NewTheme("auto", msg.IsDark())
		}
	case tickMsg:
		// Time alone changed something drawn: the frame that follows draws it (and sets the next alarm).
		m.tl.Update(msg)
		return nil
	case SnapshotMsg:
		a.runs = make(map[string]model.Run, len(msg.Runs))
		m.list.forgetAll()
		for _, r := range msg.Runs {
			a.runs[r.Key()] = judged(r)
		}
		a.health = msg.Health
		if msg.Health.Err != "" {
			// The reason belongs on the first frame, not only after the first change batch.
			a.fail(errors.New("watcher: " + msg.Health.Err))
		}
		a.lastChange = msg.At
		a.loaded = true
		m.list.resort()
	case BatchMsg:
		cmd = m.applyBatch(msg)
	case ErrorMsg:
		a.fail(msg.Err)
	case notify.Status:
		a.notifyStatus(msg)
	case WatcherStoppedMsg:
		a.health.Err = "stopped"
		a.fail(errors.New("watcher stopped: the runs shown are no longer updated"))
	case logOpenedMsg, logIndexedMsg, searchDoneMsg, searchTickMsg, countDoneMsg, filterDoneMsg:
		cmd = m.tl.Update(msg)
	case remoteTailMsg:
		m.tl.tookRemoteTail(msg)
	case planMsg:
		if msg.err != nil {
			var refused *action.Refused
			if errors.As(msg.err, &refused) && refused.First != "" {
				// Another action must come first: say which key does it, and ask nothing else now.
				a.fail(fmt.Errorf("%w — %s first: press %s", msg.err, firstWords(refused.First), a.keys.First(refused.First)))
				return nil
			}
			a.fail(msg.err)
			if msg.req.Action == keys.ActStep && msg.req.To == "" {
				if opts := stepChoices(msg.req.Run); len(opts) > 0 {
					m.push(newStepChoice(a, msg.req, msg.err.Error(), opts))
				}
			}
			return nil
		}
		m.push(newConfirm(a, msg.req, msg.planned))
	case pagerMsg:
		if msg.note != "" {
			a.note(msg.note)
			break
		}
		pg := newPager(a, msg.title, msg.text, msg.copyable)
		m.push(pg)
		if msg.pattern != "" {
			pg.setSearch(msg.pattern, msg.regex, true, a.theme)
		}
	case copiedMsg:
		m.copied(msg)
	case appliedMsg:
		if msg.err != nil {
			a.fail(msg.err)
		} else {
			a.note(msg.summary)
		}
	case tea.KeyPressMsg:
		cmd = m.handleKey(msg)
	case tea.MouseWheelMsg:
		cmd = m.wheel(msg.Mouse())
	}
	if a.selected != before {
		m.detail.selectionChanged()
	}
	if rs := m.paneRects(); rs != m.laidOut {
		// The arrangement follows the runs (how many, how wide their table is), not only the terminal.
		m.layout()
	}
	return tea.Batch(cmd, m.tl.sync())
}

func (m *Model) applyBatch(msg BatchMsg) tea.Cmd {
	a := m.app
	// While runs are still arriving, a selection nobody moved from the top stays at the top, so the list
	// does not end up scrolled to wherever the first run read happens to sort.
	keepTop := (a.health.Loading > 0 || msg.Health.Loading > 0) && m.list.cursor == 0
	for _, r := range msg.Changed {
		a.runs[r.Key()] = judged(r)
		m.list.forget(r.Key())
	}
	for _, p := range msg.Removed {
		delete(a.runs, p)
		m.list.forget(p)
	}
	// Each source's batch carries its own health: the remote hosts', or the local watcher's.
	if msg.Hosts != nil {
		a.hosts = msg.Hosts
		a.keepRemoteLogs(msg.Appended)
	} else {
		a.health = msg.Health
		if msg.Health.Err != "" {
			a.fail(errors.New("watcher: " + msg.Health.Err))
		}
	}
	if len(msg.Changed) > 0 || len(msg.Removed) > 0 || len(msg.Appended) > 0 {
		a.lastChange = msg.At
	}
	if keepTop {
		a.selected = ""
	}
	m.list.resort()
	return m.tl.batch(msg)
}

// handleKey routes a key: to the top overlay when there is one, to a pane reading a line of text, then to
// the root's own keys (quit, help, panes, run-level actions), then to the focused pane.
// wheel scrolls what is under the pointer, as k9s and lazygit do: an overlay when one is open, else the pane
// there (the runs list moves its selection a row a notch, the others scroll three lines), without moving
// the focus. It moves by the keymap's own up and down, so a pane scrolls exactly as its keys scroll it.
func (m *Model) wheel(ms tea.Mouse) tea.Cmd {
	act := keys.ActDown
	switch ms.Button {
	case tea.MouseWheelDown:
	case tea.MouseWheelUp:
		act = keys.ActUp
	default:
		return nil
	}
	km := tea.KeyPressMsg{Code: tea.KeyDown}
	if act == keys.ActUp {
		km = tea.KeyPressMsg{Code: tea.KeyUp}
	}
	if m.app.keys.Of(km) != act {
		k := []rune(m.app.keys.First(act))
		if len(k) != 1 {
			return nil
		}
		km = tea.KeyPressMsg{Code: k[0], Text: string(k)}
	}
	var target component
	steps := 3
	if o := m.top(); o != nil {
		target = o
	} else if p, ok := m.paneAt(ms.X, ms.Y); ok {
		target = m.pane(p)
		if p == PaneRuns {
			steps = 1
		}
	} else {
		return nil
	}
	if c, ok := target.(capturer); ok && c.Capturing() {
		return nil // a prompt is open there: the wheel must not type into it
	}
	var cmds []tea.Cmd
	for range steps {
		cmds = append(cmds, target.Update(km))
	}
	return tea.Batch(cmds...)
}

// paneAt is the pane drawn at cell (x, y) of the terminal.
func (m *Model) paneAt(x, y int) (Pane, bool) {
	y -= headerLines
	if y < 0 || y >= m.bodyHeight() {
		return 0, false
	}
	rs := m.paneRects()
	if m.layoutKind() == layoutWide {
		switch {
		case x < rs[PaneRuns].w:
			return PaneRuns, true
		case y < rs[PaneDetail].h:
			return PaneDetail, true
		}
		return PaneTimeline, true
	}
	for p := Pane(0); p < paneCount; p++ {
		if y < rs[p].h {
			return p, rs[p].h > 0
		}
		y -= rs[p].h
	}
	return 0, false
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	a := m.app
	a.msgs.keyPressed()
	if o := m.top(); o != nil {
		cmd := o.Update(msg)
		if o.Done() {
			m.pop()
		}
		return cmd
	}
	focused := m.pane(a.focus)
	if c, ok := focused.(capturer); ok && c.Capturing() {
		return focused.Update(msg)
	}
	act := a.keys.Of(msg)
	if act == "" {
		if ref := a.keys.Refused(msg); ref != "" {
			a.fail(fmt.Errorf("read-only: %s (%s) changes run state and is off; restart without --read-only to use it", msg.String(), a.keys.HelpOf(ref)))
		}
		return nil
	}
	switch act {
	case keys.ActQuit:
		return quitCmd()
	case keys.ActHelp:
		m.push(newHelpView(a, focused))
		return nil
	case keys.ActMessage:
		if a.msgs.last.text == "" {
			a.note("no message yet")
			return nil
		}
		m.push(newPager(a, "Message", a.msgs.last.text, true))
		return nil
	case keys.ActNextPane:
		m.setFocus((a.focus + 1) % paneCount)
		return nil
	case keys.ActPrevPane:
		m.setFocus((a.focus + paneCount - 1) % paneCount)
		return nil
	case keys.ActNextMatch, keys.ActPrevMatch, keys.ActNextError, keys.ActPrevError, keys.ActSearchBack, keys.ActOnlyMatch:
		// The timeline's search keys work from any pane and take the focus there, so the match is seen.
		m.setFocus(PaneTimeline)
		return m.tl.Update(msg)
	case keys.ActUnlock, keys.ActStep, keys.ActTick, keys.ActRetry, keys.ActPause, keys.ActUndo:
		return requestAction(a, act, m.detail.selection())
	case keys.ActBrief:
		return showBrief(a)
	case keys.ActLaunch:
		return requestLaunch(a)
	case keys.ActInstall:
		return requestInstall(a)
	case keys.ActCopy:
		return copyText(a, m.focusedText())
	case keys.ActMute:
		a.toggleMute()
		return nil
	}
	if act == keys.ActBack && m.tl.cancelSearch() {
		return nil // esc stops a long search first; the cursor stays where it was
	}
	if act == keys.ActFilter && a.focus == PaneDetail {
		// Detail has nothing to search: / filters the runs, from wherever the person is reading.
		m.setFocus(PaneRuns)
		return m.list.Update(msg)
	}
	if act == keys.ActBack && a.focus != PaneRuns {
		m.setFocus(PaneRuns)
		return nil
	}
	if act == keys.ActOpen && a.focus == PaneRuns {
		m.setFocus(PaneDetail)
		return nil
	}
	return focused.Update(msg)
}

// judged makes sure a run carries its attention. The readers' FinalizeRun sets it; a run built another
// way (a test, a future remote source) gets the same judgement from model.Judge, never one of the ui's own.
func judged(r model.Run) model.Run {
	if r.Attention.Code == "" {
		r.Attention = model.Judge(&r)
	}
	return r
}

func (m *Model) setFocus(p Pane) {
	m.app.focus = p
	m.layout() // the stacked layout gives the focused lower pane the odd line; single shows only it
}

func (m *Model) pane(p Pane) component {
	switch p {
	case PaneDetail:
		return m.detail
	case PaneTimeline:
		return m.tl
	}
	return m.list
}

func (m *Model) push(o overlay) {
	o.SetSize(m.width, m.bodyHeight())
	m.overlays = append(m.overlays, o)
}

func (m *Model) pop() { m.overlays = m.overlays[:len(m.overlays)-1] }

func (m Model) top() overlay {
	if len(m.overlays) == 0 {
		return nil
	}
	return m.overlays[len(m.overlays)-1]
}

// focused is the component whose keys the footer teaches: the top overlay, else the focused pane.
func (m Model) focused() component {
	if o := m.top(); o != nil {
		return o
	}
	mm := m
	return mm.pane(m.app.focus)
}

func (m Model) focusedText() string {
	run, ok := m.app.selectedRun()
	if !ok {
		return ""
	}
	switch m.app.focus {
	case PaneDetail:
		if sel := m.detail.selection(); sel.key != "" {
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

// firstWords says what the action that must come first does.
func firstWords(act string) string {
	if act == keys.ActUnlock {
		return "clear the lock"
	}
	return act
}
