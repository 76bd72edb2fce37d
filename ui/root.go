// The root of the dashboard: Model, which owns the App, routes each message and key, and keeps the overlay
// stack.

package ui

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/notify"
	"runwatch/state/action"
	"runwatch/ui/app"
	"runwatch/ui/detail"
	"runwatch/ui/keys"
	"runwatch/ui/overlay"
	"runwatch/ui/pager"
	"runwatch/ui/runs"
	"runwatch/ui/text"
	"runwatch/ui/theme"
	"runwatch/ui/timeline"
)

// Model is the dashboard's root: it owns the shared state, sizes the panes, routes each key to the top
// overlay or the focused pane, and keeps overlays on a stack. Behaviour lives in the components.
type Model struct {
	app *app.App

	list   *runs.Pane
	detail *detail.Pane
	tl     *timeline.Pane
	footer *footer

	overlays []app.Overlay

	laidOut [app.PaneCount]rect // the pane sizes the components were last given

	width, height int
	sized         bool // a WindowSizeMsg has arrived
}

// New builds the dashboard model.
func New(opts app.Options) Model {
	if opts.Clock == nil {
		opts.Clock = app.SystemClock{}
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
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	th := opts.Theme
	dark := true
	if (th == "" || th == "auto") && getenv("NO_COLOR") != "" {
		// NO_COLOR strips colour from every style; the mono theme's selection is reverse video, which
		// survives, where the colour theme's would be left as mere bold.
		th = "mono"
	}
	if th == "" || th == "auto" {
		// COLORFGBG ("15;0": light text on a dark background) answers before the terminal does, and is the
		// only answer where the terminal ignores the background query.
		if d, ok := theme.DarkFromColorFGBG(getenv("COLORFGBG")); ok {
			dark = d
		}
	}
	a := &app.App{Opts: opts, Keys: ks, Theme: theme.NewTheme(th, dark), Runs: map[string]*model.Run{}}
	if !opts.ReadOnly {
		a.Actor = opts.Actor
	}
	m := Model{app: a, width: 120, height: 40}
	m.list = runs.New(a)
	m.detail = detail.New(a)
	m.tl = timeline.New(a)
	m.footer = newFooter(a)
	m.footer.segments = m.defaultSegments()
	if opts.Notifier != nil {
		a.Notify.Status = opts.Notifier.Status()
	}
	m.layout()
	return m
}

// Init asks the terminal for its background (for the auto theme). No clock starts here: each frame sets
// the one wake-up it needs (see Clock).
func (m Model) Init() tea.Cmd {
	if m.app.Opts.Theme == "" || m.app.Opts.Theme == "auto" {
		return tea.RequestBackgroundColor
	}
	return nil
}

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	start := time.Now()
	cmd := m.update(msg)
	if m.app.Opts.Debug != nil {
		fmt.Fprintf(m.app.Opts.Debug, "%s update %T %s\n", start.UTC().Format("15:04:05.000000"), msg, time.Since(start))
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	a := m.app
	before := a.Selected
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height, m.sized = msg.Width, msg.Height, true
		m.layout()
	case tea.BackgroundColorMsg:
		if (a.Opts.Theme == "" || a.Opts.Theme == "auto") && a.Theme.Name != "mono" {
			a.Theme = theme.NewTheme("auto", msg.IsDark())
		}
	case app.TickMsg:
		// Time alone changed something drawn: the frame that follows draws it (and sets the next alarm).
		m.tl.Update(msg)
		return nil
	case app.SnapshotMsg:
		a.Runs = make(map[string]*model.Run, len(msg.Runs))
		m.list.ForgetAll()
		for _, r := range msg.Runs {
			a.Runs[r.Key()] = judged(&r)
		}
		a.ForgetRemoteLogs(nil, true)
		a.Health = msg.Health
		if msg.Health.Err != "" {
			// The reason belongs on the first frame, not only after the first change batch.
			a.Fail(errors.New("watcher: " + msg.Health.Err))
		}
		a.LastChange = msg.At
		a.Loaded = true
		m.list.Resort()
	case app.BatchMsg:
		cmd = m.applyBatch(msg)
	case app.ErrorMsg:
		a.Fail(msg.Err)
	case notify.Status:
		a.NotifyStatus(msg)
	case app.WatcherStoppedMsg:
		a.Health.Err = "stopped"
		a.Fail(errors.New("watcher stopped: the runs shown are no longer updated"))
	case timeline.LogOpenedMsg, timeline.LogIndexedMsg, timeline.SearchDoneMsg, timeline.SearchTickMsg, timeline.CountDoneMsg, timeline.FilterDoneMsg:
		cmd = m.tl.Update(msg)
	case app.RemoteTailMsg:
		m.tl.TookRemoteTail(msg)
	case app.AgentMsg:
		cmd = a.TookAgent(msg)
	case app.PlanMsg:
		if msg.Err != nil {
			var refused *action.Refused
			if errors.As(msg.Err, &refused) && refused.First != "" {
				// Another action must come first: say which key does it, and ask nothing else now.
				first := keys.ActOf(refused.First)
				a.Fail(fmt.Errorf("%w — %s first: press %s", msg.Err, firstWords(first), a.Keys.First(first)))
				return nil
			}
			a.Fail(msg.Err)
			if msg.Req.Verb == action.ActStep && msg.Req.To == "" {
				if opts := overlay.StepChoices(msg.Req.Run); len(opts) > 0 {
					m.push(overlay.NewStepChoice(a, msg.Req, msg.Err.Error(), opts))
				}
			}
			return nil
		}
		m.push(overlay.NewConfirm(a, msg.Req, msg.Planned))
	case app.PagerMsg:
		if msg.Note != "" {
			a.Note(msg.Note)
			break
		}
		pg := pager.New(a, msg.Title, msg.Text, msg.Copyable)
		m.push(pg)
		if msg.Pattern != "" {
			pg.SetSearch(msg.Pattern, msg.Regex, true, a.Theme)
		}
	case app.CopiedMsg:
		m.copied(msg)
	case app.AppliedMsg:
		delete(a.Applying, msg.Run)
		if msg.Err != nil {
			a.Fail(msg.Err)
		} else {
			a.Note(msg.Summary)
		}
	case tea.KeyPressMsg:
		cmd = m.handleKey(msg)
	case tea.MouseWheelMsg:
		cmd = m.wheel(msg.Mouse())
	case tea.MouseClickMsg:
		m.click(msg.Mouse())
	}
	if a.Selected != before {
		m.detail.SelectionChanged()
	}
	switch msg.(type) {
	case app.SnapshotMsg, app.BatchMsg, tea.KeyPressMsg, tea.MouseWheelMsg:
		// What Detail says of the agent follows the selection and the run's holders; a lookup per change.
		cmd = tea.Batch(cmd, app.LookUpAgent(a))
	}
	if rs := m.paneRects(); rs != m.laidOut {
		// The arrangement follows the runs (how many, how wide their table is), not only the terminal.
		m.layout()
	}
	return tea.Batch(cmd, m.tl.Sync())
}

