package runlog

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"runwatch/model"
)

// checkCapped fails when any text of the entries escaped the line cap.
func checkCapped(t *testing.T, entries []model.LogEntry) {
	t.Helper()
	limit := MaxLineBytes + len(elisionMarker(1<<40))
	for _, e := range entries {
		if len(e.Message) > limit {
			t.Fatalf("message of %d bytes", len(e.Message))
		}
		for _, c := range e.Continuation {
			if len(c) > limit {
				t.Fatalf("continuation of %d bytes", len(c))
			}
		}
	}
}

// TestBinaryLog: random bytes (NULs, escape bytes, invalid UTF-8, stray [ and newlines) go through every
// reader without a panic, with every line capped, and the readers agree with each other.
func TestBinaryLog(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	data := make([]byte, 3<<20)
	rng.Read(data)
	// Sprinkle real entries so grouping is exercised too.
	for i := 0; i < 200; i++ {
		at := rng.Intn(len(data) - 64)
		copy(data[at:], "\n[2026-02-15T01:00:00Z] stage_start stage=B\x1b[31m\n")
	}
	path := filepath.Join(t.TempDir(), "run.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	whole, _ := ParseEntries(data, 0)
	s := newStream(0)
	for i := 0; i < len(data); i += 4093 {
		s.feed(data[i:min(len(data), i+4093)])
	}
	s.finishPartial() // the last line has no newline: it counts as complete at end of file
	streamed := s.take()
	if terminated, _ := ParseEntries(append(data[:len(data):len(data)], '\n'), 0); !sameEntries(streamed, terminated) {
		t.Fatal("streamed parse of binary data differs from ParseEntries")
	}
	checkCapped(t, streamed)

	tail, _, err := ReadTail(path, 50)
	if err != nil {
		t.Fatal(err)
	}
	if !sameEntries(tail, streamed[len(streamed)-50:]) {
		t.Fatal("ReadTail of binary data differs from a full parse")
	}

	fl := NewFollower(path, 0)
	defer fl.Close()
	var followed []model.LogEntry
	for {
		e, _, _, err := fl.Poll()
		if err != nil {
			t.Fatal(err)
		}
		followed = Append(followed, e)
		if !fl.More() {
			break
		}
	}
	if !sameEntries(followed, whole) {
		t.Fatalf("followed %d entries, parsed %d", len(followed), len(whole))
	}

	if got := startOrder(path); len(got) != 1 || got[0] != "B\x1b[31m" {
		t.Fatalf("StageStartOrder = %q", got)
	}

	x := openIndex(t, path)
	waitIndex(t, x)
	want := splitLines(string(data))
	checkLines(t, x, want, [][2]int{{0, 100}, {len(want) - 100, 100}})
	re := regexp.MustCompile("(?i)STAGE_START")
	if line, ok := x.Search(re, 0, true); !ok || !strings.Contains(want[line], "stage_start") {
		t.Fatalf("search in binary log: %d %v", line, ok)
	}
}

// TestFollowerHugeLineBoundedMemory: a 50 MiB line arrives over several polls; the follower holds only the
// capped head of it and reports it capped once its newline comes.
func TestFollowerHugeLineBoundedMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	appendFile(t, path, "[2026-02-15T01:00:00Z] before\n[2026-02-15T01:00:01Z] dump payload=")
	fl := NewFollower(path, 0)
	defer fl.Close()
	var all []model.LogEntry
	pollAll := func() {
		for {
			e, _, _, err := fl.Poll()
			if err != nil {
				t.Fatal(err)
			}
			all = Append(all, e)
			if cap(fl.s.head) > MaxLineBytes+1+4096 {
				t.Fatalf("follower holds %d bytes of an unfinished line", cap(fl.s.head))
			}
			if !fl.More() {
				return
			}
		}
	}
	pollAll()
	chunk := strings.Repeat("p", 1<<20)
	for i := 0; i < 50; i++ {
		appendFile(t, path, chunk)
		if i%10 == 0 {
			pollAll()
		}
	}
	appendFile(t, path, "\r\n[2026-02-15T01:00:02Z] after\n")
	pollAll()
	if len(all) != 3 || all[2].Message != "after" {
		t.Fatalf("entries: %q", messages(all))
	}
	total := len("[2026-02-15T01:00:01Z] dump payload=") + 50<<20
	if msg := all[1].Message; !strings.HasSuffix(msg, elisionMarker(total-MaxLineBytes)) {
		t.Fatalf("huge line suffix %q", msg[len(msg)-40:])
	}
}

// TestReadTailThenFollow: the dashboard's pattern, tail then follow from the returned size; nothing lost
// or repeated while a writer appends in between.
func TestReadTailThenFollow(t *testing.T) {
	path := writeFile(t, t.TempDir(), "run.log", realisticLog(200<<10, 14, 0))
	tail, size, err := ReadTail(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	more := realisticLog(300<<10, 15, 0)
	appendFile(t, path, more)
	fl := NewFollower(path, size)
	defer fl.Close()
	r := poll(t, fl)
	got := Append(tail, r.entries)
	content, _ := os.ReadFile(path)
	whole, _ := ParseEntries(content, 0)
	if !sameEntries(got, whole[len(whole)-len(got):]) {
		t.Fatal("tail + follow differs from the end of a full parse")
	}
}

// TestIndexConcurrentUse runs readers, Refresh and appends together under the race detector.
func TestIndexConcurrentUse(t *testing.T) {
	path := writeFile(t, t.TempDir(), "run.log", realisticLog(4<<20, 16, 0))
	x := openIndex(t, path)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			re := regexp.MustCompile("(?i)blocked")
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := x.Len()
				x.Lines(n-30, 30)
				x.Lines(n/2, 10)
				x.EntryStart(n - 1)
				x.Renumbered()
				x.Progress()
				x.Search(re, max(0, n-1), false)
			}
		}()
	}
	for i := 0; i < 30; i++ {
		appendFile(t, path, realisticLog(20<<10, int64(100+i), 0))
		if _, err := x.Refresh(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	waitIndex(t, x)
	content, _ := os.ReadFile(path)
	want := splitLines(string(content))
	checkLines(t, x, want, [][2]int{{0, 20}, {len(want) / 2, 20}, {len(want) - 20, 20}})
	if err := x.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}
