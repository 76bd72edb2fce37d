// The options the dashboard is built with, the panes it names, and the log sources its timeline reads.

package app

import (
	"context"
	"io"
	"regexp"
	"runwatch/model"
	"runwatch/state/brief"
	"runwatch/ui/keys"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Pane identifies one of the three panes.
type Pane int

const (
	PaneRuns Pane = iota
	PaneDetail
	PaneTimeline
	PaneCount
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
	// where it looked; ScannedHosts is the host of each ("" for a folder here), so a root whose host did
	// not answer is named by the host's error, not as looked in.
	Scanned      []string
	ScannedHosts []string
	Actor        Actor // nil disables actions
	OpenLog      OpenLogFunc
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
	// Getenv is the environment the theme is picked from (NO_COLOR, COLORFGBG) and tmux is reached through
	// (TMUX, TMUX_PANE, TMUX_TMPDIR: the agent key, the launch key); nil means the process's. A test passes
	// its own, so it need not set the process's and can run in parallel.
	Getenv func(string) string
	// Send delivers those wake-ups into the running program (tea.Program.Send); nil means none are set
	// (tests drive the model by hand).
	Send func(tea.Msg)
	// Debug, when set, receives one line per message and per frame with its timing.
	Debug io.Writer
	// InTmux makes `y` copy through tmux (load-buffer -w) as well as OSC 52.
	InTmux bool
	// Env gives briefs and resume commands the time, host and process facts (state.NewEnv).
	Env func() model.Env
	// BriefCache is where a brief keeps the index of a large run.log (brief.IndexCache); zero keeps it in
	// memory only.
	BriefCache brief.IndexCache
	// ResumeCommand is the config's resume_command templates, by convention.
	ResumeCommand map[string]string
	// FindAgent finds where a run's agent runs (the agent key, Detail's agent line); nil looks for none.
	FindAgent FindAgentFunc
	// Launches is the record of launches in tmux (state/launch), where the go-to-agent key finds a launched
	// run's pane; "" records none.
	Launches string
	// Copy puts text on the clipboard through something other than the terminal (tmux load-buffer); nil
	// picks tmux when InTmux. Tests replace it.
	Copy func(txt string) error
	// Notifier mutes notifications for the session (the mute key); nil when there is none.
	Notifier Notifier
}

func Clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return max(lo, min(v, hi))
}

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
