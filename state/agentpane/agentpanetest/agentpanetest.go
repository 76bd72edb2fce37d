// Package agentpanetest gives tests private tmux servers to find agents in: started with -L in a TMUX_TMPDIR
// of the test's own, so the one named "default" is the user's default server where runwatch looks, and fake
// agents (processes a run's lock can name) in their panes.
package agentpanetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is one private tmux server; Sock is its socket.
type Server struct {
	t      testing.TB
	tmpdir string
	name   string
	Sock   string
}

// Private makes a TMUX_TMPDIR for the test and returns it, with the variables (NAME=value) that point tmux
// there and outside any tmux: given per call (agentpane.Tmux's Env, the CLI's environment), so the tests
// that use them run in parallel.
func Private(t testing.TB) (tmpdir string, env []string) {
	tmpdir = t.TempDir()
	return tmpdir, []string{"TMUX_TMPDIR=" + tmpdir, "TMUX=", "TMUX_PANE="}
}

// New starts server name under tmpdir with one session; it skips the test when tmux is not installed.
func New(t testing.TB, tmpdir, name, session string) *Server {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	s := &Server{t: t, tmpdir: tmpdir, name: name, Sock: filepath.Join(tmpdir, "tmux-"+strconv.Itoa(os.Getuid()), name)}
	s.Run("new-session", "-d", "-s", session, "-x", "100", "-y", "20")
	t.Cleanup(func() { _ = s.Cmd("kill-server").Run() })
	return s
}

// Argv is the tmux command line for args on this server.
func (s *Server) Argv(args ...string) []string {
	return append([]string{"tmux", "-L", s.name, "-f", "/dev/null"}, args...)
}

// Cmd is a tmux command on this server, run outside any tmux.
func (s *Server) Cmd(args ...string) *exec.Cmd {
	a := s.Argv(args...)
	c := exec.Command(a[0], a[1:]...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "TMUX=") && !strings.HasPrefix(e, "TMUX_PANE=") {
			c.Env = append(c.Env, e)
		}
	}
	c.Env = append(c.Env, "TMUX_TMPDIR="+s.tmpdir)
	return c
}

// Run runs a tmux command on this server and returns its output; it fails the test when tmux does.
func (s *Server) Run(args ...string) string {
	s.t.Helper()
	out, err := s.Cmd(args...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Window opens a window in session running shell command line and returns its pane and the pane's process.
func (s *Server) Window(session, line string) (paneID string, pid int) {
	s.t.Helper()
	out := s.Run("new-window", "-P", "-F", "#{pane_id} #{pane_pid}", "-t", session+":", line)
	id, p, _ := strings.Cut(out, " ")
	pid, err := strconv.Atoi(p)
	if err != nil {
		s.t.Fatalf("new-window said %q", out)
	}
	return id, pid
}

// Agent opens a window in session whose own process is the fake agent, and returns its pane and pid.
func (s *Server) Agent(session string) (paneID string, pid int) {
	return s.Window(session, "exec sleep 600")
}

// Nested opens a window in session whose shell starts the fake agent as its child and stays its parent, and
// returns the pane and the agent's pid.
func (s *Server) Nested(session string) (paneID string, agent int) {
	s.t.Helper()
	f := filepath.Join(s.t.TempDir(), "agent.pid")
	paneID, _ = s.Window(session, "sleep 600 & echo $! > "+f+"; wait")
	for deadline := time.Now().Add(30 * time.Second); ; {
		b, err := os.ReadFile(f)
		if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && n > 0 {
			return paneID, n
		}
		if time.Now().After(deadline) {
			s.t.Fatal("the shell in the pane never started the agent")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Target is the pane as SESSION:WINDOW.PANE, as tmux says it.
func (s *Server) Target(paneID string) string {
	return s.Run("display-message", "-p", "-t", paneID, "#{session_name}:#{window_index}.#{pane_index}")
}

// Attach attaches a client of this server to session, in a window of a second private server (its terminal),
// and waits until it shows the session's pane.
func (s *Server) Attach(session string) {
	s.t.Helper()
	home := s.Run("display-message", "-p", "-t", session+":", "#{pane_id}")
	term := New(s.t, s.tmpdir, s.name+"-term", "term")
	term.Run("new-window", "-t", "term:", strings.Join(s.Argv("attach", "-t", session), " "))
	s.ClientOn(home, "the client never attached")
}

// ClientOn waits until a client of this server shows paneID.
func (s *Server) ClientOn(paneID, what string) {
	s.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		clients := s.Run("list-clients", "-F", "#{pane_id}")
		for _, c := range strings.Fields(clients) {
			if c == paneID {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: no client shows pane %s (clients show %q)", what, paneID, clients)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