func (m *Model) applyBatch(msg app.BatchMsg) tea.Cmd {
	a := m.app
	// While runs are still arriving, a selection nobody moved from the top stays at the top, so the list
	// does not end up scrolled to wherever the first run read happens to sort.
	keepTop := (a.Health.Loading > 0 || msg.Health.Loading > 0) && m.list.Cursor() == 0
	// The logs of remote runs that go (or whose log moves) go with them, once this batch's are kept.
	var gone []string
	// Only a batch that moves a run, or adds or removes one, re-sorts: a flooding host's batches change
	// its runs' logs, not their places.
	moved := len(msg.Removed) > 0 || keepTop
	for _, r := range msg.Changed {
		r = judged(r)
		old, had := a.Runs[r.Key()]
		if had {
			if k := app.RemoteLogKey(*old); k != "" && k != app.RemoteLogKey(*r) {
				gone = append(gone, k)
			}
		}
		moved = moved || !had || !m.list.SamePlace(*old, *r)
		a.Runs[r.Key()] = r
		m.list.Forget(r.Key())
	}
	for _, p := range msg.Removed {
		if r, ok := a.Runs[p]; ok {
			if old := app.RemoteLogKey(*r); old != "" {
				gone = append(gone, old)
			}
		}
		delete(a.Runs, p)
		m.list.Forget(p)
	}
	// Each source's batch carries its own health: the remote hosts', or the local watcher's.
	if msg.Hosts != nil {
		a.Hosts = msg.Hosts
		a.KeepRemoteLogs(msg.Appended)
	} else {
		a.Health = msg.Health
		if msg.Health.Err != "" {
			a.Fail(errors.New("watcher: " + msg.Health.Err))
		}
	}
	a.ForgetRemoteLogs(gone, false)
	if len(msg.Changed) > 0 || len(msg.Removed) > 0 || len(msg.Appended) > 0 {
		a.LastChange = msg.At
	}
	if keepTop {
		a.Selected = ""
	}
	if moved {
		// A batch of only health (a host reconnecting) leaves the order as it is too: re-sorting 8,000 runs
		// for each was most of what a host that stays down cost the dashboard.
		m.list.Resort()
	}
	return m.tl.Batch(msg)
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
	if m.app.Keys.Of(km) != act {
		k := []rune(m.app.Keys.First(act))
		if len(k) != 1 {
			return nil
		}
		km = tea.KeyPressMsg{Code: k[0], Text: string(k)}
	}
	var target app.Component
	steps := 3
	if o := m.top(); o != nil {
		target = o
	} else if p, ok := m.paneAt(ms.X, ms.Y); ok {
		target = m.pane(p)
		if p == app.PaneRuns {
			steps = 1
		}
	} else {
		return nil
	}
	if c, ok := target.(app.Capturer); ok && c.Capturing() {
		return nil // a prompt is open there: the wheel must not type into it
	}
	var cmds []tea.Cmd
	for range steps {
		cmds = append(cmds, target.Update(km))
	}
	return tea.Batch(cmds...)
}

