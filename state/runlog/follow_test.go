package runlog

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"runwatch/model"
)

func appendFile(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

type pollResult struct {
	entries            []model.LogEntry
	truncated, rotated bool
}

func poll(t *testing.T, fl *Follower) pollResult {
	t.Helper()
	e, tr, ro, err := fl.Poll()
	if err != nil {
		t.Fatalf("Poll: %v", err)
	}
	return pollResult{e, tr, ro}
}

func messages(entries []model.LogEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Message)
	}
	return out
}

func TestFollowerHoldsPartialLineAndMergesContinuations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	fl := NewFollower(path, 0)
	defer fl.Close()
	if r := poll(t, fl); len(r.entries) != 0 {
		t.Fatalf("missing file gave %v", r.entries)
	}
	appendFile(t, path, "[2026-02-15T01:00:00Z] S1 complete\n[2026-02-15T01:00:01Z] stopping af")
	r := poll(t, fl)
	if got := messages(r.entries); len(got) != 1 || got[0] != "S1 complete" {
		t.Fatalf("first poll = %q", got)
	}
	all := r.entries
	appendFile(t, path, "ter MAX_STAGES=1\n")
	r = poll(t, fl)
	if got := messages(r.entries); len(got) != 1 || got[0] != "stopping after MAX_STAGES=1" || r.entries[0].Level != model.LevelWarn {
		t.Fatalf("completed partial line = %q", got)
	}
	all = Append(all, r.entries)
	appendFile(t, path, "  resume_target_stage=S2\n")
	r = poll(t, fl)
	if len(r.entries) != 1 || r.entries[0].HasTime {
		t.Fatalf("late continuation should come as a timeless entry, got %+v", r.entries)
	}
	all = Append(all, r.entries)
	content, _ := os.ReadFile(path)
	whole, _ := ParseEntries(content, 0)
	if !sameEntries(all, whole) {
		t.Fatalf("followed entries differ from a full parse:\n%+v\n%+v", all, whole)
	}
	if fl.offset != int64(len(content)) {
		t.Fatalf("offset %d, want %d", fl.offset, len(content))
	}
}

func TestFollowerTruncation(t *testing.T) {
	path := writeFile(t, t.TempDir(), "run.log", "[2026-02-15T01:00:00Z] one\n[2026-02-15T01:00:01Z] two\n")
	fl := NewFollower(path, 0)
	defer fl.Close()
	poll(t, fl)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, "[2026-02-15T02:00:00Z] new\n")
	r := poll(t, fl)
	if !r.truncated || r.rotated || len(r.entries) != 1 || r.entries[0].Message != "new" || r.entries[0].Offset != 0 {
		t.Fatalf("after truncation: %+v", r)
	}
	if r = poll(t, fl); r.truncated || len(r.entries) != 0 {
		t.Fatalf("quiet poll after truncation: %+v", r)
	}
}

// TestFollowerRewriteInPlace: truncated and regrown past the old offset between two polls (copytruncate
// and a fast writer) is caught by the bytes before the offset, not by size.
func TestFollowerRewriteInPlace(t *testing.T) {
	path := writeFile(t, t.TempDir(), "run.log", "[2026-02-15T01:00:00Z] one\n")
	fl := NewFollower(path, 0)
	defer fl.Close()
	poll(t, fl)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[2026-02-15T03:00:00Z] replaced and longer than before\n")
	f.Close()
	r := poll(t, fl)
	if !r.truncated || len(r.entries) != 1 || r.entries[0].Message != "replaced and longer than before" {
		t.Fatalf("in-place rewrite: %+v", r)
	}
}

func TestFollowerStartOffsetBeyondSize(t *testing.T) {
	path := writeFile(t, t.TempDir(), "run.log", "[2026-02-15T01:00:00Z] short\n")
	fl := NewFollower(path, 1000)
	defer fl.Close()
	if r := poll(t, fl); !r.truncated || len(r.entries) != 1 {
		t.Fatalf("offset beyond size: %+v", r)
	}
}

