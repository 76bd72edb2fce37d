package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
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

// FromEnv is the SSH a command line uses in the environment getenv reads: RUNWATCH_SSH_COMMAND (split into
// words, no shell) over the config's command.
func FromEnv(getenv func(string) string, configCommand []string, remote string) SSH {
	s := SSH{Command: configCommand, Remote: remote, ControlDir: DefaultControlDir(getenv)}
	if env := strings.Fields(getenv("RUNWATCH_SSH_COMMAND")); len(env) > 0 {
		s.Command = env
	}
	return s
}

// Argv is the ssh command line that runs runwatch with args on root's host. ssh hands the remote words to the
// login shell there, whichever it is (sh, bash, zsh, fish, tcsh each quote differently), so no word of ours
// is among them: the line is fixed (RemoteLine) and args travel encoded in one word of safe characters.
func (s SSH) Argv(r Root, args ...string) []string {
	// ControlMaster=no uses the master's socket when a watcher's stream holds one (see MasterCmd), and
	// connects on its own when none does.
	argv := s.base(r, true, "-o", "ControlMaster=no")
	return append(argv, r.Dest(), "--", s.RemoteLine(false, args))
}

// AttachArgv is the ssh command line that attaches this terminal (-t) to tmux pane paneID of the server at
// socket ("" for the default one) on root's host, through the watcher's ControlMaster when one is up. The
// host's runwatch runs tmux (AttachCommand), so the socket and the pane travel encoded like any args.
func (s SSH) AttachArgv(r Root, socket, paneID string) []string {
	argv := s.base(r, true, "-o", "ControlMaster=no")
	// BatchMode stays: the pane is reached with the keys the watcher uses, and never asks for a password.
	return append(argv, "-t", r.Dest(), "--", s.RemoteLine(false, []string{AttachCommand, socket, paneID}))
}

// AttachCommand is the hidden command that becomes `tmux [-S SOCKET] attach -t PANE` on the host (SOCKET ""
// for the default server).
const AttachCommand = "__attach"

// ArgvCommand is the hidden entry point of the remote runwatch: `runwatch __argv WORD` decodes WORD
// (EncodeArgv) and runs the command it holds, as if those words had been given.
const ArgvCommand = "__argv"

// RemoteLine is the one command line any login shell reads from us to run the remote runwatch with args:
// the program (checked at config load to be SafeWord), ArgvCommand, and args encoded, all characters that
// mean nothing to any shell. exitWithStdin adds StdinLinkEnv and CompactEnv through env, fixed words too.
func (s SSH) RemoteLine(exitWithStdin bool, args []string) string {
	line := s.program() + " " + ArgvCommand + " " + EncodeArgv(args)
	if exitWithStdin {
		line = "env " + StdinLinkEnv + "=1 " + CompactEnv + "=1 " + line
	}
	return line
}

func (s SSH) program() string {
	if s.Remote == "" {
		return "runwatch"
	}
	return s.Remote
}

// EncodeArgv is args, each ended by a NUL, in base64url without padding: [A-Za-z0-9_-] only, so the word
// reaches the remote runwatch as it left, whatever shell passes it on. DecodeArgv reads it back.
func EncodeArgv(args []string) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteString(a)
		b.WriteByte(0)
	}
	return base64.RawURLEncoding.EncodeToString([]byte(b.String()))
}

// DecodeArgv reads what EncodeArgv wrote; anything else is an error.
func DecodeArgv(word string) ([]string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(word)
	if err != nil {
		return nil, fmt.Errorf("the encoded command is not base64url: %v", err)
	}
	if len(raw) == 0 || raw[len(raw)-1] != 0 {
		return nil, errors.New("the encoded command does not end its last word with a NUL")
	}
	return strings.Split(string(raw[:len(raw)-1]), "\x00"), nil
}

// SafeWord says whether s is made only of characters no login shell gives a meaning to ([A-Za-z0-9._/-]),
// so it may stand as it is in a command line for any of them. It does not start with '-', which a program
// would take for an option.
func SafeWord(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '/' || c == '-') {
			return false
		}
	}
	return true
}