// click is a left click, as in k9s, lazygit and htop: on a pane it focuses the pane, on a run's row it
// selects the run. Over an overlay it does nothing (the overlay has its keys). --no-mouse leaves clicks to
// the terminal, for its own selection.
func (m *Model) click(ms tea.Mouse) {
	if ms.Button != tea.MouseLeft || m.top() != nil {
		return
	}
	p, y, ok := m.paneAtLine(ms.X, ms.Y)
	if !ok {
		return
	}
	if c, isCap := m.pane(m.app.Focus).(app.Capturer); isCap && c.Capturing() {
		return // a prompt is open: a click must not leave it half typed
	}
	if m.app.Focus != p {
		m.setFocus(p)
	}
	if p == app.PaneRuns {
		// The pane's top border, then its header line, then the rows.
		m.list.ClickRow(y - 2)
	}
}

// paneAt is the pane drawn at cell (x, y) of the terminal.
func (m *Model) paneAt(x, y int) (app.Pane, bool) {
	p, _, ok := m.paneAtLine(x, y)
	return p, ok
}

// paneAtLine is the pane drawn at cell (x, y) of the terminal and the line of the pane it is (0: its top
// border).
func (m *Model) paneAtLine(x, y int) (app.Pane, int, bool) {
	y -= headerLines
	if y < 0 || y >= m.bodyHeight() {
		return 0, 0, false
	}
	rs := m.paneRects()
	if m.layoutKind() == layoutWide {
		switch {
		case x < rs[app.PaneRuns].w:
			return app.PaneRuns, y, true
		case y < rs[app.PaneDetail].h:
			return app.PaneDetail, y, true
		}
		return app.PaneTimeline, y - rs[app.PaneDetail].h, true
	}
	for p := app.Pane(0); p < app.PaneCount; p++ {
		if y < rs[p].h {
			return p, y, rs[p].h > 0
		}
		y -= rs[p].h
	}
	return 0, 0, false
}

