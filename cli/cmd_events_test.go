package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// eventsRun writes a resumable run folder at stage and returns it.
func eventsRun(t *testing.T, dir, stage string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"state.env": fmt.Sprintf("CURRENT_STAGE=%q\nLOCK_FILE=%q\nRUN_ID=\"r1\"\nS1_DONE=\"0\"\nS2_DONE=\"0\"\nTASK_NAME=\"task\"\n",
			stage, filepath.Join(dir, "run.lock")),
		"checklist.state.env": "CB_S1_GREEN=\"0\"\nCB_S2_GREEN=\"0\"\n",
		"run.log":             "[2026-02-15T01:50:43Z] run bootstrapped\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// eventsSession runs `runwatch events` in-process and hands its stdout over line by line.
type eventsSession struct {
	t     *testing.T
	lines chan map[string]any
	code  chan int
	seen  []map[string]any
}

// startEvents runs `runwatch events args...` in process in e.
func startEvents(t *testing.T, e env, args ...string) *eventsSession {
	t.Helper()
	pr, pw := io.Pipe()
	s := &eventsSession{t: t, lines: make(chan map[string]any, 1024), code: make(chan int, 1)}
	go func() {
		code := dispatch(append([]string{"events"}, args...), pw, io.Discard, e)
		pw.Close()
		s.code <- code
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("not a JSON line: %q: %v", sc.Text(), err)
				continue
			}
			s.lines <- m
		}
		close(s.lines)
	}()
	return s
}

// next waits for a line matching want, keeping every line seen on the way.
func (s *eventsSession) next(what string, want func(map[string]any) bool) map[string]any {
	s.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("output ended before %s; saw %d lines", what, len(s.seen))
			}
			s.seen = append(s.seen, m)
			if want(m) {
				return m
			}
		case <-deadline:
			s.t.Fatalf("no %s within the wait limit; saw %v", what, s.seen)
		}
	}
}

func (s *eventsSession) exit() int {
	s.t.Helper()
	select {
	case c := <-s.code:
		for range s.lines { // drain what is left
		}
		return c
	case <-time.After(20 * time.Second):
		s.t.Fatal("events did not exit")
	}
	return -1
}

func ofType(typ string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ }
}

func runField(m map[string]any, key string) any {
	r, _ := m["run"].(map[string]any)
	return r[key]
}

func TestEventsUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--until", "completed"},
		{"--run", "x"},
		{"--until", "done", "--run", "x"},
		{"--no-such-flag"},
		{"--timeout", "-1s"},
		{filepath.Join(t.TempDir(), "no-such-dir")},
	} {
		if code := dispatch(append([]string{"events"}, args...), io.Discard, io.Discard, testEnv(t)); code != 2 {
			t.Errorf("events %v exited %d, want 2", args, code)
		}
	}
}

func TestEventsTimeoutExits3AfterInitialLines(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	eventsRun(t, filepath.Join(root, "reports", "quiet-20260301T000000Z"), "S1")
	s := startEvents(t, testEnv(t), root, "--timeout", "200ms")
	added := s.next("run-added", ofType("run-added"))
	if runField(added, "id") != "quiet-20260301T000000Z" {
		t.Fatalf("run-added for %v", runField(added, "id"))
	}
	s.next("watch-health", ofType("watch-health"))
	if code := s.exit(); code != 3 {
		t.Fatalf("exit %d, want 3", code)
	}
}

func TestEventsUntilAlreadyReached(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	eventsRun(t, filepath.Join(root, "paused-20260301T000000Z"), "S1")
	s := startEvents(t, testEnv(t), "--until", "paused", "--run", "paused-2026", root)
	s.next("run-added", ofType("run-added"))
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d, want 0 for a run already paused", code)
	}
}

// --run takes RUN as every command does (state.MatchRun): the RUN_ID a run's state file says names it too,
// as it does for brief, goto and the actions (events matched only ids and their prefixes).
func TestEventsRunIsNamedByItsRunID(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := eventsRun(t, filepath.Join(root, "paused-20260301T000000Z"), "S1")
	if err := os.WriteFile(filepath.Join(dir, "state.env"), []byte("CURRENT_STAGE=\"S1\"\nRUN_ID=\"the-own-id\"\nS1_DONE=\"0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startEvents(t, testEnv(t), "--until", "paused", "--run", "the-own-id", "--timeout", "20s", root)
	s.next("run-added", ofType("run-added"))
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d, want 0 for the run its RUN_ID names, already paused", code)
	}
}

// An ambiguous --run is refused as brief refuses it (exit 1, no usage): TestEventsRefusesAnAmbiguousRunFirst.
func TestEventsAmbiguousRunIsRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	eventsRun(t, filepath.Join(root, "job-a"), "S1")
	eventsRun(t, filepath.Join(root, "job-b"), "S1")
	s := startEvents(t, testEnv(t), "--until", "running", "--run", "job", root)
	if code := s.exit(); code != exitNoRun {
		t.Fatalf("exit %d, want %d for a prefix matching two runs", code, exitNoRun)
	}
}

func TestEventsStreamsChangesUntilStatus(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := eventsRun(t, filepath.Join(root, "live-20260301T000000Z"), "S1")
	s := startEvents(t, testEnv(t), "--until", "running", "--run", dir, root)
	s.next("watch-health", ofType("watch-health"))

	// An atomic replace of state.env: run-changed naming current_stage.
	st := filepath.Join(dir, "state.env")
	data, err := os.ReadFile(st)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, ".state.env.tmp-1")
	if err := os.WriteFile(tmp, []byte(strings.Replace(string(data), `"S1"`, `"S2"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, st); err != nil {
		t.Fatal(err)
	}
	changed := s.next("run-changed with current_stage", func(m map[string]any) bool {
		return m["type"] == "run-changed" && runField(m, "current_stage") == "S2"
	})
	if !strings.Contains(fmt.Sprint(changed["changed"]), "current_stage") {
		t.Fatalf("changed = %v, want current_stage among them", changed["changed"])
	}

	// An appended log line.
	f, err := os.OpenFile(filepath.Join(dir, "run.log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "[2026-03-01T00:00:00Z] stage_start stage=S2")
	f.Close()
	logged := s.next("log-appended", ofType("log-appended"))
	entries, _ := logged["entries"].([]any)
	if len(entries) != 1 || logged["state_path"] != st {
		t.Fatalf("log-appended = %v, want one entry of %s", logged, st)
	}

	// A live lock makes the run running: --until is reached and events exits 0.
	host, _ := os.Hostname()
	lock := fmt.Sprintf(`{"acquired_at_utc": %q, "host": %q, "pid": %d, "run_id": "r1", "user": "u"}`+"\n",
		time.Now().UTC().Format(time.RFC3339), host, os.Getpid())
	if err := os.WriteFile(filepath.Join(dir, "run.lock"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	s.next("run-changed to running", func(m map[string]any) bool {
		return m["type"] == "run-changed" && runField(m, "status") == "running"
	})
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d, want 0 once running", code)
	}
}
