package agentpane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"runwatch/tmuxsafe"
)

// tmuxOutput runs a tmux command on the server at sock and returns its output; tmux's own words on failure.
func tmuxOutput(ctx context.Context, sock string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	// -u: session names come back as they are, whatever the locale (an ssh session often has none).
	return tmuxsafe.Run(ctx, nil, append([]string{"-u", "-S", sock}, args...)...)
}

// CurrentSocket is the socket of the tmux server this process runs in ("" outside tmux).
func CurrentSocket() string {
	sock, _, _ := strings.Cut(os.Getenv("TMUX"), ",")
	return sock
}

// ErrOtherServer is a pane on a tmux server other than the one this process runs in: a client cannot be
// switched across servers, so the caller says the command that attaches instead.
var ErrOtherServer = errors.New("the pane is on another tmux server")

// SwitchTo switches the tmux client this process runs under to the pane: its session, its window, the pane
// (tmux's last-pane and last-window keys go back). Outside tmux, or for a pane of another server, it does
// nothing and returns ErrOtherServer or an error saying it is not inside tmux.
func SwitchTo(ctx context.Context, p Pane) error {
	cur := CurrentSocket()
	if cur == "" {
		return errors.New("not inside tmux")
	}
	if p.Socket != "" && p.Socket != cur {
		return ErrOtherServer
	}
	if !ValidPaneID(p.PaneID) {
		return fmt.Errorf("%q is not a tmux pane id", p.PaneID)
	}
	// Each a command of its own, in one client call: a pane id is %N, which no tmux reader expands.
	_, err := tmuxOutput(ctx, cur, "switch-client", "-t", p.PaneID, ";",
		"select-window", "-t", p.PaneID, ";", "select-pane", "-t", p.PaneID)
	return err
}

// OpenWindow opens argv in a new window of the tmux server this process runs in and selects it: how the
// dashboard reaches a pane it cannot switch to (on another machine, through ssh). Each word is one argument
// tmux hands to the program, never a shell line.
func OpenWindow(ctx context.Context, name string, argv []string) error {
	cur := CurrentSocket()
	if cur == "" {
		return errors.New("not inside tmux")
	}
	args := []string{"new-window", "-n", tmuxsafe.Arg(name), "--"}
	for _, a := range argv {
		args = append(args, tmuxsafe.Arg(a))
	}
	_, err := tmuxOutput(ctx, cur, args...)
	return err
}
