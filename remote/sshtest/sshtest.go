// Package sshtest runs real OpenSSH servers on 127.0.0.1 for tests: a generated host key, a generated client
// key authorized for the current user, and an ssh_config naming each server by an alias, so tests drive the
// same ssh a user has. Tests skip when sshd or ssh is not installed (.ci/run installs openssh-server).
package sshtest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is one sshd.
type Server struct {
	Alias string
	Port  int
	// Hostname, when set, is the host name the server and its sessions see (a UTS namespace of their own),
	// so the server is another machine by name: what a lock written there says.
	Hostname string
	// Shell, when set, is the login shell sshd runs the session's command with (see NewWith).
	Shell string
	// passwd is the copy of /etc/passwd the server sees when Shell is set.
	passwd string
	dir    string
	conf   string
	cmd    *exec.Cmd
	log    bytes.Buffer
	logMu  sync.Mutex // the log's own: Kill holds mu while Wait waits for the log's last write
	mu     sync.Mutex
}

// Fleet is a set of servers sharing one client key and one ssh_config.
type Fleet struct {
	t       testing.TB
	Dir     string
	Config  string // ssh_config path: pass as ssh -F Config
	BinDir  string // first on PATH of every remote session
	Servers map[string]*Server
	key     string
}

// SSHD is the server binary; Debian puts it in /usr/sbin, which is not always on a test's PATH.
func SSHD() string {
	if p, err := exec.LookPath("sshd"); err == nil {
		return p
	}
	return "/usr/sbin/sshd"
}

// New makes the keys and config for servers named by aliases, and starts them. binDir goes first on the
// remote PATH (put the runwatch under test there).
func New(t testing.TB, binDir string, aliases ...string) *Fleet {
	t.Helper()
	return NewNamed(t, binDir, nil, aliases...)
}

// NewNamed is New with some servers given a host name of their own (alias → name). It needs the right to
// make a UTS namespace (root, as in CI); the test skips without it.
func NewNamed(t testing.TB, binDir string, hostnames map[string]string, aliases ...string) *Fleet {
	t.Helper()
	return NewWith(t, binDir, Options{Hostnames: hostnames}, aliases...)
}

// Options are what some servers of a fleet have of their own.
type Options struct {
	// Hostnames gives servers a host name of their own (alias → name), as NewNamed.
	Hostnames map[string]string
	// Shells gives servers a login shell of their own (alias → program path): sshd runs every command
	// through the user's login shell from the passwd entry, so the server sees a copy of /etc/passwd with
	// that shell for the current user (and its home folder as the home), bound over the real one in a mount
	// namespace of its own. It needs root (as in CI); the test skips without it.
	Shells map[string]string
}

