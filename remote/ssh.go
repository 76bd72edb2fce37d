package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ProtocolVersion is the version of the JSON lines `runwatch events` and `status --json` speak to another
// runwatch. A remote that announces a lower one (or none) is too old, a higher one too new (protocolSkew).
const ProtocolVersion = 1

// InstallHint is what a person runs here for a host that lacks runwatch, or has one too old for this
// protocol: `runwatch install HOST` copies this binary there.
func InstallHint(r Root) string { return "runwatch install " + r.HostArg() }

// protocolSkew says, when a host's runwatch speaks another protocol than this one, both versions and which
// side to upgrade; ok is false then. A newer protocol is refused too: this runwatch cannot know what its
// lines mean, and showing them as if it did would be a guess.
func protocolSkew(r Root, theirs int) (msg string, ok bool) {
	switch {
	case theirs < ProtocolVersion:
		return fmt.Sprintf("%s: its runwatch speaks protocol %d, this runwatch %d: upgrade the one on %s (%s)",
			r.Label(), theirs, ProtocolVersion, r.Label(), InstallHint(r)), false
	case theirs > ProtocolVersion:
		return fmt.Sprintf("%s: its runwatch speaks protocol %d, newer than this runwatch's %d, which cannot read it: upgrade this runwatch, or put this one there (%s)",
			r.Label(), theirs, ProtocolVersion, InstallHint(r)), false
	}
	return "", true
}

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
	// ControlMaster=no uses the master's socket when a watcher's stream holds one (see MasterCmd), and
	// connects on its own when none does.
	argv := s.base(r, "-o", "ControlMaster=no")
	return append(argv, r.Dest(), "--", s.remoteWords(args))
}

func (s SSH) remoteWords(args []string) string {
	remote := s.Remote
	if remote == "" {
		remote = "runwatch"
	}
	words := []string{shellQuote(remote)}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
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
		argv = append(argv, "-o", "ControlPath="+s.ControlPath(r))
		argv = append(argv, extra...)
	}
	if r.Port != "" {
		argv = append(argv, "-p", r.Port)
	}
	return argv
}

// StreamCmd is the command that follows a host: a connection of its own, never multiplexed. A stream run
// as a client of a ControlMaster, or as the master itself, was seen to stall after its first line (the
// master moves the session's output off fd 1 and stopped relaying it), and a watcher must never stall.
func (s SSH) StreamCmd(ctx context.Context, r Root, args ...string) *exec.Cmd {
	argv := s.base(r)
	// env, not VAR=value: it reads the same in every login shell (fish, csh); a runwatch that does not
	// know the variable ignores it.
	argv = append(argv, "-o", "ControlPath=none", r.Dest(), "--", "env "+StdinLinkEnv+"=1 "+s.remoteWords(args))
	return s.command(ctx, argv)
}

// StdinLinkEnv, set to 1, makes a remote `runwatch events` end when its stdin ends: its stdin is the ssh
// connection's, held open by the watcher here, so the remote process ends as soon as the connection or the
// runwatch here does (a quiet root gives it nothing to write, so a closed stdout alone is found late).
const StdinLinkEnv = "RUNWATCH_EXIT_WITH_STDIN"

// MasterCmd is the ControlMaster a watcher keeps per host while it runs: no command (-N), in the
// foreground (ControlPersist=no), so it ends with the watcher, and with the parent-death signal, so it ends
// with runwatch however runwatch ends (proc.go). Actions (Run) go through its socket and skip the
// connection and authentication. A live master of another running runwatch is shared; one whose runwatch
// is gone is stopped and its socket removed.
func (s SSH) MasterCmd(ctx context.Context, r Root) (*exec.Cmd, error) {
	if s.ControlDir == "" {
		return nil, nil
	}
	path := s.ControlPath(r)
	mu, _ := masterLocks.LoadOrStore(path, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if err := s.checkControl(r); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(path); err == nil {
		checkCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		alive := runChild(s.command(checkCtx, append(s.base(r), "-O", "check", r.Dest()))) == nil
		cancel()
		if alive && ownerAlive(path) {
			return nil, nil // another running runwatch's master serves this host already
		}
		// A socket left by a master that died (or whose runwatch died) would stop a new one binding it.
		s.dropStale(r, path)
	}
	if err := writeOwner(path); err != nil {
		return nil, fmt.Errorf("ssh control folder: %w", err)
	}
	argv := s.base(r, "-o", "ControlMaster=yes", "-o", "ControlPersist=no")
	argv = append(argv, "-N", r.Dest())
	c := s.command(ctx, argv)
	if err := startChild(c); err != nil {
		return nil, err
	}
	return c, nil
}

var masterLocks sync.Map

// ControlPath is the master's socket for root's connection: named by us rather than by ssh's %C, so a
// socket left by a dead master can be found and removed, and short, as socket paths are limited to 108 bytes.
func (s SSH) ControlPath(r Root) string {
	sum := sha256.Sum256([]byte(r.Conn()))
	return filepath.Join(s.ControlDir, hex.EncodeToString(sum[:8]))
}

// Cmd makes the exec.Cmd for Argv, once the control folder and any socket at root's control path are
// known to be ours: ssh would otherwise hand the command, and our stdio, to whoever listens there.
func (s SSH) Cmd(ctx context.Context, r Root, args ...string) (*exec.Cmd, error) {
	if err := s.checkControl(r); err != nil {
		return nil, err
	}
	return s.command(ctx, s.Argv(r, args...)), nil
}

func (s SSH) checkControl(r Root) error {
	if s.ControlDir == "" {
		return nil
	}
	if err := privateDir(s.ControlDir); err != nil {
		return err
	}
	sock := s.ControlPath(r)
	exists, err := ownSocket(sock)
	if exists && err == nil && !ownerAlive(sock) {
		// Its runwatch is gone: whatever it is still connected to, commands do not go through it.
		s.dropStale(r, sock)
	}
	return err
}

// command runs argv in its own process group, so stopping it never sends a signal to the dashboard's
// terminal. Start it with Start (startChild), never c.Start, so that it dies with runwatch.
func (s SSH) command(ctx context.Context, argv []string) *exec.Cmd {
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // startChild adds the parent-death signal
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGTERM) }
	// If something still holds the output pipes after ssh exits, do not wait for it forever.
	c.WaitDelay = 2 * time.Second
	return c
}

