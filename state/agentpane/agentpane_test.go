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
	"runwatch/state/agentpane/agentpanetest"
	"runwatch/state/launch"
	"runwatch/state/resumable/resumabletest"
)

type fixture struct {
	t      *testing.T
	tmpdir string
	env    model.Env
	tmux   agentpane.Tmux
}

// setup gives the test tmux servers of its own, reached through its own environment, so it runs in
// parallel.
func setup(t *testing.T) *fixture {
	t.Parallel()
	tmpdir, env := agentpanetest.Private(t)
	return &fixture{t: t, tmpdir: tmpdir, env: state.NewEnv(0), tmux: agentpane.Tmux{Env: env}}
}

func newServer(t *testing.T, tmpdir, name string) *agentpanetest.Server {
	return agentpanetest.New(t, tmpdir, name, "work")
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
	return agentpane.NewFinder(f.env, f.tmux, launches).Find(&run)
}

func wantPane(t *testing.T, got agentpane.Pane, err error, s *agentpanetest.Server, paneID string, pid int) {
	t.Helper()
	if err != nil {
		t.Fatalf("no pane found: %v", err)
	}
	if got.PaneID != paneID || got.PID != pid || got.Target() != s.Target(paneID) || got.Socket != s.Sock {
		t.Fatalf("found %+v, want pane %s (%s) of pid %d on %s", got, paneID, s.Target(paneID), pid, s.Sock)
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
	paneID, pid := s.Window("work", "exec sleep 600")
	got, err := f.find(f.resumableRun(pid, time.Now()), "")
	wantPane(t, got, err, s, paneID, pid)
	if got.Via == "" || !strings.HasPrefix(got.Where(), "pane "+paneID+" (work:") {
		t.Errorf("Where %q, Via %q", got.Where(), got.Via)
	}

	nestedID, agent := s.Nested("work")
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
	paneID, agent := s.Nested("work")
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
	paneID, pid := s.Window("work", "exec sleep 600")
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
	s.Run("kill-pane", "-t", paneID)
	_, err = f.find(run, launches)
	wantNotFound(t, err, "launched with X ("+paneID+") is closed", "no live holder")
}

// A pane on the server of the tmux runwatch runs in ($TMUX) is found as well as one on the default server.
func TestFindsPaneOnTMUXServer(t *testing.T) {
	f := setup(t)
	newServer(t, f.tmpdir, "default")
	other := newServer(t, f.tmpdir, "other")
	f.tmux.Env = append(f.tmux.Env, "TMUX="+other.Sock+",1,0")
	paneID, pid := other.Window("work", "exec sleep 600")
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
	_, reused := s.Window("work", "exec sleep 600")
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
	_, pid := s.Window("work", "exec setpriv --reuid=65534 --regid=65534 --clear-groups sleep 600")
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
	home := s.Run("display-message", "-p", "-t", "work:", "#{pane_id}")
	s.Run("new-session", "-d", "-s", "agents")
	paneID, pid := s.Agent("agents")
	s.Attach("work")
	got, err := f.find(f.resumableRun(pid, time.Now()), "")
	wantPane(t, got, err, s, paneID, pid)
	inside := agentpane.Tmux{Env: append(f.tmux.Env, "TMUX="+s.Sock+",1,0", "TMUX_PANE="+home)}
	if err := inside.SwitchTo(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	s.ClientOn(paneID, "after the switch")
	if sess := s.Run("list-clients", "-F", "#{client_session}"); sess != "agents" {
		t.Errorf("client session %q", sess)
	}
	got.Socket = other
	if err := inside.SwitchTo(context.Background(), got); err != agentpane.ErrOtherServer {
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

// A session name with spaces and non-ASCII comes back whole, also in a process whose locale is C (an ssh
// session often has none).
func TestSessionNameInCLocale(t *testing.T) {
	f := setup(t)
	s := newServer(t, f.tmpdir, "default")
	s.Run("new-session", "-d", "-s", "my wörk 1")
	paneID, pid := s.Agent("my wörk 1")
	want := s.Target(paneID)
	f.tmux.Env = append(f.tmux.Env, "LANG=C", "LC_ALL=C")
	got, err := f.find(f.resumableRun(pid, time.Now()), "")
	if err != nil || got.PaneID != paneID || got.Target() != want || got.Session != "my wörk 1" {
		t.Fatalf("found %+v (%v), want pane %s, %s", got, err, paneID, want)
	}
}
