package runlog

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"runwatch/model"
)

// The large-file benchmarks share one generated log of benchSize bytes (realistic entries, see
// realisticLog), kept between runs at $RUNLOG_BENCH_FILE or in the temp dir, because writing 1 GiB takes
// longer than any benchmark here. Numbers are with the file in the page cache.
const benchSize = 1 << 30

func benchLog(b *testing.B) string {
	b.Helper()
	path := os.Getenv("RUNLOG_BENCH_FILE")
	if path == "" {
		path = filepath.Join(os.TempDir(), "runwatch-runlog-bench-1g.log")
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() >= benchSize {
		return path
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	writeRealisticLog(w, benchSize, 42, 20<<10)
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path
}

func BenchmarkReadTail2000(b *testing.B) {
	path := benchLog(b)
	b.ReportAllocs()
	for b.Loop() {
		entries, _, err := ReadTail(path, 2000)
		if err != nil || len(entries) != 2000 {
			b.Fatalf("%d entries, %v", len(entries), err)
		}
	}
}

// BenchmarkIndexOpenTail: open a 1 GiB log and read the 50 lines a timeline shows at its end.
func BenchmarkIndexOpenTail(b *testing.B) {
	path := benchLog(b)
	b.ReportAllocs()
	for b.Loop() {
		x, err := OpenIndex(path)
		if err != nil {
			b.Fatal(err)
		}
		if lines := x.Lines(x.Len()-50, 50); len(lines) != 50 {
			b.Fatalf("%d lines", len(lines))
		}
		b.StopTimer()
		x.Close()
		b.StartTimer()
	}
}

// BenchmarkIndexCount: the background count of a whole 1 GiB log, until line numbers are exact.
func BenchmarkIndexCount(b *testing.B) {
	path := benchLog(b)
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	for b.Loop() {
		x, err := OpenIndex(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := x.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		x.mu.Lock()
		marks := len(x.head.marks) + len(x.tail.marks)
		x.mu.Unlock()
		b.ReportMetric(float64(x.Len()), "lines")
		b.ReportMetric(float64(marks*16), "index-bytes") // a mark is an int and an int64
		x.Close()
	}
}

// benchSearch times a search that finds nothing, so every byte of the log is searched: forward from the
// first line, or backward from the last.
func benchSearch(b *testing.B, pattern string, forward bool) {
	path := benchLog(b)
	x, err := OpenIndex(path)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	if err := x.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	re := regexp.MustCompile(pattern)
	from := 0
	if !forward {
		from = x.Len() - 1
	}
	b.SetBytes(x.Size())
	for b.Loop() {
		if line, ok := x.Search(re, from, forward); ok {
			b.Fatalf("unexpected match at line %d", line)
		}
	}
}

func BenchmarkSearchLiteral(b *testing.B)    { benchSearch(b, "no_such_event", true) }
func BenchmarkSearchIgnoreCase(b *testing.B) { benchSearch(b, "(?i)no_such_event", true) }
func BenchmarkSearchAlternation(b *testing.B) {
	benchSearch(b, "(?i)(segfault|oom-killed|\\bno_such=)", true)
}
func BenchmarkSearchBackward(b *testing.B) { benchSearch(b, "(?i)no_such_event", false) }
func BenchmarkSearchRegexpAnchoredNoLiteral(b *testing.B) {
	benchSearch(b, "^[a-z]{40}$", true)
}

// BenchmarkSearchRegexpRareLiteral: only a one-byte literal to look for first.
func BenchmarkSearchRegexpRareLiteral(b *testing.B) { benchSearch(b, "[0-9]{7}q", true) }

// BenchmarkSearchRegexpNoLiteral is the slow case: no literal at all, so every line goes through the
// regexp engine.
func BenchmarkSearchRegexpNoLiteral(b *testing.B) { benchSearch(b, "[0-9]{9}[g-z]", true) }

// BenchmarkNextErrorFromTop: e from the first line of the 1 GiB log.
func BenchmarkNextErrorFromTop(b *testing.B) {
	path := benchLog(b)
	x, err := OpenIndex(path)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	x.Wait(context.Background())
	for b.Loop() {
		if _, ok := x.NextLevel(0, model.LevelError, true); !ok {
			b.Fatal("no error entry")
		}
	}
}

func BenchmarkParseEntries(b *testing.B) {
	data := []byte(realisticLog(8<<20, 11, 0))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		ParseEntries(data, 0)
	}
}

// BenchmarkFollowerPoll: one poll picking up 1 MiB appended since the last.
func BenchmarkFollowerPoll(b *testing.B) {
	chunk := realisticLog(1<<20, 12, 0)
	path := filepath.Join(b.TempDir(), "run.log")
	if err := os.WriteFile(path, []byte(chunk), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		fl := NewFollower(path, 0)
		if entries, _, _, err := fl.Poll(); err != nil || len(entries) == 0 {
			b.Fatal(err)
		}
		fl.Close()
	}
}

// BenchmarkStageStartOrder: the bounded head+tail read done for every resumable run at startup, on a log
// longer than both windows and full of stage_start lines (about 40% of its entries: a worst case).
func BenchmarkStageStartOrder(b *testing.B) { benchStageStartOrder(b, 8<<20) }

// BenchmarkStageStartOrderSmall: a typical log of a few hundred entries.
func BenchmarkStageStartOrderSmall(b *testing.B) { benchStageStartOrder(b, 32<<10) }

func benchStageStartOrder(b *testing.B, size int) {
	path := filepath.Join(b.TempDir(), "run.log")
	if err := os.WriteFile(path, []byte(realisticLog(size, 18, 0)), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ids := startOrder(path); len(ids) == 0 {
			b.Fatal("no stages")
		}
	}
}

// BenchmarkReadStageTail: status's look at a run.log whose stage order the files settle, on a log of a few
// hundred realistic entries (32 KiB), which it reads whole.
func BenchmarkReadStageTail(b *testing.B) {
	path := filepath.Join(b.TempDir(), "run.log")
	if err := os.WriteFile(path, []byte(realisticLog(32<<10, 18, 0)), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ev, ok := ReadStageTail(path); !ok || len(ev.Latest) == 0 {
			b.Fatal("no stages")
		}
	}
}

// BenchmarkNextErrorNone: e on a 64 MiB log with no error entry at all, so every byte is looked at (the
// level words are looked for as literals; only lines holding one are parsed).
func BenchmarkNextErrorNone(b *testing.B) {
	content := realisticLog(64<<20, 20, 0)
	content = strings.NewReplacer("stage_blocked", "stage_waiting", "FAILED", "passed").Replace(content)
	path := filepath.Join(b.TempDir(), "run.log")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	x, err := OpenIndex(path)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	x.Wait(context.Background())
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if line, ok := x.NextLevel(0, model.LevelError, true); ok {
			b.Fatalf("unexpected error entry at line %d", line)
		}
	}
}

// BenchmarkFindVsGrep compares Find and Counter with `grep -c` on the same cached 1 GiB log in the same run
// (issue 14's goal: at least half of grep's speed). Each pair reads every byte: a pattern that is not in
// the log (Find reads both halves of its wrap-around), and a count of a common one (grep -c counts lines
// too). Smart case makes a lower-case pattern case-insensitive, so that pair runs grep with -i.
func BenchmarkFindVsGrep(b *testing.B) {
	path := benchLog(b)
	grep, err := exec.LookPath("grep")
	if err != nil {
		b.Skip("no grep")
	}
	x, err := OpenIndex(path)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	if err := x.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	size := x.Size()
	runGrep := func(b *testing.B, args ...string) {
		b.SetBytes(size)
		for b.Loop() {
			out, err := exec.Command(grep, append(args, path)...).Output()
			var ee *exec.ExitError
			if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: no line matched
				b.Fatal(err)
			}
			_ = out
		}
	}
	find := func(b *testing.B, pattern string, forward bool) {
		re, err := CompilePattern(pattern, false)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(size)
		for b.Loop() {
			if _, err := x.Find(context.Background(), re, x.Len()/2, forward, nil); !errors.Is(err, ErrNoMatch) {
				b.Fatal(err)
			}
		}
	}
	count := func(b *testing.B, pattern string) {
		re, err := CompilePattern(pattern, false)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(size)
		for b.Loop() {
			c := x.NewCounter(re)
			if err := c.Run(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
			n, _ := c.Total()
			b.ReportMetric(float64(n), "matches")
		}
	}
	b.Run("grep-c/no_such_event", func(b *testing.B) { runGrep(b, "-c", "no_such_event") })
	b.Run("Find/NO_SUCH_EVENT/forward", func(b *testing.B) { find(b, "NO_SUCH_EVENT", true) })
	b.Run("grep-ci/zqxj", func(b *testing.B) { runGrep(b, "-ci", "zqxj") })
	b.Run("Find/zqxj/forward", func(b *testing.B) { find(b, "zqxj", true) })
	b.Run("Find/zqxj/backward", func(b *testing.B) { find(b, "zqxj", false) })
	b.Run("grep-ci/stage_blocked", func(b *testing.B) { runGrep(b, "-ci", "stage_blocked") })
	b.Run("Counter/stage_blocked", func(b *testing.B) { count(b, "stage_blocked") })
	b.Run("EntryFilter/stage_blocked", func(b *testing.B) {
		re, err := CompilePattern("stage_blocked", false)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(size)
		for b.Loop() {
			f := x.NewEntryFilter(re)
			if err := f.Run(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
			lines, entries, _ := f.Len()
			b.ReportMetric(float64(entries), "entries")
			b.ReportMetric(float64(lines), "lines")
		}
	})
}
