//go:build !linux

package agentpane

// canWalk: following a process up to its tmux pane reads its parents in /proc, which this system lacks.
func canWalk() error {
	return notFound("cannot look on this system: finding a process's tmux pane reads its parents in /proc (Linux)")
}
