package runlog

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"runwatch/model"
)

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// genLog writes n entries, every third with two continuation lines, and returns the content.
func genLog(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "[2026-02-15T%02d:%02d:%02dZ] stage_start stage=S%d n=%d\n", i/3600%24, i/60%60, i%60, i, i)
		if i%3 == 0 {
			fmt.Fprintf(&b, "  artifact=/runs/r/artifacts/s%d/out.json\n  sha256=%064x\n", i, i)
		}
	}
	return b.String()
}

func TestReadTailMatchesFullParse(t *testing.T) {
	dir := t.TempDir()
	content := genLog(5000) // ~600 KB: many 64 KiB chunk boundaries
	path := writeFile(t, dir, "run.log", content)
	whole, _ := ParseEntries([]byte(content), 0)
	for _, n := range []int{1, 2, 3, 100, 1234, 4999, 5000, 6000} {
		got, size, err := ReadTail(path, n)
		if err != nil {
			t.Fatal(err)
		}
		if size != int64(len(content)) {
			t.Fatalf("size = %d, want %d", size, len(content))
		}
		want := whole[max(0, len(whole)-n):]
		if !sameEntries(got, want) {
			t.Fatalf("ReadTail(%d): got %d entries (first %q), want %d (first %q)", n, len(got), got[0].Message, len(want), want[0].Message)
		}
	}
}

// TestReadTailChunkBoundaries puts an entry start, a timestamp and a continuation line right across every
// position near a 64 KiB chunk boundary.
func TestReadTailChunkBoundaries(t *testing.T) {
	dir := t.TempDir()
	tailEntries := "[2026-02-15T01:00:00Z] stage_complete stage=S1\n  next_stage=S2\n  commit=abc def\n[2026-02-15T01:00:01Z] lock_released run_id=r\n"
	for shift := -60; shift <= 60; shift++ {
		pad := tailChunk - len(tailEntries) + shift
		head := "[2026-02-15T00:00:00Z] first\n" + strings.Repeat("  filler=x\n", pad/10) + strings.Repeat("y", pad%10) + "\n"
		content := head + tailEntries
		path := writeFile(t, dir, "run.log", content)
		whole, _ := ParseEntries([]byte(content), 0)
		for n := 1; n <= 3; n++ {
			got, _, err := ReadTail(path, n)
			if err != nil {
				t.Fatal(err)
			}
			if !sameEntries(got, whole[max(0, len(whole)-n):]) {
				t.Fatalf("shift %d n %d: got %+v", shift, n, got)
			}
		}
	}
}

func TestReadTailNoTrailingNewline(t *testing.T) {
	content := "[2026-02-15T01:00:00Z] a\n[2026-02-15T01:00:01Z] lock_released run_id=r"
	path := writeFile(t, t.TempDir(), "run.log", content)
	got, size, err := ReadTail(path, 5)
	if err != nil || len(got) != 2 || got[1].Event != "lock_released" || size != int64(len(content)) {
		t.Fatalf("got %+v size %d err %v", got, size, err)
	}
}

func TestReadTailEmptyAndZero(t *testing.T) {
	path := writeFile(t, t.TempDir(), "run.log", "")
	got, size, err := ReadTail(path, 10)
	if err != nil || len(got) != 0 || size != 0 {
		t.Fatalf("empty: %v %d %v", got, size, err)
	}
	path = writeFile(t, t.TempDir(), "run.log", "[2026-02-15T01:00:00Z] a\n")
	if got, _, err := ReadTail(path, 0); err != nil || len(got) != 0 {
		t.Fatalf("maxEntries 0: %v %v", got, err)
	}
}

func TestReadTailOnlyContinuations(t *testing.T) {
	path := writeFile(t, t.TempDir(), "run.log", "free text\n  more\n")
	got, _, err := ReadTail(path, 3)
	want := []model.LogEntry{{Message: "free text", Continuation: []string{"  more"}}}
	if err != nil || !sameEntries(got, want) {
		t.Fatalf("got %+v err %v", got, err)
	}
}

// TestReadTailHugeLine: a 50 MiB line is read in bounded pieces and capped, not loaded whole.
func TestReadTailHugeLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "[2026-02-15T01:00:00Z] dump payload=")
	chunk := []byte(strings.Repeat("z", 1<<20))
	for i := 0; i < 50; i++ {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Fprintf(f, "\n[2026-02-15T01:00:01Z] after\n")
	f.Close()
	got, _, err := ReadTail(path, 2)
	if err != nil || len(got) != 2 {
		t.Fatalf("got %d entries err %v", len(got), err)
	}
	total := len("dump payload=") + len("[2026-02-15T01:00:00Z] ") + 50<<20
	msg := got[0].Message
	if !strings.HasSuffix(msg, elisionMarker(total-MaxLineBytes)) || len(msg) > MaxLineBytes+40 {
		t.Fatalf("huge line: %d bytes, suffix %q", len(msg), msg[max(0, len(msg)-40):])
	}
	if got[1].Message != "after" {
		t.Fatalf("entry after the huge line = %q", got[1].Message)
	}
}

