package ui

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/state/brief"
	"runwatch/state/launch"
)

// briefState is the resume brief overlay.
type briefState struct {
	runID    string
	markdown string
	lines    []string
	top      int
}

type briefMsg struct {
	runID, markdown string
}

// showBrief builds the brief in a command: it reads files and may run git, which must not stall a frame.
func (m *Model) showBrief() tea.Cmd {
	run, ok := m.selectedRun()
	if !ok {
		m.setNote("no run selected")
		return nil
	}
	env := m.env()
	return func() tea.Msg {
		return briefMsg{runID: run.ID, markdown: brief.Build(run, env).Markdown()}
	}
}

func (m *Model) env() model.Env {
	if m.opts.Env != nil {
		return m.opts.Env()
	}
	return model.Env{Now: m.opts.Now()}
}

func (m *Model) updateBrief(msg tea.KeyPressMsg) tea.Cmd {
	b := m.brief
	h := max(1, m.height-headerLines-footerLines-borderCells)
	switch m.keys.Action(msg.String()) {
	case ActBack, ActBrief, ActHelp:
		m.brief = nil
	case ActQuit:
		return tea.Quit
	case ActDown:
		b.top++
	case ActUp:
		b.top--
	case ActPageDown:
		b.top += h / 2
	case ActPageUp:
		b.top -= h / 2
	case ActTop:
		b.top = 0
	case ActBottom:
		b.top = len(b.lines)
	case ActCopy:
		return m.copyText(b.markdown)
	}
	if m.brief != nil {
		b.top = clamp(b.top, 0, max(0, len(b.lines)-h))
	}
	return nil
}

func (m Model) renderBrief(w, h int) string {
	b := m.brief
	top := clamp(b.top, 0, max(0, len(b.lines)-(h-borderCells)))
	title := fmt.Sprintf("Resume brief %s · %s copy · esc close", Sanitize(b.runID), m.keys.First(ActCopy))
	return box(m.theme, title, b.lines[top:], w, h, true)
}

// launchPlan is a resume command waiting for its confirmation. It satisfies Planned so the one confirmation
// dialog serves file changes and launches alike.
type launchPlan struct {
	cmd *launch.Command
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

func (l launchPlan) Apply(string) (string, error) {
	if err := l.cmd.LaunchInTmux(context.Background()); err != nil {
		return "", err
	}
	return "opened tmux window " + l.cmd.WindowName, nil
}

// foreground is set when the command must take over the terminal (outside tmux).
func (l launchPlan) foreground() *exec.Cmd {
	if l.cmd.InTmux {
		return nil
	}
	return l.cmd.ForegroundCmd()
}

func (m *Model) requestLaunch() tea.Cmd {
	run, ok := m.selectedRun()
	if !ok {
		m.setNote("no run selected")
		return nil
	}
	if m.keys.ReadOnly {
		m.setError(errors.New("read-only: launching the resume command is disabled"))
		return nil
	}
	templates, env := m.opts.ResumeCommand, m.env()
	return func() tea.Msg {
		c, err := launch.Prepare(templates, run, env)
		if errors.Is(err, launch.ErrNoTemplate) {
			return briefMsg{runID: run.ID, markdown: err.Error() + "\n\n" + launch.HowToConfigure}
		}
		if err != nil {
			return planMsg{req: ActionRequest{Action: ActLaunch, Run: run}, err: err}
		}
		return planMsg{req: ActionRequest{Action: ActLaunch, Run: run}, planned: launchPlan{cmd: c}}
	}
}

// applyCmd runs a confirmed plan: a foreground launch hands the terminal to the command with the dashboard
// suspended and restored afterwards; everything else applies in a command.
func applyCmd(p Planned, typed string) tea.Cmd {
	if l, ok := p.(launchPlan); ok {
		if fg := l.foreground(); fg != nil {
			argv := l.cmd.String()
			return tea.ExecProcess(fg, func(err error) tea.Msg {
				if err != nil {
					return appliedMsg{err: fmt.Errorf("resume command %s: %w", argv, err)}
				}
				return appliedMsg{summary: "resume command finished: " + argv}
			})
		}
	}
	return func() tea.Msg {
		s, err := p.Apply(typed)
		return appliedMsg{summary: s, err: err}
	}
}

func briefLines(md string) []string {
	return SanitizeLines(strings.TrimRight(md, "\n"))
}
