package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"runwatch/config"
	"runwatch/fleet"
	"runwatch/model"
	"runwatch/remote"
	"runwatch/watch"
)

// A run whose log floods goes out at most once a second, in its latest state, its log's entries in one line:
// the first change after a quiet spell at once, the rest of the second held and merged.
func TestUpdateHoldSendsARunOnceAnEvery(t *testing.T) {
	t.Parallel()
	h := newUpdateHold(time.Second)
	t0 := time.Unix(1000, 0)
	change := func(size int64, msg string) watch.Update {
		return watch.Update{
			Changed:  []*model.Run{{StatePath: "/r/a/state.env", Log: &model.LogRef{Path: "/r/a/run.log", SizeBytes: size}}},
			Appended: []watch.LogAppend{{Path: "/r/a/run.log", Entries: []model.LogEntry{{Message: msg, HasTime: true}}}},
		}
	}
	if _, ok := h.add(change(1, "1"), t0); !ok {
		t.Fatal("the first change after a quiet spell was held")
	}
	if h.due() != nil {
		t.Fatal("nothing held, yet something is due")
	}
	for i := 2; i <= 20; i++ {
		if _, ok := h.add(change(int64(i), "x"), t0.Add(time.Duration(i)*40*time.Millisecond)); ok {
			t.Fatalf("change %d, %d ms after one went out, went out too", i, i*40)
		}
	}
	if h.due() == nil {
		t.Fatal("changes held, none due")
	}
	u := h.flush(t0.Add(time.Second))
	if len(u.Changed) != 1 || u.Changed[0].Log.SizeBytes != 20 {
		t.Fatalf("held changes went out as %d runs (%+v), want the run once in its latest state", len(u.Changed), u.Changed)
	}
	if len(u.Appended) != 1 || len(u.Appended[0].Entries) != 19 {
		t.Fatalf("held appends went out as %+v, want one line of the log's 19 entries", u.Appended)
	}
	if h.due() != nil {
		t.Fatal("flushed, yet still due")
	}
	// Within the second after the flush a change is held again; a second on, it goes out at once.
	if _, ok := h.add(change(21, "y"), t0.Add(1500*time.Millisecond)); ok {
		t.Fatal("a change half a second after a flush went out at once")
	}
	h.flush(t0.Add(2 * time.Second))
	if _, ok := h.add(change(22, "z"), t0.Add(3*time.Second)); !ok {
		t.Fatal("a change a second after the last write was held")
	}
}

// events linked to a runwatch over ssh (remote.StdinLinkEnv) writes a flooding log's entries, and its run,
// a few times, not once a write: 30 lines appended over 0.6 s go out in at most 4 log-appended lines.
func TestLinkedEventsHoldAFloodingRun(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := eventsRun(t, filepath.Join(root, "live-20260301T000000Z"), "S1")
	cmd, stdin, stdout := startLinkedEvents(t, nil, nil, root)
	lines := make(chan map[string]any, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	for m := range lines {
		if m["type"] == "heartbeat" {
			break
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, "run.log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		fmt.Fprintf(f, "[2026-03-01T00:00:%02dZ] progress_note step=%d\n", i, i)
		time.Sleep(20 * time.Millisecond)
	}
	f.Close()
	appends, entries := 0, 0
	for deadline := time.After(20 * time.Second); entries < 30; {
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatalf("events ended after %d of 30 entries", entries)
			}
			if m["type"] == "log-appended" {
				appends++
				got, _ := m["entries"].([]any)
				entries += len(got)
			}
		case <-deadline:
			t.Fatalf("%d of 30 entries within the wait", entries)
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("events linked to stdin did not end cleanly when it ended: %v", err)
	}
	if appends > 4 {
		t.Fatalf("30 lines appended over 0.6 s went out in %d log-appended lines, want at most 4", appends)
	}
}

// writeCounter counts the writes made to it.
type writeCounter struct{ writes, bytes int }

func (w *writeCounter) Write(b []byte) (int, error) {
	w.writes++
	w.bytes += len(b)
	return len(b), nil
}

// The runs at start go out in a write a batchBytes, not a write a run: over ssh each write cost sshd, ssh
// and the runwatch reading it a read and a packet.
func TestEventsWriteTheFirstRunsInBatches(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for i := range 40 {
		eventsRun(t, filepath.Join(root, "reports", fmt.Sprintf("run%02d-20260301T000000Z", i)), "S1")
	}
	var stderr strings.Builder
	roots, code := openRoots(testEnv(t).getenv, "events", []string{root}, config.Default(), fleet.Given{}, &stderr)
	if roots == nil {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	src, err := roots.Watch(false)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := &writeCounter{}
	st := &eventStream{em: &eventWriter{out: out, known: map[string]model.Run{}}}
	if code, done := st.start(src, io.Discard); done {
		t.Fatalf("start ended with %d", code)
	}
	if len(st.em.known) != 40 {
		t.Fatalf("%d runs written, want 40", len(st.em.known))
	}
	if want := 2 + out.bytes/batchBytes; out.writes > want {
		t.Fatalf("40 runs and the watcher's health (%d bytes) went out in %d writes, want at most %d", out.bytes, out.writes, want)
	}
}

// startLinkedEvents starts `runwatch events args...` as a dashboard runs it over ssh (linked to its stdin,
// remote.StdinLinkEnv), with env added to its environment and its stderr to stderr when not nil.
func startLinkedEvents(t *testing.T, env []string, stderr io.Writer, args ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	t.Helper()
	cmd := helperProcess(t, append([]string{"events"}, args...)...)
	cmd.Env = append(append(cmd.Env, env...), remote.StdinLinkEnv+"=1")
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, stdout
}

// events linked to a runwatch over ssh says its first heartbeat before its first watch-health line, with
// which that runwatch takes it as live: said after it, a runwatch stopped between the two was never judged
// lagging (remote.LagAfter), and remote's TestALaggingHostsRunsAreMarkedStale hung under load.
func TestLinkedEventsBeatBeforeTheyAreLive(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	eventsRun(t, filepath.Join(root, "live-20260301T000000Z"), "S1")
	cmd, stdin, stdout := startLinkedEvents(t, nil, nil, root)
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var types []string
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		typ, _ := m["type"].(string)
		types = append(types, typ)
		if typ == "watch-health" {
			break
		}
	}
	if want := []string{"run-added", "heartbeat", "watch-health"}; !slices.Equal(types, want) {
		t.Errorf("the first lines are %v, want %v", types, want)
	}
}