// changeKeys (the keys that name verbs) act on the Detail pane's selection whichever pane has the focus
// (handleKey), as brief acts on its run, so whether they apply is the Detail's to say from every pane.
var changeKeys = keys.VerbActs()

// helpNotHere is what ? marks "(not here)": what the focused pane says of its own keys, and the Detail's word
// on the keys that act on its selection. From the timeline, R on a stage that cannot be retried was unmarked.
func (m *Model) helpNotHere(focused app.Component) map[string]bool {
	no := map[string]bool{}
	if n, ok := focused.(interface{ NotHere() map[string]bool }); ok {
		maps.Copy(no, n.NotHere())
	}
	detail := m.detail.NotHere()
	for _, act := range append(changeKeys, keys.ActBrief, keys.ActInstall, keys.ActAgent) {
		if detail[act] {
			no[act] = true
		}
	}
	return no
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	a := m.app
	a.Msgs.KeyPressed()
	if o := m.top(); o != nil {
		if closesOverlay(a.Keys, o, msg) {
			if c, ok := o.(app.Closer); ok {
				c.Close()
			}
			m.pop()
			return nil
		}
		cmd := o.Update(msg)
		if o.Done() {
			m.pop()
		}
		return cmd
	}
	focused := m.pane(a.Focus)
	if c, ok := focused.(app.Capturer); ok && c.Capturing() {
		return focused.Update(msg)
	}
	act := a.Keys.Of(msg)
	if act == "" {
		if ref := a.Keys.Refused(msg); ref != "" {
			a.Fail(fmt.Errorf("read-only: %s (%s) changes run state and is off; restart without --read-only to use it", msg.String(), a.Keys.HelpOf(ref)))
		}
		return nil
	}
	if slices.Contains(changeKeys, act) {
		return app.RequestAction(a, act, m.detail.Selection())
	}
	switch act {
	case keys.ActQuit:
		return app.QuitCmd()
	case keys.ActHelp:
		m.push(overlay.NewHelp(a, m.helpNotHere(focused)))
		return nil
	case keys.ActMessage:
		if a.Msgs.Last.Text == "" {
			a.Note("no message yet")
			return nil
		}
		m.push(pager.New(a, "Message", a.Msgs.Last.Text, true))
		return nil
	case keys.ActNextPane:
		m.setFocus((a.Focus + 1) % app.PaneCount)
		return nil
	case keys.ActPrevPane:
		m.setFocus((a.Focus + app.PaneCount - 1) % app.PaneCount)
		return nil
	case keys.ActNextMatch, keys.ActPrevMatch, keys.ActNextError, keys.ActPrevError, keys.ActSearchBack, keys.ActOnlyMatch:
		// The timeline's search keys work from any pane and take the focus there, so the match is seen.
		m.setFocus(app.PaneTimeline)
		return m.tl.Update(msg)
	case keys.ActBrief:
		return app.ShowBrief(a)
	case keys.ActLaunch:
		return app.RequestLaunch(a)
	case keys.ActAgent:
		return app.GoToAgent(a)
	case keys.ActInstall:
		return app.RequestInstall(a)
	case keys.ActCopy:
		return app.CopyText(a, m.focusedText())
	case keys.ActMute:
		a.ToggleMute()
		return nil
	}
	if act == keys.ActBack && m.tl.CancelSearch() {
		return nil // esc stops a long search first; the cursor stays where it was
	}
	if act == keys.ActSort || act == keys.ActHideDone {
		// How the runs are listed is a view of the whole dashboard, as in k9s: s and . were silent outside
		// the runs pane, which stays in sight, or comes back with tab.
		return m.list.Update(msg)
	}
	if act == keys.ActFilter && a.Focus == app.PaneDetail {
		// Detail has nothing to search: / filters the runs, from wherever the person is reading.
		m.setFocus(app.PaneRuns)
		return m.list.Update(msg)
	}
	if act == keys.ActBack && a.Focus != app.PaneRuns {
		m.setFocus(app.PaneRuns)
		return nil
	}
	if act == keys.ActOpen && a.Focus == app.PaneRuns {
		m.setFocus(app.PaneDetail)
		return nil
	}
	return focused.Update(msg)
}

