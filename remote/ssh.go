package remote

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ProtocolVersion is the version of the JSON lines `runwatch events` and `status --json` speak to another
// runwatch. A remote that announces a lower one (or none) is too old.
const ProtocolVersion = 1

// InstallHint is what a person runs on a host that lacks runwatch (or has one too old for this protocol).
const InstallHint = "go install runwatch@latest, or copy this binary to a folder on the remote PATH"

// SSH runs commands on remote hosts with the user's own ssh: their config, keys and agent.
type SSH struct {
	// Command is ssh and any options of the user's (RUNWATCH_SSH_COMMAND or the config's ssh.command);
	// ["ssh"] when empty.
	Command []string
	// Remote is the runwatch program on the remote hosts ("runwatch": found on the remote PATH).
	Remote string
	// ControlDir holds the ControlMaster sockets, so actions reuse the connection the watcher opened.
	ControlDir string
}

// DefaultControlDir is $XDG_RUNTIME_DIR/runwatch, or a private folder under the temp dir.
func DefaultControlDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "runwatch")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("runwatch-%d", os.Getuid()))
}

// FromEnv is the SSH a command line uses: RUNWATCH_SSH_COMMAND (split into words, no shell) over the
// config's command.
func FromEnv(configCommand []string, remote string) SSH {
	s := SSH{Command: configCommand, Remote: remote, ControlDir: DefaultControlDir()}
	if env := strings.Fields(os.Getenv("RUNWATCH_SSH_COMMAND")); len(env) > 0 {
		s.Command = env
	}
	return s
}

// Argv is the ssh command line that runs runwatch with args on root's host. ssh joins the remote words
// with spaces for the remote shell, so each is quoted here; nothing from a run file is ever among them.
func (s SSH) Argv(r Root, args ...string) []string {
	remote := s.Remote
	if remote == "" {
		remote = "runwatch"
	}
	words := []string{shellQuote(remote)}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	// ControlMaster=no still uses a master's socket when one is there (see Master), and connects on its own
	// when none is: a command never becomes a master itself, because a backgrounded master keeps the
	// command's stdout and stderr open and the reader would never see them end.
	argv := s.base(r, "-o", "ControlMaster=no")
	return append(argv, r.Dest(), "--", strings.Join(words, " "))
}

func (s SSH) base(r Root, extra ...string) []string {
	cmd := s.Command
	if len(cmd) == 0 {
		cmd = []string{"ssh"}
	}
	argv := append([]string{}, cmd...)
	argv = append(argv,
		"-o", "BatchMode=yes",
		"-o", "ServerAliveInterval=5",
		"-o", "ServerAliveCountMax=2",
		"-o", "ConnectTimeout=10",
	)
	if s.ControlDir != "" {
		argv = append(argv, "-o", "ControlPath="+filepath.Join(s.ControlDir, "%C"))
		argv = append(argv, extra...)
	}
	if r.Port != "" {
		argv = append(argv, "-p", r.Port)
	}
	return argv
}

// Master makes sure a ControlMaster connection to root's host is up (one persists for a minute after its
// last use), so the watcher's stream and every action share one authenticated connection. It returns ssh's
// own message when the host cannot be reached.
func (s SSH) Master(ctx context.Context, r Root) error {
	if s.ControlDir == "" {
		return nil
	}
	if err := os.MkdirAll(s.ControlDir, 0o700); err != nil {
		return fmt.Errorf("ssh control folder: %w", err)
	}
	// A file, not a pipe, for stderr: the master lives on in the background holding it, and a pipe would
	// keep Wait waiting for its end.
	errf, err := os.CreateTemp(s.ControlDir, "master-err-")
	if err != nil {
		return err
	}
	defer os.Remove(errf.Name())
	defer errf.Close()
	argv := s.base(r, "-o", "ControlMaster=auto", "-o", "ControlPersist=60s")
	argv = append(argv, "-f", "-N", r.Dest())
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Stderr = errf
	runErr := c.Run()
	if runErr == nil {
		return nil
	}
	msg, _ := os.ReadFile(errf.Name())
	code := -1
	if ee, ok := runErr.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return fmt.Errorf("%s", Explain(r, code, msg))
}

// Cmd makes the exec.Cmd for Argv. Its own process group lets a watcher stop ssh without a signal reaching
// the dashboard's terminal.
func (s SSH) Cmd(ctx context.Context, r Root, args ...string) (*exec.Cmd, error) {
	argv := s.Argv(r, args...)
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGTERM) }
	// If something still holds the output pipes after ssh exits, do not wait for it forever.
	c.WaitDelay = 2 * time.Second
	return c, nil
}

// Run runs runwatch args on the host and returns its stdout, stderr and exit code. An exit code of 255 is
// ssh's own failure (could not connect or authenticate); a missing remote runwatch is 127.
func (s SSH) Run(ctx context.Context, r Root, args ...string) (stdout, stderr []byte, code int, err error) {
	c, err := s.Cmd(ctx, r, args...)
	if err != nil {
		return nil, nil, -1, err
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err = c.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.Bytes(), errb.Bytes(), ee.ExitCode(), nil
	}
	if err != nil {
		return out.Bytes(), errb.Bytes(), -1, err
	}
	return out.Bytes(), errb.Bytes(), 0, nil
}

// Explain turns a failed remote command into one message a person can act on.
func Explain(r Root, code int, stderr []byte) string {
	msg := lastLine(stderr)
	switch {
	case code == 255:
		if msg == "" {
			msg = "ssh failed"
		}
		return fmt.Sprintf("%s: %s", r.Label(), msg)
	case code == 127 || strings.Contains(msg, "command not found") || strings.Contains(msg, "No such file"):
		return fmt.Sprintf("%s: runwatch is not installed there (%s)", r.Label(), InstallHint)
	}
	if msg == "" {
		msg = fmt.Sprintf("remote runwatch exited %d", code)
	}
	return fmt.Sprintf("%s: %s", r.Label(), msg)
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "Warning: Permanently added") {
			return l
		}
	}
	return ""
}

// shellQuote quotes one word for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
