//go:build !linux

package procinfo

// Parent is not read here: finding a process's tmux pane (state/agentpane) is Linux's, and says so elsewhere.
func (System) Parent(int) (int, bool) { return 0, false }

// Owner is not read here (see Parent).
func (System) Owner(int) (int, bool) { return 0, false }
