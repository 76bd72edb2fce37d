// Package agentpane finds the tmux pane where a run's agent runs, from the run's own evidence of who runs it:
// a live lock holder (the resumable run lock, jonggrang agent locks), a live parallel worker, or the pane the
// dashboard's launch (X) opened for the run. A holder is followed up its parent chain (/proc) to a pane's
// process, among the panes of the user's tmux servers (the default socket and $TMUX's).
//
// A lock's holder is the lock rule's (model.JudgeLock), judged again now: a pid that is not running, or that
// started after the lock was taken (reused), is no holder. Nor is a process of another user: its pane, if any,
// is not ours to switch to. When no pane is found, the error says why.
package agentpane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"runwatch/model"
	"runwatch/state/launch"
	"runwatch/state/procinfo"
)

// Pane is where a run's agent is (model.AgentPane, so status --json carries it on the run).
type Pane = model.AgentPane

// NotFound is why no pane was found; the goto command exits 3 with it.
type NotFound struct{ Reason string }

func (e *NotFound) Error() string { return e.Reason }

func notFound(format string, args ...any) error {
	return &NotFound{Reason: fmt.Sprintf(format, args...)}
}

// Holder is a process the run names as its agent.
type Holder struct {
	PID int
	// Via says which file named it.
	Via string
}

// Inspector is what finding needs of the processes: the lock rule's questions, and the parent and owner of a
// process (procinfo.System).
type Inspector interface {
	model.ProcInspector
	Parent(pid int) (int, bool)
	Owner(pid int) (int, bool)
}

// Holders returns the run's live agents on this machine, best first: its own locks' holders (the lock rule
// judged again at env.Now), then its live parallel workers. why says what there is instead when there are
// none.
func Holders(r *model.Run, env model.Env) (hs []Holder, why string) {
	var elsewhere, dead []string
	for _, l := range r.Locks {
		if l.Shared {
			continue // a project lock no run claims is not this run's agent
		}
		if l.Host != "" && env.Host != "" && !model.SameHost(l.Host, env.Host) {
			elsewhere = append(elsewhere, fmt.Sprintf("lock %s is held on %s", l.Path, l.Host))
			continue
		}
		again := l
		again.Kind = r.Kind
		env.Elsewhere = nil // a lock of this host only: another is answered above
		model.JudgeLock(&again, env)
		if again.Verdict != model.VerdictLive || again.PID <= 0 {
			dead = append(dead, fmt.Sprintf("lock %s: %s", l.Path, strings.Join(again.Reasons, "; ")))
			continue
		}
		hs = append(hs, Holder{PID: again.PID, Via: "lock " + l.Path})
	}
	if r.Jonggrang != nil && env.Proc != nil {
		for _, g := range r.Jonggrang.Groups {
			// A worker's pid has no start time beside it to catch a reuse: only a group still marked running
			// whose pid runs is taken.
			if g.PID > 0 && strings.EqualFold(g.Status, "running") && env.Proc.Alive(g.PID) {
				hs = append(hs, Holder{PID: g.PID, Via: "worker " + g.FeatureID})
			}
		}
	}
	if len(hs) > 0 {
		return hs, ""
	}
	switch {
	case len(dead) > 0:
		why = "no live holder: " + strings.Join(dead, "; ")
	case len(elsewhere) > 0:
		why = strings.Join(elsewhere, "; ") + ", not here"
	default:
		why = "no live holder: the run has no lock with a pid and no running worker"
	}
	return nil, why
}

// tmuxRow is one line of `tmux list-panes -a`.
type tmuxRow struct {
	Pane
	panePID int
}

// Panes are the panes of the user's tmux servers, listed once.
type Panes struct {
	rows []tmuxRow
	// looked names the sockets looked at; none answered when rows is empty and running is false.
	looked  []string
	running bool
}

// sockets are the user's tmux servers: the default socket ($TMUX_TMPDIR or /tmp, tmux-UID/default) and the
// one of the tmux runwatch runs in ($TMUX's first field), each once.
func (t Tmux) sockets() []string {
	dir := t.getenv("TMUX_TMPDIR")
	if dir == "" {
		dir = "/tmp"
	}
	out := []string{filepath.Join(dir, "tmux-"+strconv.Itoa(os.Getuid()), "default")}
	if sock := t.CurrentSocket(); sock != "" && sock != out[0] {
		out = append(out, sock)
	}
	return out
}

// listTimeout bounds one tmux call: a server that does not answer is one that is not running for us.
const listTimeout = 5 * time.Second

// rowFormat is what list-panes prints per pane: numbers split by spaces, then the session name, where a space
// stays in the name. (Not tabs: a tmux client without a UTF-8 locale, as an ssh session often is, prints
// a tab as '_'.)
const rowFormat = "#{pane_id} #{pane_pid} #{window_index} #{pane_index} #{session_name}"

// listPanes lists the panes of the servers at sockets: one `tmux list-panes -a` each.
func (t Tmux) listPanes(ctx context.Context, sockets []string) Panes {
	p := Panes{looked: sockets}
	for _, sock := range sockets {
		if _, err := os.Stat(sock); err != nil {
			continue // no server there: tmux would only say so
		}
		out, err := t.output(ctx, sock, "list-panes", "-a", "-F", rowFormat)
		if err != nil {
			continue
		}
		p.running = true
		for _, line := range strings.Split(string(out), "\n") {
			if r, ok := parseRow(line); ok {
				r.Socket = sock
				p.rows = append(p.rows, r)
			}
		}
	}
	return p
}

