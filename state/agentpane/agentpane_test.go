package agentpane_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/agentpane"
	"runwatch/state/launch"
	"runwatch/state/resumable/resumabletest"
)

// server is a private tmux server: started with -L in a TMUX_TMPDIR of the test's own, so that when its name
// is "default" it is the user's default server as the finder looks for it.
type server struct {
	t    *testing.T
	args []string
	Sock string
}

func newServer(t *testing.T, tmpdir, name string) *server {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	s := &server{t: t, args: []string{"-L", name, "-f", "/dev/null"},
		Sock: filepath.Join(tmpdir, "tmux-"+strconv.Itoa(os.Getuid()), name)}
	s.run("new-session", "-d", "-s", "work", "-x", "80", "-y", "20")
	t.Cleanup(func() { _ = s.cmd("kill-server").Run() })
	return s
}

func (s *server) cmd(args ...string) *exec.Cmd {
	c := exec.Command("tmux", append(append([]string{}, s.args...), args...)...)
	c.Env = append(os.Environ(), "TMUX_TMPDIR="+filepath.Dir(filepath.Dir(s.Sock)), "TMUX=")
	return c
}

func (s *server) run(args ...string) string {
	s.t.Helper()
	out, err := s.cmd(args...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// window opens a window running shell command line and returns its pane id and the pane's process.
func (s *server) window(line string) (paneID string, pid int) {
	s.t.Helper()
	out := s.run("new-window", "-P", "-F", "#{pane_id} #{pane_pid}", "-t", "work", line)
	id, p, _ := strings.Cut(out, " ")
	pid, err := strconv.Atoi(p)
	if err != nil {
		s.t.Fatalf("new-window said %q", out)
	}
	s.t.Cleanup(func() { _ = s.cmd("kill-pane", "-t", id).Run() })
	return id, pid
}

func (s *server) target(paneID string) string {
	return s.run("display-message", "-p", "-t", paneID, "#{session_name}:#{window_index}.#{pane_index}")
}

// nested opens a window whose shell starts the fake agent as its child and stays its parent; it returns the
// agent's pid.
func (s *server) nested(dir string) (paneID string, agent int) {
	s.t.Helper()
	f := filepath.Join(dir, "agent.pid")
	paneID, _ = s.window("sleep 600 & echo $! > " + f + "; wait")
	deadline := time.Now().Add(30 * time.Second)
	for {
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

type fixture struct {
	t      *testing.T
	tmpdir string
	env    model.Env
}

func setup(t *testing.T) *fixture {
	tmpdir := t.TempDir()
	t.Setenv("TMUX_TMPDIR", tmpdir)
	t.Setenv("TMUX", "")
	return &fixture{t: t, tmpdir: tmpdir, env: state.NewEnv(0)}
}

// resumableRun writes a resumable run whose lock names pid, taken at acquired, and loads it.
func (f *fixture) resumableRun(pid int, acquired time.Time) model.Run {
	f.t.Helper()
	dir := resumabletest.MinimalRun(f.t, f.t.TempDir(), "run-1")
	if pid != 0 {
		resumabletest.WriteJSONLock(f.t, filepath.Join(dir, "run.lock"), pid, f.env.Host, acquired)
	}
	return f.load(dir)
}

func (f *fixture) load(dir string) model.Run {
	f.t.Helper()
	locs, err := state.Discover([]string{dir}, 1)
	if err != nil || len(locs) != 1 {
		f.t.Fatalf("discover %s: %v %v", dir, locs, err)
	}
	return state.Load(locs[0], f.env)
}

func (f *fixture) find(run model.Run, launches string) (agentpane.Pane, error) {
	return agentpane.NewFinder(f.env, launches).Find(&run)
}

func wantPane(t *testing.T, got agentpane.Pane, err error, s *server, paneID string, pid int) {
	t.Helper()
	if err != nil {
		t.Fatalf("no pane found: %v", err)
	}
	if got.PaneID != paneID || got.PID != pid || got.Target() != s.target(paneID) || got.Socket != s.Sock {
		t.Fatalf("found %+v, want pane %s (%s) of pid %d on %s", got, paneID, s.target(paneID), pid, s.Sock)
	}
}

func wantNotFound(t *testing.T, err error, words ...string) {
	t.Helper()
	if !agentpane.IsNotFound(err) {
		t.Fatalf("got %v, want a not-found reason", err)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("reason %q does not say %q", err, w)
		}
	}
}

// The agent is the pane's own process, or a child of the shell in the pane; one started outside tmux is in
// no pane, and the reason says so.
func TestFindsResumableHolderInPane(t *testing.T) {
	f := setup(t)
	s := newServer(t, f.tmpdir, "default")
	paneID, pid := s.window("exec sleep 600")
	got, err := f.find(f.resumableRun(pid, time.Now()), "")
	wantPane(t, got, err, s, paneID, pid)
	if got.Via == "" || !strings.HasPrefix(got.Where(), "pane "+paneID+" (work:") {
		t.Errorf("Where %q, Via %q", got.Where(), got.Via)
	}

	nestedID, agent := s.nested(t.TempDir())
	got, err = f.find(f.resumableRun(agent, time.Now()), "")
	wantPane(t, got, err, s, nestedID, agent)

	outside := resumabletest.LivePID(t)
	_, err = f.find(f.resumableRun(outside, time.Now()), "")
	wantNotFound(t, err, "pid "+strconv.Itoa(outside), "in no tmux pane")
}

// A jonggrang run's agent lock leads to its agent's pane the same way.
func TestFindsJonggrangAgentInPane(t *testing.T) {
	f := setup(t)
	s := newServer(t, f.tmpdir, "default")
	paneID, agent := s.nested(t.TempDir())
	root := filepath.Join(t.TempDir(), "app")
	copyTree(t, "../../testdata/jonggrang", root)
	lock := `{"agent_id":"developer-auth-001","files":["src/a.ts"],"acquired_at":"` +
		time.Now().UTC().Format("2006-01-02T15:04:05.000Z") + `","pid":` + strconv.Itoa(agent) + `}`
	if err := os.WriteFile(filepath.Join(root, ".jonggrang", "locks", "developer-auth-001.lock"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	run := f.load(filepath.Join(root, ".jonggrang", ".output", "features", "add-login-form-mlop4860"))
	got, err := f.find(run, "")
	wantPane(t, got, err, s, paneID, agent)
	if !strings.Contains(got.Via, "developer-auth-001.lock") {
		t.Errorf("via %q, want the agent's lock", got.Via)
	}
}

// A run launched with X is found in the pane the launch recorded, while that pane's process runs; once the
// window is closed, the reason says so.
func TestFindsLaunchedPane(t *testing.T) {
	f := setup(t)
	s := newServer(t, f.tmpdir, "default")
	paneID, pid := s.window("exec sleep 600")
	run := f.resumableRun(0, time.Time{})
	launches := filepath.Join(t.TempDir(), "launches.jsonl")
	if err := launch.Remember(launches, launch.Launched{StatePath: run.StatePath, Socket: s.Sock, PaneID: paneID, PanePID: pid, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	got, err := f.find(run, launches)
	wantPane(t, got, err, s, paneID, pid)
	if got.Via != "launched with X" {
		t.Errorf("via %q", got.Via)
	}
	s.run("kill-pane", "-t", paneID)
	_, err = f.find(run, launches)
	wantNotFound(t, err, "launched with X ("+paneID+") is closed", "no live holder")
}

// A pane on the server of the tmux runwatch runs in ($TMUX) is found as well as one on the default server.
func TestFindsPaneOnTMUXServer(t *testing.T) {
	f := setup(t)
	newServer(t, f.tmpdir, "default")
	other := newServer(t, f.tmpdir, "other")
	t.Setenv("TMUX", other.Sock+",1,0")
	paneID, pid := other.window("exec sleep 600")
	got, err := f.find(f.resumableRun(pid, time.Now()), "")
	wantPane(t, got, err, other, paneID, pid)
}

// Each reason no pane is found: the holder is dead; its pid was reused by a process that started after the
// lock was taken (even one in a pane is not followed); tmux is not running; the run has no holder.
func TestNotFoundReasons(t *testing.T) {
	f := setup(t)
	_, err := f.find(f.resumableRun(resumabletest.DeadPID(t), time.Now()), "")
	wantNotFound(t, err, "no live holder", "is not running")

	_, err = f.find(f.resumableRun(0, time.Time{}), "")
	wantNotFound(t, err, "no live holder")

	live := resumabletest.LivePID(t)
	_, err = f.find(f.resumableRun(live, time.Now()), "")
	wantNotFound(t, err, "tmux is not running", filepath.Join(f.tmpdir, "tmux-"+strconv.Itoa(os.Getuid()), "default"))

	s := newServer(t, f.tmpdir, "default")
	_, reused := s.window("exec sleep 600")
	_, err = f.find(f.resumableRun(reused, time.Now().Add(-time.Hour)), "")
	wantNotFound(t, err, "no live holder", "pid reused")
}

// A holder that runs as another user is not followed into its pane.
func TestAnotherUsersHolderIsNotFollowed(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("starting a process as another user needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv is not installed")
	}
	f := setup(t)
	s := newServer(t, f.tmpdir, "default")
	_, pid := s.window("exec setpriv --reuid=65534 --regid=65534 --clear-groups sleep 600")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil && strings.TrimSpace(string(b)) == "sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("setpriv never became sleep")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, err := f.find(f.resumableRun(pid, time.Now()), "")
	wantNotFound(t, err, "runs as another user")
}

// Switching goes to the pane's session, window and pane for the client this process runs under.
func TestSwitchTo(t *testing.T) {
	f := setup(t)
	s := newServer(t, f.tmpdir, "default")
	home := s.run("display-message", "-p", "-t", "work", "#{pane_id}")
	s.run("new-session", "-d", "-s", "agents", "-x", "80", "-y", "20")
	paneID, pid := s.window("exec sleep 600")
	s.run("move-window", "-s", paneID, "-t", "agents:")
	// A client attached to the session "work", in a terminal of a second private server.
	outer := newServer(t, f.tmpdir, "outer")
	outer.run("new-window", "-t", "work", strings.Join(append(append([]string{"tmux"}, s.args...), "attach", "-t", "work"), " "))
	clientPane := func() string { return strings.TrimSpace(s.run("list-clients", "-F", "#{pane_id}")) }
	for deadline := time.Now().Add(30 * time.Second); clientPane() != home; {
		if time.Now().After(deadline) {
			t.Fatalf("the client never attached: %q", clientPane())
		}
		time.Sleep(20 * time.Millisecond)
	}
	got, err := f.find(f.resumableRun(pid, time.Now()), "")
	wantPane(t, got, err, s, paneID, pid)
	t.Setenv("TMUX", s.Sock+",1,0")
	t.Setenv("TMUX_PANE", home)
	if err := agentpane.SwitchTo(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	if c := clientPane(); c != paneID {
		t.Fatalf("the client shows pane %s, want %s", c, paneID)
	}
	if sess := s.run("list-clients", "-F", "#{client_session}"); sess != "agents" {
		t.Errorf("client session %q", sess)
	}
	got.Socket = other
	if err := agentpane.SwitchTo(context.Background(), got); err != agentpane.ErrOtherServer {
		t.Errorf("a pane of another server: %v", err)
	}
}

const other = "/nonexistent/tmux.sock"

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() && d.Name() == "_gen" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A session name with spaces and non-ASCII comes back whole, in a process without a UTF-8 locale (as an ssh
// session often is, where tmux would print a tab as '_').
func TestSessionNameInCLocale(t *testing.T) {
	f := setup(t)
	s := newServer(t, f.tmpdir, "default")
	s.run("new-session", "-d", "-s", "my wörk 1")
	out := s.run("new-window", "-P", "-F", "#{pane_id} #{pane_pid}", "-t", "my wörk 1:", "exec sleep 600")
	paneID, p, _ := strings.Cut(out, " ")
	pid, _ := strconv.Atoi(p)
	t.Setenv("LANG", "C")
	t.Setenv("LC_ALL", "C")
	got, err := f.find(f.resumableRun(pid, time.Now()), "")
	wantPane(t, got, err, s, paneID, pid)
	if got.Session != "my wörk 1" {
		t.Errorf("session %q", got.Session)
	}
}
