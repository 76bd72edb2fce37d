package runlog

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestCompilePatternLiteralSmartCaseRegex(t *testing.T) {
	cases := []struct {
		pattern string
		regex   bool
		yes, no []string
	}{
		{"stage_start", false, []string{"x STAGE_START y", "stage_start"}, []string{"stage-start"}},
		{"Stage", false, []string{"Stage 1"}, []string{"stage 1", "STAGE"}},
		{"a.b", false, []string{"xa.by"}, []string{"axb"}},                          // literal: the dot is a dot
		{"payload={", false, []string{"payload={\"a\": 1}"}, []string{"payload=["}}, // not a regexp error
		{"a.b", true, []string{"axb", "A.B"}, []string{"ab"}},
		{`pid=\d+`, true, []string{"PID=42"}, []string{"pid=x"}}, // \d is an escape, not upper case
		{`\S+Error`, true, []string{"xError"}, []string{"xerror"}},
	}
	for _, c := range cases {
		re, err := CompilePattern(c.pattern, c.regex)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		for _, s := range c.yes {
			if !re.MatchString(s) {
				t.Errorf("%q (regex %v) should match %q", c.pattern, c.regex, s)
			}
		}
		for _, s := range c.no {
			if re.MatchString(s) {
				t.Errorf("%q (regex %v) should not match %q", c.pattern, c.regex, s)
			}
		}
	}
	if _, err := CompilePattern("a(", true); err == nil || !strings.Contains(err.Error(), `"a("`) {
		t.Errorf("bad regexp: %v, want an error naming the pattern", err)
	}
	if _, err := CompilePattern("", false); err == nil {
		t.Error("empty pattern accepted")
	}
}

// findOracle is Find over the lines by brute force.
func findOracle(lines []string, re *regexp.Regexp, from int, forward bool) (Hit, bool) {
	h, err := FindLines(lines, re, from, forward)
	return h, err == nil
}

func TestFindWrapsBothDirections(t *testing.T) {
	t.Parallel()
	content := realisticLog(1<<20, 21, 100<<10) + "[2026-02-16T00:00:00Z] zqxj the only one\ntail line\n"
	content = "[2026-02-15T00:00:00Z] first zqxj-top line\n" + content
	path := writeFile(t, t.TempDir(), "run.log", content)
	lines := splitLines(content)
	x := openIndexSmallChunks(t, path)
	waitIndex(t, x)
	n := len(lines)
	ctx := context.Background()

	// The case: follow mode at the bottom, forward search for what is only at the top.
	re := regexp.MustCompile("zqxj-top")
	h, err := x.Find(ctx, re, n-1, true, nil)
	if err != nil || h.Line != 0 || !h.Wrapped {
		t.Fatalf("forward from the bottom: %+v %v, want line 0 wrapped", h, err)
	}
	// Backward from the top wraps to the bottom.
	re = regexp.MustCompile("tail line")
	h, err = x.Find(ctx, re, 0, false, nil)
	if err != nil || h.Line != n-1 || !h.Wrapped {
		t.Fatalf("backward from the top: %+v %v, want line %d wrapped", h, err, n-1)
	}
	// The line from is looked at first, and a search that finds it going round is not "wrapped" only when
	// it is ahead.
	h, err = x.Find(ctx, re, n-1, true, nil)
	if err != nil || h.Line != n-1 || h.Wrapped {
		t.Fatalf("match at from: %+v %v", h, err)
	}
	if _, err := x.Find(ctx, regexp.MustCompile("never-there"), 5, true, nil); !errors.Is(err, ErrNoMatch) {
		t.Fatalf("no match: %v", err)
	}

	rng := rand.New(rand.NewSource(3))
	for _, p := range []string{"stage_blocked", "(?i)failed", "sha256=", "^agent output", "zqxj", "S3[0-9] complete"} {
		re := regexp.MustCompile(p)
		for i := 0; i < 12; i++ {
			from := rng.Intn(n)
			for _, forward := range []bool{true, false} {
				want, ok := findOracle(lines, re, from, forward)
				got, err := x.Find(ctx, re, from, forward, nil)
				if ok != (err == nil) || (ok && got != want) {
					t.Fatalf("Find(%q, %d, %v) = %+v %v, want %+v %v", p, from, forward, got, err, want, ok)
				}
			}
		}
	}
}

func TestFindCancelledAndProgress(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "run.log", realisticLog(4<<20, 5, 0))
	x := openIndexSmallChunks(t, path)
	waitIndex(t, x)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var p Progress
	if _, err := x.Find(ctx, regexp.MustCompile("stage"), 0, true, &p); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled search: %v", err)
	}
	// A whole search that finds nothing reads every byte once: both halves of the wrap.
	p = Progress{}
	if _, err := x.Find(context.Background(), regexp.MustCompile("never-there"), x.Len()/2, false, &p); !errors.Is(err, ErrNoMatch) {
		t.Fatal(err)
	}
	if done, total := p.Bytes(); done != total || total != x.Size() {
		t.Fatalf("progress %d/%d, want %d/%d", done, total, x.Size(), x.Size())
	}
}

