package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBy writes a JSON lock for the run in dir held by pid, taken now on this host.
func lockedBy(t *testing.T, dir string, pid int) {
	t.Helper()
	host, _ := os.Hostname()
	lock := fmt.Sprintf(`{"acquired_at_utc": %q, "host": %q, "pid": %d, "run_id": "r1", "user": "u"}`+"\n",
		time.Now().UTC().Format(time.RFC3339), host, pid)
	if err := os.WriteFile(filepath.Join(dir, "run.lock"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
}

// holder is a child process holding a run's lock until the test kills it.
type holder struct{ cmd *exec.Cmd }

func startHolder(t *testing.T) *holder {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &holder{cmd: cmd}
}

func (h *holder) pid() int { return h.cmd.Process.Pid }

// kill makes the lock stale: the pid is gone (and reaped, so it is not a zombie that still answers kill 0).
func (h *holder) kill() { _ = h.cmd.Process.Kill(); _ = h.cmd.Wait() }

// notifyFixture is a root with a run held by a live process and a run already stalled at start-up.
func notifyFixture(t *testing.T) (root, live, old string, h *holder) {
	t.Helper()
	root = t.TempDir()
	live = eventsRun(t, filepath.Join(root, "reports", "live-20260301T000000Z"), "S1")
	h = startHolder(t)
	lockedBy(t, live, h.pid())
	old = eventsRun(t, filepath.Join(root, "reports", "old-20260301T000000Z"), "S1")
	dead := startHolder(t)
	lockedBy(t, old, dead.pid())
	dead.kill()
	return root, live, old, h
}

func TestEventsAttentionLines(t *testing.T) {
	root, live, _, h := notifyFixture(t)
	s := startEvents(t, testEnv(t), "--until", "stalled", "--run", live, root)
	s.next("watch-health", ofType("watch-health"))
	h.kill()
	at := s.next("attention", ofType("attention"))
	att, _ := at["attention"].(map[string]any)
	if at["id"] != "live-20260301T000000Z" || at["transition"] != "entered" || att["code"] != "stale-lock" ||
		!strings.Contains(fmt.Sprint(att["reason"]), "dead pid") || at["state_path"] != filepath.Join(live, "state.env") {
		t.Fatalf("attention line: %v", at)
	}
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, m := range s.seen {
		if m["type"] == "attention" && m["id"] != "live-20260301T000000Z" {
			t.Errorf("an attention line for the state at start-up: %v", m)
		}
	}
}

// headless runs `runwatch notify` as a child process (the test binary dispatching, see TestMain), so it can
// be interrupted like a service is.
type headless struct {
	t      *testing.T
	cmd    *exec.Cmd
	mu     sync.Mutex
	lines  []string
	stderr bytes.Buffer
	done   chan struct{}
}

func startHeadless(t *testing.T, args ...string) *headless {
	t.Helper()
	argv, _ := json.Marshal(append([]string{"notify"}, args...))
	h := &headless{t: t, cmd: exec.Command(os.Args[0]), done: make(chan struct{})}
	h.cmd.Env = append(os.Environ(), helperArgsEnv+"="+string(argv), "XDG_CONFIG_HOME="+t.TempDir(), "TMUX=", "TMUX_PANE=")
	h.cmd.Stderr = &syncWriter{mu: &h.mu, w: &h.stderr}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// No controlling terminal: the bell and desktop channels have nowhere to go, which is what a service sees.
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.mu.Lock()
			h.lines = append(h.lines, sc.Text())
			h.mu.Unlock()
		}
		close(h.done)
	}()
	t.Cleanup(func() { _ = h.cmd.Process.Kill(); <-h.done; _ = h.cmd.Wait() })
	return h
}

type syncWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// waitFor polls until cond holds; the deadline only bounds a broken run.
func waitFor(t *testing.T, what string, cond func() bool, state func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s; %s", what, state())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (h *headless) snapshot() (lines []string, stderr string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.lines...), h.stderr.String()
}

