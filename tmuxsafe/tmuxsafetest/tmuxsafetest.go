// Package tmuxsafetest gives tests a real tmux server on a private socket with a client attached, so what
// tmux draws in its status line can be read back (the client runs inside a second private server, whose
// screen the test captures).
package tmuxsafetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Server is the tmux server under test, session "t", its folder Dir and home Home: where a `#(touch PWN)`
// tmux ran would leave its file.
type Server struct {
	t         testing.TB
	tmux      string
	Socket    string
	outer     string
	Dir, Home string
}

// New starts the server and attaches a client to it; it skips the test when tmux is not installed.
func New(t testing.TB) *Server {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	s := &Server{t: t, tmux: tmux, Socket: filepath.Join(t.TempDir(), "tmux.sock"),
		outer: filepath.Join(t.TempDir(), "outer.sock"), Dir: t.TempDir(), Home: t.TempDir()}
	t.Cleanup(func() { s.on(s.Socket, "kill-server"); s.on(s.outer, "kill-server") })
	if out, err := s.Run("new-session", "-d", "-s", "t", "-x", "80", "-y", "10"); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	if out, err := s.on(s.outer, "new-session", "-d", "-x", "80", "-y", "11", tmux+" -S "+s.Socket+" attach -t t"); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(s.StatusLine(), "[t]"); {
		if time.Now().After(deadline) {
			t.Fatalf("the client never attached:\n%s", s.StatusLine())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

func (s *Server) on(sock string, args ...string) (string, error) {
	cmd := exec.Command(s.tmux, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...)
	cmd.Dir, cmd.Env = s.Dir, append(os.Environ(), "HOME="+s.Home, "TMUX=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Run runs a tmux command on the server under test.
func (s *Server) Run(args ...string) (string, error) { return s.on(s.Socket, args...) }

// StatusLine is the client's bottom line as drawn, trailing blanks removed.
func (s *Server) StatusLine() string {
	out, _ := s.on(s.outer, "capture-pane", "-p")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return strings.TrimRight(lines[len(lines)-1], " ")
}

// WaitStatus polls the status line until it is want, and returns what it shows (the deadline only bounds a
// broken run).
func (s *Server) WaitStatus(want string) string {
	deadline := time.Now().Add(10 * time.Second)
	for s.StatusLine() != want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	return s.StatusLine()
}

// Ran reports the folders where a PWN file appeared: tmux ran a command out of the text it was given.
func (s *Server) Ran() []string {
	s.Run("display-message", "-p", "-t", "t", "x") // a round trip, so a #() job already started can finish
	var found []string
	for _, d := range []string{s.Dir, s.Home} {
		if _, err := os.Stat(filepath.Join(d, "PWN")); err == nil {
			found = append(found, d)
		}
	}
	return found
}
