package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"runwatch/remote/sshtest"
	"runwatch/state"
	"runwatch/state/resumable/resumabletest"
)

// gotoServer is a private tmux server started with -L in a TMUX_TMPDIR of the test's own: named "default",
// it is the user's default server where goto looks.
type gotoServer struct {
	t      *testing.T
	tmpdir string
	name   string
	Sock   string
}

func newGotoServer(t *testing.T, tmpdir, name, session string) *gotoServer {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	s := &gotoServer{t: t, tmpdir: tmpdir, name: name, Sock: filepath.Join(tmpdir, "tmux-"+strconv.Itoa(os.Getuid()), name)}
	s.run("new-session", "-d", "-s", session, "-x", "100", "-y", "20")
	t.Cleanup(func() { _ = s.cmd("kill-server").Run() })
	return s
}

func (s *gotoServer) argv(args ...string) []string {
	return append([]string{"tmux", "-L", s.name, "-f", "/dev/null"}, args...)
}

func (s *gotoServer) cmd(args ...string) *exec.Cmd {
	a := s.argv(args...)
	c := exec.Command(a[0], a[1:]...)
	c.Env = append(withoutTmux(os.Environ()), "TMUX_TMPDIR="+s.tmpdir)
	return c
}

func (s *gotoServer) run(args ...string) string {
	s.t.Helper()
	out, err := s.cmd(args...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// agent opens a window in session running `exec sleep 600`, the fake agent, and returns its pane and pid.
func (s *gotoServer) agent(session string) (paneID string, pid int) {
	s.t.Helper()
	out := s.run("new-window", "-P", "-F", "#{pane_id} #{pane_pid}", "-t", session+":", "exec sleep 600")
	id, p, _ := strings.Cut(out, " ")
	pid, err := strconv.Atoi(p)
	if err != nil {
		s.t.Fatalf("new-window said %q", out)
	}
	return id, pid
}

func (s *gotoServer) target(paneID string) string {
	return s.run("display-message", "-p", "-t", paneID, "#{session_name}:#{window_index}.#{pane_index}")
}

// clientOn waits until a client of the server shows paneID.
func (s *gotoServer) clientOn(paneID, what string) {
	s.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		clients := s.run("list-clients", "-F", "#{pane_id}")
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

// gotoRun writes a resumable run whose lock is held by pid since acquired.
func gotoRun(t *testing.T, pid int, acquired time.Time) string {
	t.Helper()
	dir := resumabletest.MinimalRun(t, t.TempDir(), "irm-goto-20261201T080000Z")
	if pid != 0 {
		resumabletest.WriteJSONLock(t, filepath.Join(dir, "run.lock"), pid, state.NewEnv(0).Host, acquired)
	}
	return dir
}

func gotoEnv(t *testing.T) string {
	tmpdir := t.TempDir()
	t.Setenv("TMUX_TMPDIR", tmpdir)
	t.Setenv("TMUX", "")
	t.Setenv("TMUX_PANE", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	return tmpdir
}

// goto --print and --json say where the agent is; with no agent, exit 3 and the reason.
func TestGotoPrintsThePane(t *testing.T) {
	tmpdir := gotoEnv(t)
	s := newGotoServer(t, tmpdir, "default", "work")
	paneID, pid := s.agent("work")
	dir := gotoRun(t, pid, time.Now())

	code, out, errOut := run(t, "goto", "--print", dir)
	if code != exitOK || out != s.target(paneID)+" "+paneID+"\n" {
		t.Fatalf("goto --print: exit %d, %q (stderr %q), want %q", code, out, errOut, s.target(paneID)+" "+paneID)
	}
	code, out, errOut = run(t, "goto", "--json", dir)
	var got map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("goto --json: exit %d, %q (stderr %q)", code, out, errOut)
	}
	win, _ := strconv.Atoi(strings.TrimSuffix(strings.Split(s.target(paneID), ":")[1], ".0"))
	want := map[string]any{"host": state.NewEnv(0).Host, "pid": float64(pid), "session": "work", "window": float64(win), "pane": float64(0), "pane_id": paneID}
	if len(got) != len(want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}

	// No agent: a dead holder, then tmux not running.
	code, _, errOut = run(t, "goto", "--print", gotoRun(t, resumabletest.DeadPID(t), time.Now()))
	if code != exitNoAgent || !strings.Contains(errOut, "no live holder") || !strings.Contains(errOut, "is not running") {
		t.Errorf("dead holder: exit %d, stderr %q", code, errOut)
	}
	s.run("kill-server")
	code, _, errOut = run(t, "goto", "--print", dir)
	if code != exitNoAgent || !strings.Contains(errOut, "tmux is not running") {
		t.Errorf("no tmux: exit %d, stderr %q", code, errOut)
	}
}

// Inside tmux, goto switches this client to the agent's pane; outside tmux it attaches a terminal to it.
func TestGotoSwitchesOrAttaches(t *testing.T) {
	tmpdir := gotoEnv(t)
	s := newGotoServer(t, tmpdir, "default", "home")
	home := s.run("display-message", "-p", "-t", "home", "#{pane_id}")
	s.run("new-session", "-d", "-s", "agents")
	paneID, pid := s.agent("agents")
	dir := gotoRun(t, pid, time.Now())
	// The terminal a person looks at: a client of the server, attached to "home", inside a second server.
	outer := newGotoServer(t, tmpdir, "outer", "term")
	outer.run("new-window", "-t", "term:", strings.Join(s.argv("attach", "-t", "home"), " "))
	s.clientOn(home, "the client never attached")

	t.Setenv("TMUX", s.Sock+",1,0")
	t.Setenv("TMUX_PANE", home)
	if code, out, errOut := run(t, "goto", dir); code != exitOK {
		t.Fatalf("goto: exit %d, %q %q", code, out, errOut)
	}
	s.clientOn(paneID, "goto inside tmux")

	// Outside tmux: runwatch becomes `tmux attach`, in a terminal of its own.
	bin := buildRunwatch(t)
	before := s.run("list-clients", "-F", "#{client_name}")
	outer.run("new-window", "-t", "term:", "env -u TMUX -u TMUX_PANE TMUX_TMPDIR="+tmpdir+" XDG_CONFIG_HOME="+os.Getenv("XDG_CONFIG_HOME")+
		" "+bin+" goto "+dir+"; sleep 600")
	for deadline := time.Now().Add(30 * time.Second); s.run("list-clients", "-F", "#{client_name}") == before; {
		if time.Now().After(deadline) {
			t.Fatalf("goto outside tmux never attached:\n%s", outer.run("capture-pane", "-p", "-t", "term:"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(strings.Fields(s.run("list-clients", "-F", "#{pane_id}"))); n != 2 {
		t.Fatalf("%d clients, want 2", n)
	}
	s.clientOn(paneID, "goto outside tmux")
}

// A remote run's pane is found by its host's runwatch, and goto inside tmux opens a window here running ssh
// to that host, attached to the pane.
func TestGotoRemoteRun(t *testing.T) {
	tmpdir := gotoEnv(t)
	fleet := sshFleet(t, "alpha")
	// The host's default tmux server is the test's own: ssh sends the folder, sshtest accepts it.
	t.Setenv("RUNWATCH_SSH_COMMAND", strings.Join(fleet.SSHCommand(), " ")+" -o SetEnv=TMUX_TMPDIR="+tmpdir)
	s := newGotoServer(t, tmpdir, "default", "work")
	paneID, pid := s.agent("work")
	dir := gotoRun(t, pid, time.Now())
	target := "ssh://alpha" + dir

	code, out, errOut := run(t, "goto", "--json", target)
	var got map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil || got["host"] != "alpha" || got["pane_id"] != paneID || got["pid"] != float64(pid) {
		t.Fatalf("goto --json %s: exit %d, %q (stderr %q)", target, code, out, errOut)
	}
	if code, out, _ := run(t, "goto", "--print", target); code != exitOK || out != s.target(paneID)+" "+paneID+"\n" {
		t.Fatalf("goto --print: exit %d, %q", code, out)
	}

	// From a tmux here (another server), goto opens a window that attaches to the pane over ssh.
	here := newGotoServer(t, tmpdir, "here", "me")
	t.Setenv("TMUX", here.Sock+",1,0")
	if code, out, errOut := run(t, "goto", target); code != exitOK {
		t.Fatalf("goto: exit %d, %q %q", code, out, errOut)
	}
	s.clientOn(paneID, "the window goto opened")
	if w := here.run("list-windows", "-t", "me", "-F", "#{window_name}"); !strings.Contains(w, "agent alpha") {
		t.Errorf("windows here: %q", w)
	}

	code, _, errOut = run(t, "goto", "--print", "ssh://alpha"+gotoRun(t, 0, time.Time{}))
	if code != exitNoAgent || !strings.Contains(errOut, "on alpha: no live holder") {
		t.Errorf("no agent there: exit %d, stderr %q", code, errOut)
	}
}

// A host's answer is untrusted: a pane id that is not tmux's %N never becomes a word of ssh or tmux, and a
// session name reaches the terminal sanitized.
func TestGotoHostileHostAnswer(t *testing.T) {
	gotoEnv(t)
	bin := t.TempDir()
	answer := filepath.Join(t.TempDir(), "answer.json")
	// The host's "runwatch" prints whatever the test put in answer.json.
	if err := os.WriteFile(filepath.Join(bin, "runwatch"), []byte("#!/bin/sh\ncat "+answer+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fleet := sshtest.New(t, bin, "alpha")
	t.Setenv("RUNWATCH_SSH_COMMAND", strings.Join(fleet.SSHCommand(), " "))
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(fleet.Dir, "rt"))
	say := func(v any) {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(answer, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	say(map[string]any{"pane": map[string]any{"pane_id": "%1; touch PWN", "session": "s", "pid": 1}})
	code, out, errOut := run(t, "goto", "--print", "ssh://alpha/runs/x")
	if code != exitProblems || out != "" || !strings.Contains(errOut, "answered a pane id that is none") {
		t.Errorf("pane id %%1; touch PWN: exit %d, %q, stderr %q", code, out, errOut)
	}
	say(map[string]any{"pane": map[string]any{"pane_id": "%7", "session": "s\x1b]0;PWN\x07\x9b31m", "window": 2, "pid": 1}})
	code, out, errOut = run(t, "goto", "--print", "ssh://alpha/runs/x")
	if code != exitOK || strings.ContainsAny(out, "\x1b\x07\u009b") || !strings.HasSuffix(out, ":2.0 %7\n") {
		t.Errorf("hostile session name: exit %d, %q, stderr %q", code, out, errOut)
	}
	code, out, _ = run(t, "goto", "--json", "ssh://alpha/runs/x")
	if code != exitOK || strings.ContainsAny(out, "\x1b\x07\u009b") {
		t.Errorf("hostile session name in JSON: exit %d, %q", code, out)
	}
	say(map[string]any{"not_found": "no live holder\x1b[2J"})
	code, _, errOut = run(t, "goto", "--print", "ssh://alpha/runs/x")
	if code != exitNoAgent || strings.Contains(errOut, "\x1b") || !strings.Contains(errOut, "on alpha: no live holder") {
		t.Errorf("hostile reason: exit %d, stderr %q", code, errOut)
	}
}