// CheckProgram refuses a remote runwatch program (the config's ssh.runwatch) that is not a SafeWord: it is
// the one word of ours a host's login shell reads, and each shell would read another one differently.
func CheckProgram(prog string) error {
	if prog == "" || SafeWord(prog) {
		return nil
	}
	return fmt.Errorf("the remote program %q may hold only letters, digits and . _ / - (and not start with -), as every "+
		"login shell reads it alike: name it on the host's PATH (runwatch) or by a plain absolute path (/opt/runwatch/bin/runwatch)", prog)
}

// base is ssh with our options; withControl adds the master's socket (ControlPath) and extra, which a
// stream, a connection of its own, must not have: ssh keeps the first ControlPath it is given.
func (s SSH) base(r Root, withControl bool, extra ...string) []string {
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
	if withControl && s.ControlDir != "" {
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
	argv := s.base(r, false)
	argv = append(argv, "-o", "ControlPath=none", r.Dest(), "--", s.RemoteLine(true, args))
	return s.command(ctx, argv)
}

// StdinLinkEnv, set to 1, makes a remote `runwatch events` end when its stdin ends: its stdin is the ssh
// connection's, held open by the watcher here, so the remote process ends as soon as the connection or the
// runwatch here does (a quiet root gives it nothing to write, so a closed stdout alone is found late).
const StdinLinkEnv = "RUNWATCH_EXIT_WITH_STDIN"

// CompactEnv, set to 1 beside StdinLinkEnv, asks a runwatch events for its runs in model.Run.AppendWireJSON's
// form, each such line saying "compact":true before its run; this runwatch reads both forms. A runwatch too
// old to know it ignores it and writes the full form, and a runwatch that follows events without it (an
// older one) is written the full form: either side may be upgraded first.
const CompactEnv = "RUNWATCH_COMPACT_WIRE"

// A runwatch events so linked also writes a heartbeat line once its first runs are out and then every
// HeartbeatEvery. A stream that has said one and then says nothing for LagAfter is taken as lagging: a host
// whose runwatch is stopped, or starved, while its connection stays up, never sends an error, and its runs
// would stay on screen as if current. A host too old to say heartbeats is never judged so.
const (
	HeartbeatEvery = 10 * time.Second
	LagAfter       = 3 * HeartbeatEvery
)

// LinkedUpdateEvery: a runwatch events so linked writes its local changes at most once this often, the
// latest state of each run winning (a host whose logs flood would otherwise send each run ~20 times a second).
const LinkedUpdateEvery = time.Second

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
		alive := runChild(s.command(checkCtx, append(s.base(r, true), "-O", "check", r.Dest()))) == nil
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
	argv := s.base(r, true, "-o", "ControlMaster=yes", "-o", "ControlPersist=no")
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
	if err := CheckProgram(s.Remote); err != nil {
		return nil, err
	}
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
// terminal. Start it with startChild, never c.Start, so that it dies with runwatch.
func (s SSH) command(ctx context.Context, argv []string) *exec.Cmd {
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // startChild adds the parent-death signal
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGTERM) }
	// If something still holds the output pipes after ssh exits, do not wait for it forever.
	c.WaitDelay = 2 * time.Second
	return c
}

// Run runs runwatch args on the host and returns its stdout, stderr and exit code. An exit code of 255 is
// ssh's own failure (could not connect or authenticate); a missing remote runwatch is 127.
func (s SSH) Run(ctx context.Context, r Root, args ...string) (stdout, stderr []byte, code int, err error) {
	c, err := s.Cmd(ctx, r, args...)
	if err != nil {
		return nil, nil, -1, err
	}
	return collect(c)
}

