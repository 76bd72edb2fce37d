// Package app is what every component of the dashboard shares, as gh-dash's ProgramContext is: the
// options, the keymap and theme, the runs as last read, the selection and focus, the footer's messages and
// the one wake-up (App); the messages that carry runs in and requests out (msgs.go); the action requests
// and the Actor that plans them (actions.go); the clipboard, the brief and the notifier's mute. The root
// in ui owns the App; a component reads it and changes only what is its own (the runs pane sets the
// selection). It imports no component, so every component may import it.
//
// app.go: the shared state and the footer's message store.
package app

import (
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"runwatch/model"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
)

// App is what every component shares: the options, the keymap, the theme, the runs as last read, the
// selected run and the footer's messages. The root owns it; components read it and change only the parts
// that are theirs (the runs pane sets the selection).
type App struct {
	Opts  Options
	Keys  keys.KeyMap
	Theme theme.Theme
	Actor Actor

	// Runs are by Run.Key. A run is never changed in place: a change is a new value, so the runs pane's
	// cached rows point at it rather than keep copies of what they show.
	Runs map[string]*model.Run
	// Applying holds the runs (by Run.Key) with a confirmed action not yet finished: no other action on
	// them starts meanwhile (one may wait on a lock for its bound).
	Applying map[string]bool
	// hosts is the health of each remote host, as the remote watcher last said.
	Hosts []model.HostHealth
	// remoteLogs holds the logs of remote runs, by ssh://host/path (remotelog.go): the log file itself is
	// on the other machine.
	remoteLogs map[string]*remoteLog
	// remoteLogBytes is what remoteLogs' entries hold; remoteUse counts their uses (the last is the newest).
	remoteLogBytes int
	remoteUse      uint64
	Health         Health
	LastChange     time.Time
	Loaded         bool

	Selected string // Run.Key of the selected run
	Focus    Pane

	Msgs messages

	Notify notifyState

	// alarm is the dashboard's one wake-up (clock.go).
	alarm alarm

	// agents is the last answer about where each run's agent is (agent.go).
	agents map[string]agentAnswer
}

func (a *App) Now() time.Time { return a.Opts.Now() }

func (a *App) SelectedRun() (model.Run, bool) {
	if r, ok := a.Runs[a.Selected]; ok {
		return *r, true
	}
	return model.Run{}, false
}

func (a *App) Note(s string)  { a.Msgs.add(text.Sanitize(s), false, a.Now()) }
func (a *App) Fail(err error) { a.Msgs.add(ReasonFirst(text.Sanitize(err.Error())), true, a.Now()) }

func (a *App) env() model.Env {
	if a.Opts.Env != nil {
		return a.Opts.Env()
	}
	return model.Env{Now: a.Now()}
}

// getenv is name's value in Opts.Getenv's environment, else the process's.
func (a *App) getenv(name string) string {
	if a.Opts.Getenv != nil {
		return a.Opts.Getenv(name)
	}
	return os.Getenv(name)
}

// Expiry of footer messages: an error stays until the next key or errorTTL, a note for noteTTL. The newest
// message is always the one shown, so an old error never hides a newer "copied".
const (
	ErrorTTL = 10 * time.Second
	noteTTL  = 6 * time.Second
)

type message struct {
	Text string
	Err  bool
	at   time.Time
}

type messages struct {
	Last    message // the newest, kept for `i` even after it left the footer
	showing bool
}

func (ms *messages) add(txt string, isErr bool, at time.Time) {
	ms.Last = message{Text: txt, Err: isErr, at: at}
	ms.showing = txt != ""
}

// Current is the message the footer shows at now, if any.
func (ms *messages) Current(now time.Time) (message, bool) {
	if !ms.showing {
		return message{}, false
	}
	if !now.Before(ms.Until()) {
		return message{}, false
	}
	return ms.Last, true
}

// Until is the first instant the newest message no longer shows.
func (ms *messages) Until() time.Time {
	ttl := noteTTL
	if ms.Last.Err {
		ttl = ErrorTTL
	}
	return ms.Last.at.Add(ttl + 1)
}

// KeyPressed dismisses an error: the person has seen it and moved on (i still opens it).
func (ms *messages) KeyPressed() {
	if ms.showing && ms.Last.Err {
		ms.showing = false
	}
}

func (ms *messages) Clear() { ms.showing = false }

func (ms *messages) ErrText() string {
	if ms.showing && ms.Last.Err {
		return ms.Last.Text
	}
	return ""
}

func (ms *messages) NoteText() string {
	if ms.showing && !ms.Last.Err {
		return ms.Last.Text
	}
	return ""
}

// QuitCmd is the root's way out; it exists so components never return tea.Quit themselves.
func QuitCmd() tea.Cmd { return tea.Quit }

// RemoteLogKey is how a remote run's log is named in batches: ssh://host/path.
func RemoteLogKey(run model.Run) string {
	if run.Remote == nil || run.Log == nil {
		return ""
	}
	return model.RemoteKey(run.Remote.Host, run.Log.Path)
}

// ReasonFirst moves the paths of a Go error chain ("pause: /…/MANIFEST.yaml: yaml: line 3: …") after its
// reason ("pause: yaml: line 3: … (/…/MANIFEST.yaml)"): a path first pushed the reason out of the footer.
// A segment is moved when it is a bare absolute path, or an operation and a path ("open /x/y").
func ReasonFirst(msg string) string {
	parts := strings.Split(msg, ": ")
	if len(parts) < 3 {
		return msg
	}
	var kept, paths []string
	for i, p := range parts {
		last := i == len(parts)-1
		switch {
		case !last && isPath(p):
			paths = append(paths, p)
		case !last && i > 0 && strings.Count(p, " ") == 1 && isPath(p[strings.IndexByte(p, ' ')+1:]):
			op := p[:strings.IndexByte(p, ' ')]
			kept = append(kept, op)
			paths = append(paths, p[len(op)+1:])
		default:
			kept = append(kept, p)
		}
	}
	if len(paths) == 0 || len(kept) < 2 {
		return msg
	}
	return strings.Join(kept, ": ") + " (" + strings.Join(paths, ", ") + ")"
}

func isPath(s string) bool {
	return len(s) > 1 && s[0] == '/' && !strings.ContainsAny(s, " \t")
}

func SelectStyle(a *App, p Pane) lipgloss.Style {
	if a.Focus == p {
		return a.Theme.Selected
	}
	return a.Theme.SelectedDim
}
