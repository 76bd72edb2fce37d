package runlog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"runwatch/model"
)

// realisticLog returns a log in the shape of docs/FORMATS.md B.5 of at least size bytes: entries with
// continuation blocks, blocked stages and failures, stale locks, completions, CRLF lines, and now and then
// a long line (longLine bytes; 0 for none).
func realisticLog(size int, seed int64, longLine int) string {
	var b strings.Builder
	writeRealisticLog(&b, int64(size), seed, longLine)
	return b.String()
}

// countingWriter counts what goes through it, so the generator can stop at a size on any writer.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func writeRealisticLog(w io.Writer, size int64, seed int64, longLine int) {
	rng := rand.New(rand.NewSource(seed))
	b := &countingWriter{w: w}
	t := time.Date(2026, 2, 15, 1, 0, 0, 0, time.UTC)
	for i := 0; b.n < size; i++ {
		t = t.Add(time.Duration(rng.Intn(5)) * time.Second)
		ts := t.Format("[2006-01-02T15:04:05Z] ")
		stage := fmt.Sprintf("S%d", rng.Intn(40))
		switch k := rng.Intn(100); {
		case k < 40:
			fmt.Fprintf(b, "%sstage_start stage=%s run_id=20260215T014733Z\n", ts, stage)
		case k < 55:
			fmt.Fprintf(b, "%s%s artifact integrity\n  artifact=/cfg/reports/irm/artifacts/%s/out-%d.json\n  sha256=%064x\n  size_bytes=%d\n",
				ts, stage, strings.ToLower(stage), i, rng.Uint64(), rng.Intn(100000))
		case k < 70:
			fmt.Fprintf(b, "%s%s complete\n  next_stage=S%d\n  commit=%07x Refactor the %s step\n", ts, stage, rng.Intn(40), rng.Intn(1<<28), stage)
		case k < 75:
			fmt.Fprintf(b, "%sstage_blocked stage=%s failed_metrics=coverage,latency\n", ts, stage)
		case k < 78:
			fmt.Fprintf(b, "%sstale_lock_replaced payload={\"host\": \"h\", \"pid\": %d}\r\n", ts, rng.Intn(99999))
		case k < 80:
			fmt.Fprintf(b, "%sverify: 3 tests FAILED in %s\n    at module.py:%d\n", ts, stage, rng.Intn(900))
		case k < 81 && longLine > 0:
			fmt.Fprintf(b, "%sdump payload=%s\n", ts, strings.Repeat("0123456789abcdef", longLine/16))
		case k < 82:
			fmt.Fprintf(b, "agent output without a timestamp %d\n", i)
		default:
			fmt.Fprintf(b, "%slock_acquired pid=%d run_id=20260215T014733Z host=oss-work\n", ts, rng.Intn(99999))
		}
	}
}

// splitLines is the oracle: the file's lines as the index must return them.
func splitLines(content string) []string {
	if content == "" {
		return nil
	}
	lines := strings.Split(content, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = lineText([]byte(l), len(l))
	}
	return lines
}

