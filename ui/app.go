package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
)

// app is what every component shares: the options, the keymap, the theme, the runs as last read, the
// selected run and the footer's messages. The root owns it; components read it and change only the parts
// that are theirs (the runs pane sets the selection).
type app struct {
	opts  Options
	keys  keys.KeyMap
	theme theme.Theme
	actor Actor

	runs map[string]model.Run // by Run.Key
	// hosts is the health of each remote host, as the remote watcher last said.
	hosts []model.HostHealth
	// remoteLogs holds the logs of remote runs, by ssh://host/path (remotelog.go): the log file itself is
	// on the other machine.
	remoteLogs map[string]*remoteLog
	health     Health
	lastChange time.Time
	loaded     bool

	selected string // Run.Key of the selected run
	focus    Pane

	msgs messages

	notify notifyState

	// alarm is the dashboard's one wake-up (clock.go).
	alarm alarm
}

func (a *app) now() time.Time { return a.opts.Now() }

func (a *app) selectedRun() (model.Run, bool) {
	r, ok := a.runs[a.selected]
	return r, ok
}

func (a *app) note(s string)  { a.msgs.add(text.Sanitize(s), false, a.now()) }
func (a *app) fail(err error) { a.msgs.add(reasonFirst(text.Sanitize(err.Error())), true, a.now()) }

func (a *app) env() model.Env {
	if a.opts.Env != nil {
		return a.opts.Env()
	}
	return model.Env{Now: a.now()}
}

// Expiry of footer messages: an error stays until the next key or errorTTL, a note for noteTTL. The newest
// message is always the one shown, so an old error never hides a newer "copied".
const (
	errorTTL = 10 * time.Second
	noteTTL  = 6 * time.Second
)

type message struct {
	text string
	err  bool
	at   time.Time
}

type messages struct {
	last    message // the newest, kept for `i` even after it left the footer
	showing bool
}

func (ms *messages) add(txt string, isErr bool, at time.Time) {
	ms.last = message{text: txt, err: isErr, at: at}
	ms.showing = txt != ""
}

// current is the message the footer shows at now, if any.
func (ms *messages) current(now time.Time) (message, bool) {
	if !ms.showing {
		return message{}, false
	}
	if !now.Before(ms.until()) {
		return message{}, false
	}
	return ms.last, true
}

// until is the first instant the newest message no longer shows.
func (ms *messages) until() time.Time {
	ttl := noteTTL
	if ms.last.err {
		ttl = errorTTL
	}
	return ms.last.at.Add(ttl + 1)
}

// keyPressed dismisses an error: the person has seen it and moved on (i still opens it).
func (ms *messages) keyPressed() {
	if ms.showing && ms.last.err {
		ms.showing = false
	}
}

func (ms *messages) clear() { ms.showing = false }

func (ms *messages) errText() string {
	if ms.showing && ms.last.err {
		return ms.last.text
	}
	return ""
}

func (ms *messages) noteText() string {
	if ms.showing && !ms.last.err {
		return ms.last.text
	}
	return ""
}

// quitCmd is the root's way out; it exists so components never return tea.Quit themselves.
func quitCmd() tea.Cmd { return tea.Quit }

// remoteLogKey is how a remote run's log is named in batches: ssh://host/path.
func remoteLogKey(run model.Run) string {
	if run.Remote == nil || run.Log == nil {
		return ""
	}
	return model.RemoteKey(run.Remote.Host, run.Log.Path)
}