// TestCounterKnownMatches counts a log whose matches are known by construction, including matches in
// continuation lines, a long line split over search pieces that matches in each piece (one line, counted
// once), and an unfinished last line that grows.
func TestCounterKnownMatches(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	want := 0
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "[2026-02-15T01:%02d:%02dZ] entry %d\n", i/60%60, i%60, i)
		if i%7 == 0 {
			fmt.Fprintf(&b, "  continuation NEEDLE %d\n", i) // smart case: found by "needle"
			want++
		}
		if i%11 == 0 {
			b.WriteString("  other continuation\n")
		}
		if i == 2500 {
			// 200 KiB on one line, the needle in several 64 KiB pieces of it: one matching line.
			b.WriteString(strings.Repeat(strings.Repeat("x", 30<<10)+"needle", 7) + "\n")
			want++
		}
	}
	b.WriteString("[2026-02-15T02:00:00Z] unfinished needle")
	want++
	path := writeFile(t, t.TempDir(), "run.log", b.String())
	x := openIndexSmallChunks(t, path)
	waitIndex(t, x)
	re, err := CompilePattern("needle", false)
	if err != nil {
		t.Fatal(err)
	}
	c := x.NewCounter(re)
	if err := c.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n, done := c.Total(); n != want || !done {
		t.Fatalf("Total = %d %v, want %d done", n, done, want)
	}
	// The oracle is the uncapped lines: search and count see a line whole, not as the timeline shows it.
	rawLines := func(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }
	lines := rawLines(b.String())
	check := func() {
		t.Helper()
		rank := 0 // the oracle: matching lines in [0, i]
		for i, l := range lines {
			if re.MatchString(l) {
				rank++
			}
			if i%61 != 0 && i < len(lines)-3 {
				continue
			}
			if got, ok := c.Rank(i); !ok || got != rank {
				t.Fatalf("Rank(%d) = %d %v, want %d (lines %d, counted %d)", i, got, ok, rank, len(lines), c.Counted())
			}
		}
		if _, ok := c.Rank(len(lines)); ok {
			t.Fatal("Rank past the end answered")
		}
	}
	check()

	// The unfinished line gets its newline and more lines come: a second Run counts only what is new, and
	// the grown line is still one match.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	more := " and more needle\n[2026-02-15T02:00:01Z] needle again\nplain\n"
	if _, err := f.WriteString(more); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := x.Refresh(); err != nil {
		t.Fatal(err)
	}
	waitIndex(t, x)
	if err := c.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Total(); n != want+1 {
		t.Fatalf("after append Total = %d, want %d", n, want+1)
	}
	lines = rawLines(b.String() + more)
	check()
}

func firstDiffInt(a, b []int) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestLineBytesReachesEndOfHugeLine: the horizontal window over a 50 MiB line reads the bytes it shows,
// including the very end, without the rest of the line.
func TestLineBytesReachesEndOfHugeLine(t *testing.T) {
	dir := t.TempDir()
	huge := 50 << 20
	var b strings.Builder
	b.WriteString("[2026-02-15T01:00:00Z] before\n[2026-02-15T01:00:01Z] dump payload=")
	head := b.Len() - len("[2026-02-15T01:00:00Z] before\n")
	b.WriteString(strings.Repeat("0123456789abcdef", (huge-head-len("THE-END"))/16))
	b.WriteString("THE-END\r\n[2026-02-15T01:00:02Z] after\n")
	path := writeFile(t, dir, "run.log", b.String())
	x := openIndex(t, path)
	waitIndex(t, x)
	if x.Len() != 3 {
		t.Fatalf("Len = %d", x.Len())
	}
	_, total, err := x.LineBytes(1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	tail, total2, err := x.LineBytes(1, total-20, 80)
	if err != nil || total2 != total {
		t.Fatal(err, total2)
	}
	if !strings.HasSuffix(string(tail), "THE-END") || len(tail) != 20 {
		t.Fatalf("end of the line reads %q (%d bytes of %d)", tail, len(tail), total)
	}
	start, _, _ := x.LineBytes(1, 0, 30)
	if string(start) != "[2026-02-15T01:00:01Z] dump pa" {
		t.Fatalf("start reads %q", start)
	}
	last, _, _ := x.LineBytes(2, 0, 100)
	if string(last) != "[2026-02-15T01:00:02Z] after" {
		t.Fatalf("last line reads %q", last)
	}
}

// TestCounterMakesWayForFind: a count does not read while a Find runs (both scanning would leave no core
// for the UI on a small machine); it goes on once the Find is over.
func TestCounterMakesWayForFind(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "run.log", realisticLog(1<<20, 5, 0))
	x := openIndexSmallChunks(t, path)
	waitIndex(t, x)
	re := regexp.MustCompile("stage")
	c := x.NewCounter(re)
	x.finds.enter() // a Find in flight
	errc := make(chan error, 1)
	go func() { errc <- c.Run(context.Background(), nil) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		x.finds.mu.Lock()
		paused := x.finds.waiting
		x.finds.mu.Unlock()
		if paused == 1 {
			break
		}
		select {
		case err := <-errc:
			t.Fatalf("the count ran to its end (%v) while a find was in flight", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the count never paused for the find")
		}
	}
	if c.Counted() != 0 {
		t.Fatalf("the count read %d lines while a find ran", c.Counted())
	}
	x.finds.leave()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n, done := c.Total(); !done || n == 0 {
		t.Fatalf("count after the find: %d done=%v", n, done)
	}
	// A count paused for a find still stops when cancelled.
	x.finds.enter()
	defer x.finds.leave()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := x.NewCounter(re).Run(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled count: %v", err)
	}
}
