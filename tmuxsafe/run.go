package tmuxsafe

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Run runs the tmux client with args (stdin, when not nil, is its input) and returns what it printed. When
// tmux fails, the error carries tmux's own words, its stderr ("can't find pane: %9"), named by the tmux
// command, as a person would need them; an exit status alone says nothing.
func Run(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	return RunIn(ctx, nil, stdin, args...)
}

// RunIn is Run with env added to this process's environment for the client (a later value wins): $TMUX
// names the server and session a client inside tmux acts on.
func RunIn(ctx context.Context, env []string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "tmux", args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
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
