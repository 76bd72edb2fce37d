package tmuxsafe

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
)

// Run runs the tmux client with args (stdin, when not nil, is its input) and returns what it printed. When
// tmux fails, the error carries tmux's own words, its stderr ("can't find pane: %9"), named by the tmux
// command, as a person would need them; an exit status alone says nothing.
func Run(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	return RunIn(ctx, nil, stdin, args...)
}

// RunIn is Run with env, when not nil, as the client's whole environment (os.Environ's form): $TMUX names
// the server and session a client inside tmux acts on, and the locale how it prints.
func RunIn(ctx context.Context, env []string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "tmux", args...)
	cmd.Env = env
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, errors.New("tmux " + command(args) + ": " + msg)
	}
	return out, nil
}

// command is the tmux command among args: the first word that is not a client flag or a flag's value.
func command(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-S" || a == "-L" || a == "-f" || a == "-c" || a == "-T":
			i++
		case !strings.HasPrefix(a, "-"):
			return a
		}
	}
	return "(no command)"
}