// closesOverlay says a key closes the top overlay rather than quitting: the quit key, as in less, man and
// k9s, closes what is open; a ctrl chord bound to quit (ctrl+c) still quits from anywhere, and an overlay
// reading text (a search prompt, a confirmation word) gets its q typed.
func closesOverlay(ks keys.KeyMap, o app.Overlay, msg tea.KeyPressMsg) bool {
	if ks.Of(msg) != keys.ActQuit || strings.HasPrefix(msg.String(), "ctrl+") {
		return false
	}
	c, ok := o.(app.Capturer)
	return !ok || !c.Capturing()
}

// judged makes sure a run carries its attention. The readers' FinalizeRun sets it; a run built another
// way (a test, a future remote source) gets the same judgement from model.Judge, never one of the ui's own.
// judged is r with its attention, which a run read by another runwatch may lack: a copy then, as the batch's
// runs are shared with the watcher and never changed in place.
func judged(r *model.Run) *model.Run {
	if r.Attention.Code == "" {
		c := *r
		c.Attention = model.Judge(&c)
		return &c
	}
	return r
}

func (m *Model) setFocus(p app.Pane) {
	m.app.Focus = p
	m.layout() // the stacked layout gives the focused lower pane the odd line; single shows only it
}

func (m *Model) pane(p app.Pane) app.Component {
	switch p {
	case app.PaneDetail:
		return m.detail
	case app.PaneTimeline:
		return m.tl
	}
	return m.list
}

func (m *Model) push(o app.Overlay) {
	o.SetSize(m.width, m.bodyHeight())
	m.overlays = append(m.overlays, o)
}

func (m *Model) pop() { m.overlays = m.overlays[:len(m.overlays)-1] }

func (m Model) top() app.Overlay {
	if len(m.overlays) == 0 {
		return nil
	}
	return m.overlays[len(m.overlays)-1]
}

// focused is the component whose keys the footer teaches: the top overlay, else the focused pane.
func (m Model) focused() app.Component {
	if o := m.top(); o != nil {
		return o
	}
	mm := m
	return mm.pane(m.app.Focus)
}

func (m Model) focusedText() string {
	run, ok := m.app.SelectedRun()
	if !ok {
		return ""
	}
	switch m.app.Focus {
	case app.PaneDetail:
		if sel := m.detail.Selection(); sel.Key != "" {
			return sel.Key
		}
	case app.PaneTimeline:
		if line, ok := m.tl.CursorLine(); ok {
			return line
		}
	}
	return run.Dir
}

// firstWords says what the action that must come first does.
func firstWords(act string) string {
	if act == keys.ActUnlock {
		return "clear the lock"
	}
	return act
}

func (m *Model) copied(msg app.CopiedMsg) {
	if msg.Err != nil {
		m.app.Fail(fmt.Errorf("copy did not reach the clipboard: %w", msg.Err))
		return
	}
	if msg.N > app.MaxOSC52 {
		m.app.Note(fmt.Sprintf("copied %s to tmux's buffer (prefix ] pastes it); the system clipboard gets it only if the terminal takes that much", text.HumanBytes(int64(msg.N))))
		return
	}
	m.app.Note(fmt.Sprintf("copied %d bytes (tmux buffer and clipboard)", msg.N))
}
