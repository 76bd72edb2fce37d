package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/model"
)

// app is what every component shares: the options, the keymap, the theme, the runs as last read, the
// selected run and the footer's messages. The root owns it; components read it and change only the parts
// that are theirs (the runs pane sets the selection).
type app struct {
	opts  Options
	keys  KeyMap
	theme Theme
	actor Actor

	runs map[string]model.Run // by Run.Key
	// hosts is the health of each remote host, as the remote watcher last said.
	hosts []model.HostHealth
	// remoteLogs holds the log lines of remote runs as their hosts streamed them, by ssh://host/path:
	// the log file itself is on the other machine.
	remoteLogs map[string][]string
	health     Health
	lastChange time.Time
	loaded     bool

	selected string // Run.Key of the selected run
	focus    Pane

	msgs messages

	notify notifyState
}

func (a *app) now() time.Time { return a.opts.Now() }

func (a *app) selectedRun() (model.Run, bool) {
	r, ok := a.runs[a.selected]
	return r, ok
}

func (a *app) note(s string)  { a.msgs.add(Sanitize(s), false, a.now()) }
func (a *app) fail(err error) { a.msgs.add(Sanitize(err.Error()), true, a.now()) }

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

func (ms *messages) add(text string, isErr bool, at time.Time) {
	ms.last = message{text: text, err: isErr, at: at}
	ms.showing = text != ""
}

// current is the message the footer shows at now, if any.
func (ms *messages) current(now time.Time) (message, bool) {
	if !ms.showing {
		return message{}, false
	}
	ttl := noteTTL
	if ms.last.err {
		ttl = errorTTL
	}
	if now.Sub(ms.last.at) > ttl {
		return message{}, false
	}
	return ms.last, true
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

// maxRemoteLogLines bounds what is kept of each remote run's streamed log.
const maxRemoteLogLines = 20_000

// keepRemoteLogs appends streamed log entries of remote runs, as log lines the timeline reads.
func (a *app) keepRemoteLogs(appended []LogAppend) {
	for _, l := range appended {
		if a.remoteLogs == nil {
			a.remoteLogs = map[string][]string{}
		}
		lines := a.remoteLogs[l.Path]
		if l.Truncated || l.Rotated {
			lines = nil
		}
		for _, e := range l.Entries {
			if e.HasTime || !e.Time.IsZero() {
				lines = append(lines, "["+e.Time.UTC().Format("2006-01-02T15:04:05Z")+"] "+e.Message)
			} else if e.Message != "" {
				lines = append(lines, e.Message)
			}
			lines = append(lines, e.Continuation...)
		}
		if over := len(lines) - maxRemoteLogLines; over > 0 {
			lines = append([]string(nil), lines[over:]...)
		}
		a.remoteLogs[l.Path] = lines
	}
}

// remoteLines is the streamed log of a remote run, or a line saying none has arrived yet.
func (a *app) remoteLines(run model.Run) []string {
	if lines := a.remoteLogs[remoteLogKey(run)]; len(lines) > 0 {
		return lines
	}
	return []string{"(" + run.Remote.Host + ": log lines appear here as the host appends them)"}
}

// remoteLogKey is how a remote run's log is named in batches: ssh://host/path.
func remoteLogKey(run model.Run) string {
	if run.Remote == nil || run.Log == nil {
		return ""
	}
	return "ssh://" + run.Remote.Host + run.Log.Path
}