func (h *headless) state() string {
	lines, stderr := h.snapshot()
	return fmt.Sprintf("stdout %q, stderr %q", lines, stderr)
}

func readLines(path string) []string {
	data, _ := os.ReadFile(path)
	if len(data) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func TestNotifyHeadless(t *testing.T) {
	t.Parallel()
	root, _, _, h := notifyFixture(t)
	argvLog := filepath.Join(t.TempDir(), "argv")
	hook := `sh -c 'printf "%s|" "$@" >> "$0"; echo >> "$0"' ` + argvLog + ` {{.Event}} {{.ID}} {{.Code}} {{.Action}}`
	n := startHeadless(t, "--notify-command", hook, root)
	waitFor(t, "the start-up line", func() bool {
		_, e := n.snapshot()
		return strings.Contains(e, "watching 2 runs") && strings.Contains(e, "notifying by hook")
	}, n.state)

	h.kill()
	waitFor(t, "the notification line", func() bool { l, _ := n.snapshot(); return len(l) > 0 }, n.state)
	lines, _ := n.snapshot()
	if !strings.Contains(lines[0], "live-20260301T000000Z needs you: lock held by dead pid") ||
		!strings.Contains(lines[0], "runwatch unlock live-20260301T000000Z") {
		t.Errorf("notification line %q", lines[0])
	}
	if _, err := time.Parse(time.RFC3339, strings.Fields(lines[0])[0]); err != nil {
		t.Errorf("line does not start with its time: %q", lines[0])
	}
	waitFor(t, "the hook", func() bool { return len(readLines(argvLog)) > 0 }, n.state)

	// A second run breaking is the barrier: once its notification is out, anything more about the first
	// would have been too.
	second := eventsRun(t, filepath.Join(root, "reports", "second-20260301T000000Z"), "S1")
	h2 := startHolder(t)
	lockedBy(t, second, h2.pid())
	h2.kill()
	waitFor(t, "the second notification", func() bool { return len(readLines(argvLog)) >= 2 }, n.state)

	got := readLines(argvLog)
	want := []string{"attention|live-20260301T000000Z|stale-lock|unlock|", "attention|second-20260301T000000Z|stale-lock|unlock|"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("hook ran with\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	lines, stderr := n.snapshot()
	for _, l := range lines {
		if strings.Contains(l, "old-2026") {
			t.Errorf("the run stalled at start-up was notified: %q", l)
		}
	}
	if strings.Contains(stderr, "notify.command") {
		t.Errorf("hook failure reported: %s", stderr)
	}

	_ = n.cmd.Process.Signal(os.Interrupt)
	<-n.done
	if err := n.cmd.Wait(); err != nil {
		t.Errorf("interrupted notify exited with %v", err)
	}
}

func TestNotifyExistingAndUsage(t *testing.T) {
	root, _, _, _ := notifyFixture(t)
	n := startHeadless(t, "--notify-existing", "--tmux-message", "off", "--notify-command", "true", root)
	waitFor(t, "the start-up state notified", func() bool { l, _ := n.snapshot(); return len(l) > 0 }, n.state)
	lines, stderr := n.snapshot()
	if !strings.Contains(lines[0], "old-20260301T000000Z needs you") || !strings.Contains(stderr, "notifying by hook") {
		t.Errorf("with --notify-existing: %s", n.state())
	}

	for _, args := range [][]string{
		{"--bell", "loud"}, {"--desktop", "growl"}, {"--notify-command", "x {{.Nope}}"}, {"--notify-command", "x 'open"},
		{filepath.Join(t.TempDir(), "missing")},
	} {
		var stderr bytes.Buffer
		if code := dispatch(append([]string{"notify"}, args...), &bytes.Buffer{}, &stderr, testEnv(t)); code != 2 || !strings.HasPrefix(stderr.String(), "runwatch notify: ") {
			t.Errorf("notify %q: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}