func openIndex(t *testing.T, path string) *Index {
	t.Helper()
	x, err := OpenIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func waitIndex(t *testing.T, x *Index) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := x.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

func checkLines(t *testing.T, x *Index, want []string, windows [][2]int) {
	t.Helper()
	if x.Len() != len(want) {
		t.Fatalf("Len = %d, want %d", x.Len(), len(want))
	}
	for _, w := range windows {
		from, n := w[0], w[1]
		got := x.Lines(from, n)
		lo, hi := min(max(0, from), len(want)), min(max(0, from)+n, len(want))
		if !slices.Equal(got, want[lo:hi]) {
			t.Fatalf("Lines(%d, %d): got %d lines, want %d; first diff at %d", from, n, len(got), hi-lo, firstDiff(got, want[lo:hi]))
		}
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestIndexSmallFile(t *testing.T) {
	content := sampleLog + "[2026-02-15T02:00:08Z] unfinished"
	path := writeFile(t, t.TempDir(), "run.log", content)
	x := openIndex(t, path)
	if !x.Exact() {
		t.Fatal("a small file should be exact at once")
	}
	want := splitLines(content)
	checkLines(t, x, want, [][2]int{{0, 5}, {0, 1000}, {len(want) - 3, 10}, {-5, 3}, {len(want), 2}})
}

func TestIndexLargeFileTailFirstThenExact(t *testing.T) {
	content := realisticLog(12<<20, 1, 300<<10)
	path := writeFile(t, t.TempDir(), "run.log", content)
	want := splitLines(content)
	x := openIndex(t, path)
	// The tail is there at once, whatever the numbering.
	if got := x.Tail(50); !slices.Equal(got, want[len(want)-50:]) {
		t.Fatalf("tail before the count: first diff at %d", firstDiff(got, want[len(want)-50:]))
	}
	// Len and the shift Renumbered reports add up to the true count, however the background count
	// interleaves with the calls (when it finished before Len, Len is already exact).
	n := x.Len()
	shift := x.Renumbered()
	waitIndex(t, x)
	if !x.Exact() {
		t.Fatal("not exact after Wait")
	}
	shift += x.Renumbered()
	if n != len(want) && n+shift != len(want) {
		t.Fatalf("provisional Len %d + shift %d != %d", n, shift, len(want))
	}
	windows := [][2]int{{0, 100}, {len(want) - 100, 200}}
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 50; i++ {
		windows = append(windows, [2]int{rng.Intn(len(want)), 1 + rng.Intn(300)})
	}
	checkLines(t, x, want, windows)
}

// TestIndexHugeLines: lines far longer than the read buffer and the cap, including the first and last.
func TestIndexHugeLines(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	content := big + "\n[2026-02-15T01:00:00Z] a\n" + strings.Repeat("y", 200<<10) + "\r\n" + realisticLog(3<<20, 3, 0) + big + "z\n" + "tail " + big
	path := writeFile(t, t.TempDir(), "run.log", content)
	want := splitLines(content)
	x := openIndex(t, path)
	waitIndex(t, x)
	checkLines(t, x, want, [][2]int{{0, 3}, {1, 1}, {2, 1}, {len(want) - 3, 3}, {len(want) - 1, 1}})
}

func TestIndexRefreshAppendTruncateRotate(t *testing.T) {
	dir := t.TempDir()
	content := realisticLog(3<<20, 4, 0) + "[2026-02-15T09:00:00Z] unfini"
	path := writeFile(t, dir, "run.log", content)
	x := openIndex(t, path)
	waitIndex(t, x)
	before := x.Len()

	appendFile(t, path, "shed\n[2026-02-15T09:00:01Z] next\n")
	content += "shed\n[2026-02-15T09:00:01Z] next\n"
	if truncated, err := x.Refresh(); truncated || err != nil {
		t.Fatalf("Refresh after append: %v %v", truncated, err)
	}
	waitIndex(t, x)
	if x.Len() != before+1 {
		t.Fatalf("Len after completing the partial line and adding one: %d, want %d", x.Len(), before+1)
	}
	want := splitLines(content)
	checkLines(t, x, want, [][2]int{{len(want) - 3, 3}})

	more := realisticLog(2<<20, 5, 0)
	appendFile(t, path, more)
	content += more
	x.Refresh()
	waitIndex(t, x)
	want = splitLines(content)
	checkLines(t, x, want, [][2]int{{0, 10}, {before - 5, 50}, {len(want) - 20, 20}})

	if err := os.Truncate(path, 100); err != nil {
		t.Fatal(err)
	}
	if truncated, err := x.Refresh(); !truncated || err != nil {
		t.Fatalf("Refresh after truncate: %v %v", truncated, err)
	}
	waitIndex(t, x)
	checkLines(t, x, splitLines(content[:100]), [][2]int{{0, 10}})

	// Rewritten in place to the same length: caught by the bytes before the end.
	f, _ := os.OpenFile(path, os.O_WRONLY, 0)
	f.WriteAt([]byte(strings.Repeat("w", 99)+"\n"), 0)
	f.Close()
	if truncated, _ := x.Refresh(); !truncated {
		t.Fatal("in-place rewrite not detected")
	}

	rotated := "[2026-02-15T10:00:00Z] fresh file\n"
	writeFile(t, dir, "run.log.new", rotated)
	if err := os.Rename(filepath.Join(dir, "run.log.new"), path); err != nil {
		t.Fatal(err)
	}
	if truncated, err := x.Refresh(); !truncated || err != nil {
		t.Fatalf("Refresh after rotation: %v %v", truncated, err)
	}
	checkLines(t, x, []string{"[2026-02-15T10:00:00Z] fresh file"}, [][2]int{{0, 5}})
}

// naiveSearch is the oracle for Search: the timeline's own in-memory rule, over a precomputed match set.
func naiveSearch(matches []bool, from int, forward bool) (int, bool) {
	for i := from; i >= 0 && i < len(matches); {
		if matches[i] {
			return i, true
		}
		if forward {
			i++
		} else {
			i--
		}
	}
	return 0, false
}

// openIndexSmallChunks is openIndex whose searches read 64 KiB pieces, so a small file crosses many piece
// boundaries.
func openIndexSmallChunks(t *testing.T, path string) *Index {
	t.Helper()
	x := openIndex(t, path)
	x.chunk = 64 << 10
	return x
}

func TestIndexSearchMatchesNaive(t *testing.T) {
	t.Parallel()
	content := realisticLog(1<<20, 6, 100<<10) + "K\u212aelvin line\nlast line with ERROR\n"
	path := writeFile(t, t.TempDir(), "run.log", content)
	lines := splitLines(content)
	x := openIndexSmallChunks(t, path)
	patterns := []string{
		"stage_blocked",
		"(?i)error",
		"(?i)(blocked|error|\\berr=|fail|panic|fatal)",
		"(?i)stale_lock",
		"^agent output",
		"pid=\\d{5}$",
		"S3[0-9] complete",
		"(?i)\u212a",  // only the Kelvin line matches the folded k
		"(?i)kelvin",  // Unicode folding: must find K\u212aelvin too
		"never-there", // no match at all
		"x{0}",        // empty match: every line
	}
	rng := rand.New(rand.NewSource(7))
	froms := []int{0, 1, len(lines) - 1, len(lines) / 2}
	for i := 0; i < 4; i++ {
		froms = append(froms, rng.Intn(len(lines)))
	}
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		matches := make([]bool, len(lines))
		for i, l := range lines {
			matches[i] = re.MatchString(l)
		}
		for _, from := range froms {
			for _, forward := range []bool{true, false} {
				wantLine, wantOK := naiveSearch(matches, from, forward)
				gotLine, gotOK := x.Search(re, from, forward)
				if gotLine != wantLine || gotOK != wantOK {
					t.Fatalf("Search(%q, %d, %v) = %d %v, want %d %v", p, from, forward, gotLine, gotOK, wantLine, wantOK)
				}
			}
		}
	}
}

func TestIndexNextLevelAndEntryStart(t *testing.T) {
	t.Parallel()
	content := "  leading continuation\n" + realisticLog(2<<20, 8, 0)
	path := writeFile(t, t.TempDir(), "run.log", content)
	lines := splitLines(content)
	x := openIndexSmallChunks(t, path)
	waitIndex(t, x)
	// Oracle: the level of every entry-start line, from ParseEntries over the whole file.
	entries, _ := ParseEntries([]byte(content), 0)
	levelAt := map[int]model.Level{}
	starts := map[int]bool{}
	offsets := map[int64]int{}
	var off int64
	for i, l := range strings.SplitAfter(content, "\n") {
		offsets[off] = i
		off += int64(len(l))
	}
	for _, e := range entries {
		levelAt[offsets[e.Offset]] = e.Level
		if e.HasTime {
			starts[offsets[e.Offset]] = true
		}
	}
	rng := rand.New(rand.NewSource(9))
	for _, level := range []model.Level{model.LevelError, model.LevelWarn, model.LevelGood} {
		matches := make([]bool, len(lines))
		for i := range lines {
			matches[i] = starts[i] && levelAt[i] == level
		}
		for k := 0; k < 10; k++ {
			from := rng.Intn(len(lines))
			for _, forward := range []bool{true, false} {
				wantLine, wantOK := naiveSearch(matches, from, forward)
				gotLine, gotOK := x.NextLevel(from, level, forward)
				if gotOK != wantOK || (wantOK && gotLine != wantLine) {
					t.Fatalf("NextLevel(%d, %s, %v) = %d %v, want %d %v", from, level, forward, gotLine, gotOK, wantLine, wantOK)
				}
			}
		}
	}
	for k := 0; k < 200; k++ {
		line := rng.Intn(len(lines))
		want := line
		for want > 0 && !starts[want] {
			want--
		}
		if got := x.EntryStart(line); got != want {
			t.Fatalf("EntryStart(%d) = %d, want %d", line, got, want)
		}
	}
}

func TestOpenIndexRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.log")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	zero := filepath.Join(dir, "zero.log")
	os.Symlink("/dev/zero", zero)
	for _, p := range []string{fifo, zero} {
		if _, err := OpenIndex(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: err = %v", p, err)
		}
	}
}

func TestFoldASCII(t *testing.T) {
	src := make([]byte, 1000)
	rand.New(rand.NewSource(10)).Read(src)
	copy(src, "Hello WORLD [Z@` az AZ")
	dst := make([]byte, len(src))
	foldASCII(dst, src)
	for i, c := range src {
		want := c
		if c >= 'A' && c <= 'Z' {
			want = c + 32
		}
		if dst[i] != want {
			t.Fatalf("byte %d: %#x folded to %#x, want %#x", i, c, dst[i], want)
		}
	}
	if !bytes.HasPrefix(dst, []byte("hello world [z@` az az")) {
		t.Fatalf("prefix %q", dst[:22])
	}
}

// TestIndexNumberingSwitchesOnlyInLen: a viewer that took Len keeps getting lines in that numbering from
// Lines even after the background count is done, until it calls Len again.
func TestIndexNumberingSwitchesOnlyInLen(t *testing.T) {
	content := realisticLog(8<<20, 17, 0)
	path := writeFile(t, t.TempDir(), "run.log", content)
	want := splitLines(content)
	x := openIndex(t, path)
	n := x.Len()
	x.mu.Lock()
	for !x.counted {
		x.changed.Wait()
	}
	x.mu.Unlock()
	if got := x.Lines(n-50, 50); !slices.Equal(got, want[len(want)-50:]) {
		t.Fatalf("Lines after the count but before Len: first diff at %d", firstDiff(got, want[len(want)-50:]))
	}
	shift := x.Renumbered()
	if n+shift != len(want) || x.Len() != len(want) {
		t.Fatalf("Len %d + shift %d, now %d; want %d", n, shift, x.Len(), len(want))
	}
}

// TestIndexShrinksWhileCounting: the log is cut while the background count may still be reading it. The
// count then stops with an error naming the file (or finished before the cut); Refresh starts over.
func TestIndexShrinksWhileCounting(t *testing.T) {
	path := writeFile(t, t.TempDir(), "run.log", realisticLog(16<<20, 21, 0))
	x := openIndex(t, path)
	if err := os.Truncate(path, 1000); err != nil {
		t.Fatal(err)
	}
	if err := x.Wait(context.Background()); err != nil && !strings.Contains(err.Error(), path) {
		t.Fatalf("error does not name the file: %v", err)
	}
	if truncated, err := x.Refresh(); !truncated || err != nil {
		t.Fatalf("Refresh after the cut: %v %v", truncated, err)
	}
	waitIndex(t, x)
	content, _ := os.ReadFile(path)
	checkLines(t, x, splitLines(string(content)), [][2]int{{0, 100}})
}

// TestIndexRefreshShowsAppendAtOnce: after Refresh returns, Len and Lines include an ordinary append
// without waiting for the background indexer (a viewer redraws once per append).
func TestIndexRefreshShowsAppendAtOnce(t *testing.T) {
	content := realisticLog(3<<20, 22, 0)
	path := writeFile(t, t.TempDir(), "run.log", content)
	x := openIndex(t, path)
	for i := 0; i < 50; i++ {
		line := fmt.Sprintf("[2026-02-15T09:00:00Z] step seq=%d", i)
		appendFile(t, path, line+"\n")
		if _, err := x.Refresh(); err != nil {
			t.Fatal(err)
		}
		if got := x.Tail(1); len(got) != 1 || got[0] != line {
			t.Fatalf("after append %d the tail is %q", i, got)
		}
	}
}

// TestIndexCountBeforeAnyoneAskedShiftsNothing: when the background count finishes before any line number
// was handed out, no viewer holds an estimated number, so Renumbered must report no shift (a viewer adding a
// phantom shift would jump its cursor). Found as a timing flake of TestIndexNumberingSwitchesOnlyInLen.
func TestIndexCountBeforeAnyoneAskedShiftsNothing(t *testing.T) {
	content := realisticLog(8<<20, 17, 0)
	path := writeFile(t, t.TempDir(), "run.log", content)
	x := openIndex(t, path)
	x.mu.Lock()
	for !x.counted {
		x.changed.Wait()
	}
	x.mu.Unlock()
	if shift := x.Renumbered(); shift != 0 {
		t.Fatalf("Renumbered = %d before any number was handed out", shift)
	}
	if got, want := x.Len(), len(splitLines(content)); got != want {
		t.Fatalf("Len %d, want %d", got, want)
	}
}