func TestRefusesFIFOAndDevZero(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.log")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	zero := filepath.Join(dir, "zero.log")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, zero, dir} {
		done := make(chan error, 1)
		go func() {
			_, _, err := ReadTail(p, 10)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), p) {
				t.Errorf("%s: err = %v", p, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: ReadTail blocked", p)
		}
		if order := startOrder(p); order != nil {
			t.Errorf("StageStartOrder(%s) = %v", p, order)
		}
	}
	if _, _, err := ReadTail(filepath.Join(dir, "missing.log"), 1); !os.IsNotExist(err) {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestStageStartOrder(t *testing.T) {
	dir := t.TempDir()
	content := "[2026-02-15T01:00:00Z] run_bootstrap mode=resume-auto\n" +
		"[2026-02-15T01:00:01Z] stage_start stage=INGEST\n" +
		"  note=stage_start stage=FAKE\n" +
		"[2026-02-15T01:00:02Z] stage-start stage=parse\n" +
		"[2026-02-15T01:00:03Z] restart requested\n" +
		"[2026-02-15T01:00:04Z] stage_start stage=INGEST\n" +
		"[2026-02-15T01:00:05Z] S4 start\n"
	path := writeFile(t, dir, "run.log", content)
	if got, want := startOrder(path), []string{"INGEST", "parse", "S4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
	if got := startOrder(filepath.Join(dir, "none.log")); got != nil {
		t.Errorf("missing log: %v", got)
	}
}

// TestStageStartOrderReadsOnlyEnds: starts in the middle of a big log are not seen, those at both ends are.
func TestStageStartOrderReadsOnlyEnds(t *testing.T) {
	var b strings.Builder
	b.WriteString("[2026-02-15T01:00:00Z] stage_start stage=HEAD\n")
	filler := "[2026-02-15T01:00:01Z] progress step=1 detail=" + strings.Repeat("x", 60) + "\n"
	for b.Len() < 2*stageWindow {
		b.WriteString(filler)
	}
	b.WriteString("[2026-02-15T01:00:02Z] stage_start stage=MIDDLE\n")
	for b.Len() < 4*stageWindow {
		b.WriteString(filler)
	}
	b.WriteString("[2026-02-15T01:00:03Z] stage_start stage=TAIL\n")
	path := writeFile(t, t.TempDir(), "run.log", b.String())
	if got, want := startOrder(path), []string{"HEAD", "TAIL"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}

// TestStageStartOrderFollowsAppends: later looks read only what was appended, finish a line that was partial,
// and start over when the log was truncated.
func TestStageStartOrderFollowsAppends(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "run.log", "[2026-02-15T01:00:01Z] stage_start stage=ingest\n[2026-02-15T01:00:02Z] stage_st")
	if got := startOrder(path); !reflect.DeepEqual(got, []string{"ingest"}) {
		t.Fatalf("first look: %v", got)
	}
	appendTo := func(s string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	appendTo("art stage=extract\n[2026-02-15T01:00:03Z] stage_start stage=ingest\n[2026-02-15T01:00:04Z] stage_start stage=publish\n")
	if got, want := startOrder(path), []string{"ingest", "extract", "publish"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after append: %v, want %v (the partial line completed)", got, want)
	}
	if err := os.WriteFile(path, []byte("[2026-02-15T02:00:00Z] stage_start stage=verify\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := startOrder(path); !reflect.DeepEqual(got, []string{"verify"}) {
		t.Fatalf("after truncation: %v", got)
	}
}

// TestStageStartOrderRereadCostsTheAppendOnly: a re-look after a one-line append to an 8 MiB log reads that
// line, not the two 1 MiB windows. Counted in bytes (rchar), not timed.
func TestStageStartOrderRereadCostsTheAppendOnly(t *testing.T) {
	var b strings.Builder
	b.WriteString("[2026-02-15T01:00:00Z] stage_start stage=HEAD\n")
	filler := "[2026-02-15T01:00:01Z] progress step=1 detail=" + strings.Repeat("x", 60) + "\n"
	for b.Len() < 8*stageWindow {
		b.WriteString(filler)
	}
	path := writeFile(t, t.TempDir(), "run.log", b.String())
	startOrder(path)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[2026-02-15T01:00:02Z] stage_start stage=NEXT\n")
	f.Close()
	before := rchar(t)
	got := startOrder(path)
	read := rchar(t) - before
	if !reflect.DeepEqual(got, []string{"HEAD", "NEXT"}) {
		t.Fatalf("order %v", got)
	}
	if read > 64<<10 {
		t.Fatalf("re-look read %d bytes for a one-line append", read)
	}
}

func rchar(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Skip("no rchar")
	return 0
}

// startOrder is the stage ids of stage_start entries in order of first appearance, as ReadStageEvidence
// reads them; nil when it reads no log.
func startOrder(path string) []string {
	ev, ok := ReadStageEvidence(path)
	if !ok {
		return nil
	}
	return ev.Starts
}