// Script runs a POSIX sh script on root's host (not runwatch). The login shell there reads only `sh -s`, a
// fixed line, and sh reads the script from stdin, so the login shell parses none of it: words of ours in
// the script are quoted for sh with shellword.Quote. The script's commands must not read stdin (it is the
// script's rest): give them </dev/null. Data for the script goes first to the host with Upload.
func (s SSH) Script(ctx context.Context, r Root, script string) (stdout, stderr []byte, code int, err error) {
	if err := s.checkControl(r); err != nil {
		return nil, nil, -1, err
	}
	argv := s.base(r, true, "-o", "ControlMaster=no")
	c := s.command(ctx, append(argv, r.Dest(), "--", "sh -s"))
	// exit ends sh before it would read past the script, whatever the script left unfinished.
	c.Stdin = strings.NewReader(script + "\nexit $?\n")
	return collect(c)
}

// Upload writes data to name in the home folder of the ssh session on root's host, with a fixed line
// (`cat > name`) that every login shell reads alike: name must be a SafeWord without a slash. Data cannot
// share stdin with a script: sh reads its script in blocks and would swallow the start of the data.
func (s SSH) Upload(ctx context.Context, r Root, name string, data io.Reader) (stderr []byte, code int, err error) {
	if !SafeWord(name) || strings.Contains(name, "/") {
		return nil, -1, fmt.Errorf("upload: %q is not a plain name of safe characters", name)
	}
	if err := s.checkControl(r); err != nil {
		return nil, -1, err
	}
	argv := s.base(r, true, "-o", "ControlMaster=no")
	c := s.command(ctx, append(argv, r.Dest(), "--", "cat > "+name))
	c.Stdin = data
	_, stderr, code, err = collect(c)
	return stderr, code, err
}

// FixedCmd is the ssh command that runs words on root's host through the master's socket when there is
// one, with a terminal of its own there when tty is set (ssh -t), for a caller that starts it with its own
// stdio (a tmux attach). Each word must be a SafeWord, or a tmux pane id (%N: no login shell here gives a
// % before digits a meaning in an argument), so the login shell reads the line as it was written.
func (s SSH) FixedCmd(ctx context.Context, r Root, tty bool, words ...string) (*exec.Cmd, error) {
	if len(words) == 0 {
		return nil, errors.New("no command to run")
	}
	for _, w := range words {
		if !SafeWord(w) && !paneID(w) {
			return nil, fmt.Errorf("%q cannot be sent to a remote shell as it is (letters, digits and . _ / - only)", w)
		}
	}
	if err := s.checkControl(r); err != nil {
		return nil, err
	}
	argv := s.base(r, true, "-o", "ControlMaster=no")
	if tty {
		argv = append(argv, "-t")
	}
	argv = append(argv, r.Dest(), "--", strings.Join(words, " "))
	if tty {
		// In the terminal's foreground process group, where it may read the terminal: not s.command's own group.
		return exec.CommandContext(ctx, argv[0], argv[1:]...), nil
	}
	return s.command(ctx, argv), nil
}

func paneID(w string) bool {
	if len(w) < 2 || w[0] != '%' {
		return false
	}
	for _, c := range []byte(w[1:]) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
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

// Predates says a remote runwatch failed because it is older than ArgvCommand: it takes the word for an
// unknown command and says so, quoted, with a usage error.
func Predates(code int, stderr []byte) bool {
	return code == 2 && bytes.Contains(stderr, []byte(`"`+ArgvCommand+`"`))
}

// Explain turns a failed remote command into one message a person can act on.
func Explain(r Root, code int, stderr []byte) string {
	msg := lastLine(stderr)
	switch {
	case Predates(code, stderr):
		return fmt.Sprintf("%s: its runwatch is older than this one (it does not know %s, which carries every command this one sends): upgrade the one on %s (%s)",
			r.Label(), ArgvCommand, r.Label(), InstallHint(r))
	case code == 255:
		// ssh's own failure: the host was not reached. Status, the dashboard's empty list and install all
		// say it in these words.
		if msg == "" {
			msg = "ssh failed"
		}
		return fmt.Sprintf("%s cannot be reached: %s", r.Label(), msg)
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
