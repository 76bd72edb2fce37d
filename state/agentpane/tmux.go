package agentpane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"runwatch/tmuxsafe"
)

// Tmux is the environment tmux is reached through: $TMUX_TMPDIR (where the user's default server is), $TMUX
// and $TMUX_PANE (the server and pane this process runs in: the client switch-client moves), and the locale
// its clients run in. Env holds variables set over this process's environment (NAME=value, a later one
// winning; NAME= unsets it), for those lookups and for the tmux clients; the zero value is this process's
// environment as it is. Tests give their own, so they run in parallel.
type Tmux struct{ Env []string }

func has(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// environ is the tmux clients' environment: this process's with Env over it; nil when Env is.
func (t Tmux) environ() []string {
	if t.Env == nil {
		return nil
	}
	set := map[string]string{}
	for _, e := range t.Env {
		k, v, _ := strings.Cut(e, "=")
		set[k] = v
	}
	var out []string
	for _, e := range os.Environ() {
		if k, _, _ := strings.Cut(e, "="); !has(set, k) {
			out = append(out, e)
		}
	}
	for k, v := range set {
		if v != "" { // a variable set but empty is not the same to tmux as none: $TMUX= makes it print UTF-8
			out = append(out, k+"="+v)
		}
	}
	return out
}

// TmuxOf is the Tmux of an environment given as a lookup: the variables it reads are getenv's (a variable
// getenv gives as "" is unset). nil getenv is this process's environment, the zero Tmux.
func TmuxOf(getenv func(string) string) Tmux {
	if getenv == nil {
		return Tmux{}
	}
	var env []string
	for _, k := range []string{"TMUX", "TMUX_PANE", "TMUX_TMPDIR"} {
		env = append(env, k+"="+getenv(k))
	}
	return Tmux{Env: env}
}

// getenv is name's value: Env's last, else this process's.
func (t Tmux) getenv(name string) string {
	for i := len(t.Env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(t.Env[i], "="); ok && k == name {
			return v
		}
	}
	return os.Getenv(name)
}

// output runs a tmux command on the server at sock and returns its output; tmux's own words on failure.
func (t Tmux) output(ctx context.Context, sock string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	// -u: session names come back as they are, whatever the locale (an ssh session often has none).
	return tmuxsafe.RunIn(ctx, t.environ(), nil, append([]string{"-u", "-S", sock}, args...)...)
}

// CurrentSocket is the socket of the tmux server $TMUX names ("" outside tmux).
func (t Tmux) CurrentSocket() string {
	sock, _, _ := strings.Cut(t.getenv("TMUX"), ",")
	return sock
}

// ErrOtherServer is a pane on a tmux server other than the one this process runs in: a client cannot be
// switched across servers, so the caller says the command that attaches instead.
var ErrOtherServer = errors.New("the pane is on another tmux server")

// SwitchTo switches the tmux client t's $TMUX and $TMUX_PANE name to the pane: its session, its window, the
// pane (tmux's last-pane and last-window keys go back). Outside tmux, or for a pane of another server, it does
// nothing and returns ErrOtherServer or an error saying it is not inside tmux.
func (t Tmux) SwitchTo(ctx context.Context, p Pane) error {
	cur := t.CurrentSocket()
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
	_, err := t.output(ctx, cur, "switch-client", "-t", p.PaneID, ";",
		"select-window", "-t", p.PaneID, ";", "select-pane", "-t", p.PaneID)
	return err
}

// OpenWindow opens argv in a new window of the tmux server t's $TMUX names and selects it: how the dashboard
// reaches a pane it cannot switch to (on another machine, through ssh). Each word is one argument tmux hands
// to the program, never a shell line.
func (t Tmux) OpenWindow(ctx context.Context, name string, argv []string) error {
	cur := t.CurrentSocket()
	if cur == "" {
		return errors.New("not inside tmux")
	}
	args := []string{"new-window", "-n", tmuxsafe.Arg(name), "--"}
	for _, a := range argv {
		args = append(args, tmuxsafe.Arg(a))
	}
	_, err := t.output(ctx, cur, args...)
	return err
}
