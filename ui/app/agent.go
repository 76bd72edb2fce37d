// The go-to-agent key (a) and Detail's "agent:" line: where the selected run's agent runs, found off the UI
// goroutine (state/agentpane here, the host's runwatch for a remote run), and the tmux client switched there.

package app

import (
	"context"
	"errors"
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/shellword"
	"runwatch/state/agentpane"
	"runwatch/ui/keys"
	"runwatch/ui/text"
)

// FindAgentFunc finds the pane of run's agent, and the command that attaches a terminal here to it (tmux
// attach, or ssh to the run's host running it).
type FindAgentFunc func(ctx context.Context, run model.Run) (pane agentpane.Pane, attach []string, err error)

// AgentMsg is the answer about where a run's agent is. Go is set when the key asked, so the answer is acted
// on; a lookup for Detail only shows it.
type AgentMsg struct {
	Key    string
	Holder string // the holders it was looked for (agentSig), so an answer about old holders is not shown
	Pane   agentpane.Pane
	Attach []string
	Err    error
	Go     bool
}

// agentAnswer is the last answer for a run.
type agentAnswer struct {
	holder string
	pane   agentpane.Pane
	err    error
}

// agentTimeout bounds a lookup: one tmux list-panes here, or one ssh round trip.
const agentTimeout = 30 * time.Second

// agentSig names the live holders a run was read with: a lookup is made again when they change.
func agentSig(run model.Run) string {
	sig := ""
	for _, l := range run.Locks {
		if !l.Shared && l.Verdict == model.VerdictLive && l.PID > 0 {
			sig += l.Path + "\x00" + strconv.Itoa(l.PID) + "\x00"
		}
	}
	if run.Jonggrang != nil {
		for _, g := range run.Jonggrang.Groups {
			if g.Alive {
				sig += "g" + strconv.Itoa(g.PID) + "\x00"
			}
		}
	}
	return sig
}

// AgentOf is Detail's word on where run's agent is: its pane when the last lookup found it for the holders
// the run has now.
func (a *App) AgentOf(run model.Run) (agentpane.Pane, bool) {
	ans, ok := a.agents[run.Key()]
	if !ok || ans.err != nil || ans.holder != agentSig(run) {
		return agentpane.Pane{}, false
	}
	return ans.pane, true
}

// LookUpAgent asks where the selected run's agent is, for Detail, when the run has a live holder and its
// holders changed since the last answer: one lookup per run and holder, not per frame.
func LookUpAgent(a *App) tea.Cmd {
	run, ok := a.SelectedRun()
	if !ok || a.Opts.FindAgent == nil || !run.LiveHolder() {
		return nil
	}
	sig := agentSig(run)
	if ans, ok := a.agents[run.Key()]; ok && ans.holder == sig {
		return nil
	}
	if a.agents == nil {
		a.agents = map[string]agentAnswer{}
	}
	a.agents[run.Key()] = agentAnswer{holder: sig, err: errors.New("looking")}
	return findAgent(a.Opts.FindAgent, run, sig, false)
}

func findAgent(find FindAgentFunc, run model.Run, sig string, goThere bool) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), agentTimeout)
		defer cancel()
		p, attach, err := find(ctx, run)
		return AgentMsg{Key: run.Key(), Holder: sig, Pane: p, Attach: attach, Err: err, Go: goThere}
	}
}

// GoToAgent is the key: find the selected run's agent, then go there.
func GoToAgent(a *App) tea.Cmd {
	if why := a.NotHere(keys.ActAgent, RowID{}); why != "" {
		a.Fail(errors.New(why)) // the one rule the footer and help follow too
		return nil
	}
	run, _ := a.SelectedRun()
	a.Note("looking for the agent of " + run.ID + "…")
	return findAgent(a.Opts.FindAgent, run, agentSig(run), true)
}

// TookAgent keeps the answer for Detail and, when the key asked, goes to the pane: this tmux client switched
// to it, a new window attached to it over ssh for a remote run, or, outside tmux, the command that attaches.
func (a *App) TookAgent(msg AgentMsg) tea.Cmd {
	if a.agents == nil {
		a.agents = map[string]agentAnswer{}
	}
	a.agents[msg.Key] = agentAnswer{holder: msg.Holder, pane: msg.Pane, err: msg.Err}
	if !msg.Go {
		return nil
	}
	if msg.Err != nil {
		a.Fail(errors.New("no agent pane: " + msg.Err.Error()))
		return nil
	}
	where := msg.Pane.Where()
	attach := text.Sanitize(shellword.Line(msg.Attach))
	if agentpane.TmuxOf(a.Opts.Getenv).CurrentSocket() == "" {
		a.Note("the agent is in " + where + "; this dashboard is not in tmux: attach with " + attach)
		return nil
	}
	p, argv, tmux := msg.Pane, msg.Attach, agentpane.TmuxOf(a.Opts.Getenv)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), agentTimeout)
		defer cancel()
		if p.Host != "" {
			if err := tmux.OpenWindow(ctx, "agent "+p.Host, argv); err != nil {
				return AppliedMsg{Err: err}
			}
			return AppliedMsg{Summary: "opened a window attached to " + where}
		}
		err := tmux.SwitchTo(ctx, p)
		switch {
		case errors.Is(err, agentpane.ErrOtherServer):
			return AppliedMsg{Summary: "the agent is in " + where + ", on another tmux server: attach with " + attach}
		case err != nil:
			return AppliedMsg{Err: err}
		}
		return AppliedMsg{Summary: "switched to " + where + " (tmux's last-window key comes back)"}
	}
}
