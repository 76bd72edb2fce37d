// The resume brief (b) and the launch (X) of the selected run: built off the UI goroutine, shown in a pager
// or confirmed like any other action.

package app

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/state/action"
	"runwatch/state/brief"
	"runwatch/state/launch"
	"runwatch/ui/keys"
)

// ShowBrief builds the brief in a command: it reads files and may run git, which must not stall a frame.
func ShowBrief(a *App) tea.Cmd {
	run, ok := a.SelectedRun()
	if !ok {
		a.Note("no run selected")
		return nil
	}
	if run.Remote != nil {
		// Its files and its git are on its host: a brief built here would read this machine's files at
		// that host's paths, and run git here in a folder the host named.
		fetch, host := a.Opts.RemoteBrief, run.Remote.Host
		if fetch == nil {
			a.Fail(fmt.Errorf("brief refused: %s is on %s, and this dashboard cannot ask it", run.ID, host))
			return nil
		}
		a.Note("asking " + host + " for the brief of " + run.ID + "…")
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			md, err := fetch(ctx, run)
			if err != nil {
				return ErrorMsg{Err: fmt.Errorf("brief of %s: %w", run.ID, err)}
			}
			return PagerMsg{Title: "Resume brief " + run.ID + " from " + host + " · y copies it", Text: md, Copyable: true}
		}
	}
	env, cache := a.env(), a.Opts.BriefCache
	return func() tea.Msg {
		return PagerMsg{Title: "Resume brief " + run.ID + " · y copies it", Text: brief.BuildWith(run, env, brief.Options{Cache: cache}).Markdown(), Copyable: true}
	}
}

// launchPlan is a resume command waiting for its confirmation. It satisfies Planned so the one confirmation
// dialog serves file changes and launches alike.
type launchPlan struct {
	cmd *launch.Command
	// launches is where a launch in tmux is recorded (Options.Launches).
	launches string
}

func (l launchPlan) Summary() string {
	if l.cmd.InTmux {
		return "Launch the resume command in a new tmux window"
	}
	return "Run the resume command here (the dashboard is suspended until it exits)"
}

func (l launchPlan) Preview() string {
	return "in " + l.cmd.Dir + ":\n  " + l.cmd.String() + "\n"
}

func (l launchPlan) TypedConfirmation() string { return "" }

// Question is what the confirmation asks: what the launch starts, and where.
func (l launchPlan) Question() string {
	if l.cmd.InTmux {
		return "Run the resume command in a new tmux window " + l.cmd.WindowName + "?"
	}
	return "Run the resume command here, the dashboard suspended until it exits?"
}

func (l launchPlan) Apply(string) (string, error) {
	opened, err := l.cmd.LaunchInTmux(context.Background())
	if err != nil {
		return "", err
	}
	done := "opened tmux window " + l.cmd.WindowName + " (pane " + opened.PaneID + ")"
	if l.launches == "" {
		return done, nil
	}
	// Recorded so the run's agent is found in that pane (goto) while it runs there.
	if err := launch.Remember(l.launches, opened); err != nil {
		return done, fmt.Errorf("%s, but the pane is not recorded for goto: %w", done, err)
	}
	return done, nil
}

// foreground is set when the command must take over the terminal (outside tmux).
func (l launchPlan) foreground() *exec.Cmd {
	if l.cmd.InTmux {
		return nil
	}
	return l.cmd.ForegroundCmd()
}

func RequestLaunch(a *App) tea.Cmd {
	run, ok := a.SelectedRun()
	if !ok {
		a.Note("no run selected")
		return nil
	}
	if a.Keys.ReadOnly {
		a.Fail(errors.New("read-only: launching the resume command is disabled"))
		return nil
	}
	if run.Remote != nil {
		// The resume command would run on this machine with the host's paths (and its REPO_ROOT).
		a.Fail(fmt.Errorf("launch refused: %s is on %s, and its resume command would run here with that host's paths; launch it on %s",
			run.ID, run.Remote.Host, run.Remote.Host))
		return nil
	}
	templates, env, launches := a.Opts.ResumeCommand, a.env(), a.Opts.Launches
	tmux := a.getenv("TMUX")
	return func() tea.Msg {
		c, err := launch.Prepare(templates, run, env, tmux)
		if errors.Is(err, launch.ErrNoTemplate) {
			// Its own box, titled for what it is: there is no command to launch yet, and this says how to set one.
			return PagerMsg{Title: "No resume command configured", Text: err.Error() + "\n\n" + launch.HowToConfigure}
		}
		if err != nil {
			return PlanMsg{Req: ActionRequest{Act: keys.ActLaunch, Request: action.Request{Run: run}}, Err: err}
		}
		return PlanMsg{Req: ActionRequest{Act: keys.ActLaunch, Request: action.Request{Run: run}}, Planned: launchPlan{cmd: c, launches: launches}}
	}
}

// ApplyCmd runs a confirmed plan: a foreground launch hands the terminal to the command with the dashboard
// suspended and restored afterwards; everything else applies in a command.
func ApplyCmd(p Planned, typed string, run string) tea.Cmd {
	if l, ok := p.(launchPlan); ok {
		if fg := l.foreground(); fg != nil {
			argv := l.cmd.String()
			return tea.ExecProcess(fg, func(err error) tea.Msg {
				if err != nil {
					return AppliedMsg{Err: fmt.Errorf("resume command %s: %w", argv, err)}
				}
				return AppliedMsg{Summary: "resume command finished: " + argv}
			})
		}
	}
	return func() tea.Msg {
		s, err := p.Apply(typed)
		return AppliedMsg{Summary: s, Err: err, Run: run}
	}
}
