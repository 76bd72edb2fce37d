package model

import "fmt"

// AgentPane is the tmux pane where a run's agent runs (state/agentpane finds it). Session is a tmux session
// name: untrusted text wherever it is shown.
type AgentPane struct {
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	Session string `json:"session"`
	Window  int    `json:"window"`
	Pane    int    `json:"pane"`
	PaneID  string `json:"pane_id"`
	// Socket is the tmux server that holds the pane; attaching from outside tmux names it.
	Socket string `json:"socket,omitempty"`
	// Via says what named the process: "lock LOCKFILE", "worker FEATURE", "launched with X".
	Via string `json:"via,omitempty"`
}

// Target is the pane as tmux's SESSION:WINDOW.PANE.
func (p AgentPane) Target() string { return fmt.Sprintf("%s:%d.%d", p.Session, p.Window, p.Pane) }

// Where is the pane in the words Detail shows: "pane %12 (work:3.1)", and the host when there is one.
func (p AgentPane) Where() string {
	s := "pane " + p.PaneID + " (" + p.Target() + ")"
	if p.Host != "" {
		s += " on " + p.Host
	}
	return s
}

// AttachArgv is the tmux command that attaches a terminal to the pane from outside tmux.
func (p AgentPane) AttachArgv() []string {
	argv := []string{"tmux"}
	if p.Socket != "" {
		argv = append(argv, "-S", p.Socket)
	}
	return append(argv, "attach", "-t", p.PaneID)
}