// Start starts a command made here (Cmd, StreamCmd) so that it dies with runwatch however runwatch ends.
func Start(c *exec.Cmd) error { return startChild(c) }

// Run runs runwatch args on the host and returns its stdout, stderr and exit code. An exit code of 255 is
// ssh's own failure (could not connect or authenticate); a missing remote runwatch is 127.
func (s SSH) Run(ctx context.Context, r Root, args ...string) (stdout, stderr []byte, code int, err error) {
	c, err := s.Cmd(ctx, r, args...)
	if err != nil {
		return nil, nil, -1, err
	}
	return collect(c)
}

// Script runs a POSIX sh script on root's host (not runwatch), with stdin as its input when set. Every
// word in script that is not the script's own must be quoted with ShellQuote.
func (s SSH) Script(ctx context.Context, r Root, script string, stdin io.Reader) (stdout, stderr []byte, code int, err error) {
	if err := s.checkControl(r); err != nil {
		return nil, nil, -1, err
	}
	argv := s.base(r, "-o", "ControlMaster=no")
	// The login shell there reads one word, sh -c 'script', whichever shell it is.
	c := s.command(ctx, append(argv, r.Dest(), "--", "sh -c "+shellQuote(script)))
	c.Stdin = stdin
	return collect(c)
}

// collect runs c and returns its output, capped, with its exit code.
func collect(c *exec.Cmd) (stdout, stderr []byte, code int, err error) {
	// Past the cap, ssh is stopped: nobody reads its output any more, and it would wait on a full pipe.
	out := &cappedBuffer{max: maxAnswer, stop: func() { _ = c.Cancel() }}
	errb := &tailBuffer{max: 64 << 10}
	c.Stdout, c.Stderr = out, errb
	err = runChild(c)
	if out.over > 0 {
		return nil, errb.Bytes(), -1, fmt.Errorf("answer too long (over %d bytes, limit %d)", out.over, maxAnswer)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return out.b.Bytes(), errb.Bytes(), ee.ExitCode(), nil
	}
	if err != nil {
		return out.b.Bytes(), errb.Bytes(), -1, err
	}
	return out.b.Bytes(), errb.Bytes(), 0, nil
}

// maxAnswer bounds what one remote command may make us hold: status --json of a host's runs is the
// largest answer, and maxHeld bounds a host's runs on a stream the same way.
const maxAnswer = maxHeld

// cappedBuffer keeps up to max bytes; past that it keeps nothing more and fails the write, which ends the
// command (ssh gets EPIPE), and counts what it was offered.
type cappedBuffer struct {
	max  int
	b    bytes.Buffer
	over int
	stop func()
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.over > 0 || c.b.Len()+len(p) > c.max {
		if c.over == 0 {
			c.over = c.b.Len()
			c.b = bytes.Buffer{}
			c.stop()
		}
		c.over += len(p)
		return 0, errors.New("answer too long")
	}
	return c.b.Write(p)
}

// FetchBrief asks root's host for the brief of the run at path there: built by the host's runwatch from the
// host's files (and the host's git), as Markdown.
func (s SSH) FetchBrief(ctx context.Context, root Root, path string) (string, error) {
	out, stderr, code, err := s.Run(ctx, root, "brief", "--", path)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s: %v", root.Label(), err)
	case code != 0:
		return "", fmt.Errorf("%s", Explain(root, code, stderr))
	}
	return string(out), nil
}

// ShellQuote quotes one word for the remote shell: the one rule for every word runwatch sends there.
func ShellQuote(s string) string { return shellQuote(s) }

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
		return fmt.Sprintf("%s: runwatch is not installed there (%s)", r.Label(), InstallHint(r))
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