func TestFollowerRotation(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "run.log", "[2026-02-15T01:00:00Z] old one\n")
	fl := NewFollower(path, 0)
	defer fl.Close()
	poll(t, fl)
	// The writer appends to the old file, it is renamed away, a new file takes the name.
	appendFile(t, path, "[2026-02-15T01:00:01Z] old two\n[2026-02-15T01:00:02Z] old unfinished")
	if err := os.Rename(path, filepath.Join(dir, "run.log.1")); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, "[2026-02-15T02:00:00Z] new one\n")
	r := poll(t, fl)
	want := []string{"old two", "old unfinished", "new one"}
	if !r.rotated || r.truncated || strings.Join(messages(r.entries), "|") != strings.Join(want, "|") {
		t.Fatalf("rotation: rotated=%v entries %q", r.rotated, messages(r.entries))
	}
	if r.entries[2].Offset != 0 {
		t.Fatalf("new file entry offset %d", r.entries[2].Offset)
	}
	appendFile(t, path, "[2026-02-15T02:00:01Z] new two\n")
	if r = poll(t, fl); r.rotated || len(r.entries) != 1 || r.entries[0].Message != "new two" {
		t.Fatalf("after rotation: %+v", r)
	}
}

func TestFollowerRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	fl := NewFollower(path, 0)
	if _, _, _, err := fl.Poll(); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("FIFO: err = %v", err)
	}
}

// TestFollowerFastAppends: a writer appends 10,000 entries (some split across two writes, some with
// continuation lines) while the follower polls; every entry arrives once, in order, nothing is lost.
func TestFollowerFastAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	const n = 10000
	fl := NewFollower(path, 0)
	defer fl.Close()
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		for i := 0; i < n; i++ {
			line := fmt.Sprintf("[2026-02-15T01:00:00Z] step seq=%d\n", i)
			if i%7 == 0 {
				line += "  detail=x\n"
			}
			if i%5 == 0 { // a torn write: the follower may see half a line
				f.WriteString(line[:10])
				line = line[10:]
			}
			if _, err := f.WriteString(line); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var all []model.LogEntry
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		r := poll(t, fl)
		all = Append(all, r.entries)
		if finished && !fl.More() {
			r = poll(t, fl) // whatever landed between the last read and the writer finishing
			all = Append(all, r.entries)
			break
		}
	}
	wg.Wait()
	if len(all) != n {
		t.Fatalf("got %d entries, want %d", len(all), n)
	}
	for i, e := range all {
		if e.Fields[0].Value != strconv.Itoa(i) || (i%7 == 0) != (len(e.Continuation) == 1) {
			t.Fatalf("entry %d = %+v", i, e)
		}
	}
}

// TestFollowerBoundedPoll: a big append is handed over in MaxPollBytes pieces with More set.
func TestFollowerBoundedPoll(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	line := "[2026-02-15T01:00:00Z] progress " + strings.Repeat("x", 90) + "\n"
	count := (3*MaxPollBytes)/len(line) + 10
	appendFile(t, path, strings.Repeat(line, count))
	fl := NewFollower(path, 0)
	defer fl.Close()
	total, polls := 0, 0
	for {
		r := poll(t, fl)
		polls++
		total += len(r.entries)
		if len(r.entries) > MaxPollBytes/len(line)+1 {
			t.Fatalf("one poll returned %d entries, more than MaxPollBytes holds", len(r.entries))
		}
		if !fl.More() {
			break
		}
	}
	if total != count || polls < 4 {
		t.Fatalf("got %d entries in %d polls, want %d in at least 4", total, polls, count)
	}
}

// TestFollowerDeletedAndRecreated: the log vanishes (a reset moved the run away) and a new one appears.
func TestFollowerDeletedAndRecreated(t *testing.T) {
	path := writeFile(t, t.TempDir(), "run.log", "[2026-02-15T01:00:00Z] old\n")
	fl := NewFollower(path, 0)
	defer fl.Close()
	poll(t, fl)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if r := poll(t, fl); r.truncated || r.rotated || len(r.entries) != 0 {
		t.Fatalf("after delete: %+v", r)
	}
	appendFile(t, path, "[2026-02-15T02:00:00Z] new\n")
	r := poll(t, fl)
	if !r.rotated || len(r.entries) != 1 || r.entries[0].Message != "new" {
		t.Fatalf("after re-create: %+v", r)
	}
}