func parseRow(line string) (tmuxRow, bool) {
	f := strings.SplitN(line, " ", 5)
	if len(f) != 5 || !ValidPaneID(f[0]) {
		return tmuxRow{}, false
	}
	pid, err1 := strconv.Atoi(f[1])
	win, err2 := strconv.Atoi(f[2])
	pane, err3 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 {
		return tmuxRow{}, false
	}
	return tmuxRow{Pane: Pane{PaneID: f[0], Window: win, Pane: pane, Session: f[4]}, panePID: pid}, true
}

// ValidPaneID is tmux's %N: the only form runwatch hands back to tmux as a target.
func ValidPaneID(s string) bool {
	if len(s) < 2 || s[0] != '%' {
		return false
	}
	_, err := strconv.ParseUint(s[1:], 10, 32)
	return err == nil
}

// maxDepth bounds the walk up a parent chain (a loop in /proc would be a kernel bug, a deep tree is not).
const maxDepth = 128

// paneOf follows pid up its parent chain to the pane whose process it is or descends from.
func (p Panes) paneOf(pid int, proc Inspector) (Pane, bool) {
	byPID := make(map[int]Pane, len(p.rows))
	for _, r := range p.rows {
		byPID[r.panePID] = r.Pane
	}
	for range maxDepth {
		if pane, ok := byPID[pid]; ok {
			return pane, true
		}
		parent, ok := proc.Parent(pid)
		if !ok || parent <= 1 || parent == pid {
			return Pane{}, false
		}
		pid = parent
	}
	return Pane{}, false
}

// Finder finds the panes of runs' agents. It lists the panes once, on the first run that has a live agent, so
// a status over many runs asks tmux at most once per server.
type Finder struct {
	Env  model.Env
	Proc Inspector
	// Tmux is how the servers are found and asked.
	Tmux Tmux
	// Launched returns the pane the dashboard launched the run's resume command in (state/launch), if any.
	Launched func(statePath string) (launch.Launched, bool)

	once  sync.Once
	panes Panes
}

// NewFinder finds on this machine, in the user's tmux servers that tmux reaches, with the launches recorded
// at launches ("": none).
func NewFinder(env model.Env, tmux Tmux, launches string) *Finder {
	f := &Finder{Env: env, Proc: procinfo.System{}, Tmux: tmux}
	if launches != "" {
		f.Launched = func(sp string) (launch.Launched, bool) { return launch.LastLaunch(launches, sp) }
	}
	return f
}

func (f *Finder) list() Panes {
	f.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*listTimeout)
		defer cancel()
		f.panes = f.Tmux.listPanes(ctx, f.Tmux.sockets())
	})
	return f.panes
}

// Find returns the pane of r's agent, or a *NotFound saying why there is none.
func (f *Finder) Find(r *model.Run) (Pane, error) {
	if r.Remote != nil {
		return Pane{}, notFound("the run is on %s: its runwatch there finds the pane", r.Remote.Host)
	}
	if err := canWalk(); err != nil {
		return Pane{}, err
	}
	env := f.Env
	env.Proc, env.Now = f.Proc, time.Now() // judged now: the holder may have exited since the run was read
	holders, why := Holders(r, env)
	var launched launch.Launched
	hasLaunch := false
	if f.Launched != nil {
		launched, hasLaunch = f.Launched(r.StatePath)
	}
	if len(holders) == 0 && !hasLaunch {
		return Pane{}, &NotFound{Reason: why}
	}
	panes := f.list()
	if !panes.running {
		return Pane{}, notFound("tmux is not running (no server at %s)", strings.Join(panes.looked, " or "))
	}
	uid := os.Getuid()
	var notOurs, inNoPane []string
	for _, h := range holders {
		if owner, ok := f.Proc.Owner(h.PID); !ok || owner != uid {
			notOurs = append(notOurs, fmt.Sprintf("pid %d (%s) runs as another user", h.PID, h.Via))
			continue
		}
		if pane, ok := panes.paneOf(h.PID, f.Proc); ok {
			pane.PID, pane.Via, pane.Host = h.PID, h.Via, ""
			return pane, nil
		}
		inNoPane = append(inNoPane, fmt.Sprintf("pid %d (%s)", h.PID, h.Via))
	}
	if hasLaunch {
		for _, r := range panes.rows {
			// The pane's id and its process both as recorded: a pane id is reused after a server restart.
			if r.Socket == launched.Socket && r.PaneID == launched.PaneID && r.panePID == launched.PanePID && f.Proc.Alive(r.panePID) {
				pane := r.Pane
				pane.PID, pane.Via = r.panePID, "launched with X"
				return pane, nil
			}
		}
	}
	var reasons []string
	if len(inNoPane) > 0 {
		reasons = append(reasons, strings.Join(inNoPane, ", ")+" is in no tmux pane (started by nohup, systemd or another terminal)")
	}
	reasons = append(reasons, notOurs...)
	if len(holders) == 0 {
		reasons = append(reasons, why)
	}
	if hasLaunch {
		reasons = append(reasons, "the window launched with X ("+launched.PaneID+") is closed")
	}
	return Pane{}, &NotFound{Reason: strings.Join(reasons, "; ")}
}

// IsNotFound reports whether err is a *NotFound.
func IsNotFound(err error) bool {
	var nf *NotFound
	return errors.As(err, &nf)
}

// Command is the hidden subcommand a runwatch runs on another machine to find the pane of a run there:
// `runwatch __agentpane STATEPATH` prints an Answer.
const Command = "__agentpane"

// Answer is what Command prints: the pane, or why there is none.
type Answer struct {
	Pane     *Pane  `json:"pane,omitempty"`
	NotFound string `json:"not_found,omitempty"`
}