// NewWith is New with options per server.
func NewWith(t testing.TB, binDir string, opts Options, aliases ...string) *Fleet {
	t.Helper()
	if testing.Short() {
		// Servers take seconds to start and the tests over them more: the full run has them.
		t.Skip("real sshd servers: not under -short")
	}
	hostnames := opts.Hostnames
	if len(opts.Shells) > 0 {
		if os.Geteuid() != 0 {
			t.Skip("a test sshd with a login shell of its own needs root (a mount namespace to show it its own /etc/passwd)")
		}
		for a, sh := range opts.Shells {
			if _, err := os.Stat(sh); err != nil {
				t.Skipf("login shell for %s: %v", a, err)
			}
		}
		if out, err := exec.Command("unshare", "--mount", "true").CombinedOutput(); err != nil {
			t.Skipf("cannot give a test sshd a login shell of its own (unshare --mount: %v %s)", err, bytes.TrimSpace(out))
		}
	}
	if len(hostnames) > 0 {
		if out, err := exec.Command("unshare", "--uts", "true").CombinedOutput(); err != nil {
			t.Skipf("cannot give a test sshd a host name of its own (unshare --uts: %v %s)", err, bytes.TrimSpace(out))
		}
	}
	if _, err := os.Stat(SSHD()); err != nil {
		t.Skip("sshd not installed (apt-get install openssh-server)")
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("ssh not installed")
	}
	// A short folder: ControlPath sockets live under it and unix socket paths are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "rwssh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &Fleet{t: t, Dir: dir, BinDir: binDir, Servers: map[string]*Server{}, key: filepath.Join(dir, "client")}
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "host"))
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f.key)
	pub, err := os.ReadFile(f.key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	// sshd refuses to start without its privilege separation folder.
	_ = os.MkdirAll("/run/sshd", 0o755)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	var conf strings.Builder
	ports := freePorts(t, len(aliases))
	for i, a := range aliases {
		s := &Server{Alias: a, Port: ports[i], dir: dir, Hostname: hostnames[a], Shell: opts.Shells[a]}
		f.Servers[a] = s
		fmt.Fprintf(&conf, "Host %s\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n"+
			"  UserKnownHostsFile %s\n  StrictHostKeyChecking accept-new\n  LogLevel ERROR\n",
			a, s.Port, u.Username, f.key, filepath.Join(dir, "known_hosts"))
		s.conf = filepath.Join(dir, a+".sshd_config")
		// AcceptEnv TMUX_TMPDIR: a client sending it (ssh -o SetEnv=) makes a test's private tmux server the
		// host's default one, where runwatch there looks for panes.
		sc := fmt.Sprintf("Port %d\nListenAddress 127.0.0.1\nHostKey %s\nAuthorizedKeysFile %s\nPasswordAuthentication no\n"+
			"KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile %s\nSetEnv PATH=%s:/usr/local/bin:/usr/bin:/bin HOME=%s XDG_STATE_HOME=%s XDG_CONFIG_HOME=%s\n"+
			"PermitRootLogin prohibit-password\nMaxStartups 100\nMaxSessions 100\nAcceptEnv TMUX_TMPDIR\n",
			s.Port, filepath.Join(dir, "host"), filepath.Join(dir, "authorized_keys"), filepath.Join(dir, a+".pid"), binDir,
			filepath.Join(dir, a+"-home"), filepath.Join(dir, a+"-state"), filepath.Join(dir, a+"-config"))
		// A home of its own: the shell sshd runs a command in reads ~/.bashrc, and the real one may do
		// anything (one here ran `pyenv rehash`, which waits a minute on a lock a killed session left).
		if err := os.MkdirAll(filepath.Join(dir, a+"-home"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.conf, []byte(sc), 0o600); err != nil {
			t.Fatal(err)
		}
		if s.Shell != "" {
			s.passwd = filepath.Join(dir, a+".passwd")
			if err := writePasswd(s.passwd, u.Username, filepath.Join(dir, a+"-home"), s.Shell); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.Config = filepath.Join(dir, "ssh_config")
	if err := os.WriteFile(f.Config, []byte(conf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, a := range aliases {
		f.Start(a)
	}
	t.Cleanup(func() {
		for _, a := range aliases {
			f.Kill(a)
		}
	})
	return f
}

// writePasswd copies /etc/passwd with user's home and login shell replaced.
func writePasswd(path, user, home, shell string) error {
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return err
	}
	lines := strings.Split(string(b), "\n")
	found := false
	for i, l := range lines {
		f := strings.Split(l, ":")
		if len(f) == 7 && f[0] == user {
			f[5], f[6] = home, shell
			lines[i] = strings.Join(f, ":")
			found = true
		}
	}
	if !found {
		return fmt.Errorf("%s has no line for %s", "/etc/passwd", user)
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
}

// Home is the home folder of the server's sessions (HOME, and with a login shell of its own the folder
// they start in).
func (f *Fleet) Home(alias string) string { return filepath.Join(f.Dir, alias+"-home") }

// SSHCommand is the ssh command line a test gives runwatch (RUNWATCH_SSH_COMMAND).
func (f *Fleet) SSHCommand() []string { return []string{"ssh", "-F", f.Config} }

// Start starts (or restarts) the server and waits until it accepts connections.
func (f *Fleet) Start(alias string) {
	f.t.Helper()
	s := f.Servers[alias]
	s.mu.Lock()
	s.logMu.Lock()
	s.log.Reset()
	s.logMu.Unlock()
	cmd := exec.Command(SSHD(), "-D", "-e", "-f", s.conf)
	if s.Hostname != "" || s.passwd != "" {
		// sh sets the name and binds the passwd copy inside the new namespaces, then becomes sshd, so the pid
		// is still sshd's. unshare makes the mount namespace's propagation private: the host's /etc/passwd
		// is untouched.
		unshare := []string{"unshare"}
		script := ""
		if s.Hostname != "" {
			unshare = append(unshare, "--uts")
			script += `hostname "$0" && `
		}
		if s.passwd != "" {
			unshare = append(unshare, "--mount")
			script += `mount --bind "$1" /etc/passwd && `
		}
		unshare = append(unshare, "--", "sh", "-c", script+`shift && exec "$@"`, s.Hostname, s.passwd, SSHD(), "-D", "-e", "-f", s.conf)
		cmd = exec.Command(unshare[0], unshare[1:]...)
	}
	out := syncBuffer{mu: &s.logMu, b: &s.log}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so Kill takes every session it forked with it, as a crashed machine would.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		f.t.Fatalf("sshd %s: %v", alias, err)
	}
	s.cmd = cmd
	s.mu.Unlock()
	// Our own server must say it listens: a dial alone would also succeed on a port another process holds.
	want := fmt.Sprintf("Server listening on 127.0.0.1 port %d", s.Port)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.Log(), want) {
		if time.Now().After(deadline) {
			f.t.Fatalf("sshd %s did not listen on %d: %s", alias, s.Port, s.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill stops the server and every session it serves.
func (f *Fleet) Kill(alias string) {
	s := f.Servers[alias]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	pid := s.cmd.Process.Pid
	// Sessions are forked children of the listener; some move to a process group of their own, so they
	// are found through /proc by parent as well.
	for _, child := range descendants(pid) {
		_ = syscall.Kill(child, syscall.SIGKILL)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// PID is the running server's process id (a process that certainly lives on that "machine"), 0 when it is
// not running.
func (f *Fleet) PID(alias string) int {
	s := f.Servers[alias]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Running are the processes the server runs (its sessions' descendants) whose executable is exe: a
// host's runwatch, to stop or signal as that machine's own would be.
func (f *Fleet) Running(alias, exe string) []int {
	pid := f.PID(alias)
	if pid == 0 {
		return nil
	}
	var out []int
	for _, p := range descendants(pid) {
		if path, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(p), "exe")); err == nil && path == exe {
			out = append(out, p)
		}
	}
	return out
}

// StateHome is the XDG_STATE_HOME of the server's sessions: the remote runwatch's journal is under it, not
// in the real home of the user running the tests.
func (f *Fleet) StateHome(alias string) string { return filepath.Join(f.Dir, alias+"-state") }

// Log is what sshd printed (for failure messages).
func (s *Server) Log() string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.log.String()
}

// syncBuffer is sshd's output, written by exec's copier while tests read it.
type syncBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func descendants(pid int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Field 4 (ppid) follows the command name in parentheses, which may itself hold spaces.
		rest := string(b[bytes.LastIndexByte(b, ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(fields[1])
		children[pp] = append(children[pp], p)
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}

// freePorts finds n distinct free ports. The listeners are held until all are found: closed one by one,
// the kernel can hand the same port out twice, and two servers of one fleet on one port make "beta" answer
// as "alpha".
func freePorts(t testing.TB, n int) []int {
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// Holder starts a process on the server's "machine" that lives until killed (or the test ends) and returns
// its pid. It is the child of a shell there that waits for it, so it is reaped there when it exits, whatever
// reaps orphans on the test machine.
func (f *Fleet) Holder(alias string) int {
	f.t.Helper()
	argv := append(f.SSHCommand(), "-o", "BatchMode=yes", alias, "sleep 600 & echo $!; wait")
	c := exec.Command(argv[0], argv[1:]...)
	out, err := c.StdoutPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		f.t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscan(out, &pid); err != nil {
		f.t.Fatalf("the holder's pid on %s: %v", alias, err)
	}
	f.t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_ = c.Process.Kill()
		_ = c.Wait()
	})
	return pid
}

// On runs a shell command on the server's machine and returns its output.
func (f *Fleet) On(alias, command string) string {
	f.t.Helper()
	argv := append(f.SSHCommand(), "-o", "BatchMode=yes", alias, command)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		f.t.Fatalf("ssh %s %q: %v %s", alias, command, err, out)
	}
	return strings.TrimSpace(string(out))
}
