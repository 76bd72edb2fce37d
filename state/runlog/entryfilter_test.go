package runlog

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// entryOracle is the filtered view by brute force: the lines of every entry with a matching line.
func entryOracle(lines []string, re *regexp.Regexp) (shown []int, entries int) {
	var cur []int
	matched := false
	flush := func() {
		if matched {
			shown = append(shown, cur...)
			entries++
		}
		cur, matched = nil, false
	}
	for i, l := range lines {
		if i > 0 && strings.HasPrefix(l, "[2026-") {
			flush()
		}
		cur = append(cur, i)
		matched = matched || re.MatchString(l)
	}
	flush()
	return shown, entries
}

// entryLog writes entries with continuation lines; the needle is sometimes on the timestamped line,
// sometimes only in a continuation line, once in a line longer than a search piece, and on the unfinished
// last line.
func entryLog(seed int64, n int) string {
	r := rand.New(rand.NewSource(seed))
	var b strings.Builder
	b.WriteString("untimed preamble\n  needle in the preamble\n")
	for i := 0; i < n; i++ {
		head := "entry"
		if r.Intn(9) == 0 {
			head = "entry NEEDLE"
		}
		fmt.Fprintf(&b, "[2026-02-15T01:%02d:%02dZ] %s %d\n", i/60%60, i%60, head, i)
		for c := r.Intn(4); c > 0; c-- {
			if r.Intn(7) == 0 {
				fmt.Fprintf(&b, "  continuation with the needle %d\n", i)
			} else {
				fmt.Fprintf(&b, "  continuation %d\n", i)
			}
		}
		if i == n/2 {
			b.WriteString("  " + strings.Repeat("y", 150<<10) + " needle at the end of a long line\n")
		}
	}
	b.WriteString("[2026-02-15T02:00:00Z] last entry, unfinished needle")
	return b.String()
}

func splitRaw(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

// TestEntryFilterKeepsWholeEntries: "show only matches" keeps every line of an entry with a match
// anywhere in it (a continuation line included) and drops the others whole, over a file read in pieces
// and in memory, and again after the log grew (the unfinished last line finished, new entries).
func TestEntryFilterKeepsWholeEntries(t *testing.T) {
	t.Parallel()
	content := entryLog(3, 3000)
	path := writeFile(t, t.TempDir(), "run.log", content)
	x := openIndexSmallChunks(t, path)
	waitIndex(t, x)
	re, err := CompilePattern("needle", false)
	if err != nil {
		t.Fatal(err)
	}
	f := x.NewEntryFilter(re)
	check := func(name string, f *EntryFilter, lines []string) {
		t.Helper()
		want, entries := entryOracle(lines, re)
		n, gotEntries, done := f.Len()
		if n != len(want) || gotEntries != entries || !done {
			t.Fatalf("%s: Len = %d lines, %d entries, done %v; want %d, %d", name, n, gotEntries, done, len(want), entries)
		}
		if got := f.Lines(0, n+10); !slices.Equal(got, want) {
			t.Fatalf("%s: Lines(0, all) differs at %d (%d lines, want %d)", name, firstDiffInt(got, want), len(got), len(want))
		}
		for _, k := range []int{0, 1, 77, n / 2, n - 2} {
			if got := f.Lines(k, 4); !slices.Equal(got, want[k:min(k+4, n)]) {
				t.Fatalf("%s: Lines(%d, 4) = %v, want %v", name, k, got, want[k:min(k+4, n)])
			}
		}
		for k, line := range want {
			if k%37 != 0 && k < n-2 {
				continue
			}
			if got, ok := f.Pos(line); !ok || got != k {
				t.Fatalf("%s: Pos(%d) = %d %v, want %d", name, line, got, ok, k)
			}
		}
		// A line not shown maps to the next line shown.
		for line := range lines {
			if k, found := slices.BinarySearch(want, line); !found && k < n {
				if got, ok := f.Pos(line); !ok || got != k {
					t.Fatalf("%s: Pos(%d) of a hidden line = %d %v, want %d", name, line, got, ok, k)
				}
				break
			}
		}
	}
	if err := f.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	lines := splitRaw(content)
	check("file", f, lines)
	check("memory", FilterLines(lines, re), lines)

	// The entry whose only match is in a continuation line is shown whole, its timestamped line first.
	want, _ := entryOracle(lines, re)
	found := false
	for i, l := range lines {
		if strings.Contains(l, "continuation with the needle") {
			start := i
			for !strings.HasPrefix(lines[start], "[") {
				start--
			}
			if strings.Contains(lines[start], "NEEDLE") {
				continue
			}
			k, ok := f.Pos(start)
			if !ok || f.Lines(k, 1)[0] != start || !slices.Contains(want, start) {
				t.Fatalf("entry at line %d (match in its line %d) is not shown from its timestamped line", start, i)
			}
			found = true
			break
		}
	}
	if !found {
		t.Fatal("the log has no entry matching only in a continuation line")
	}

	// The log grows: the unfinished line ends, a non-matching entry and a matching continuation follow.
	more := " done\n[2026-02-15T02:00:01Z] plain entry\n  plain\n[2026-02-15T02:00:02Z] another\n  with a needle\n"
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString(more); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	if _, err := x.Refresh(); err != nil {
		t.Fatal(err)
	}
	waitIndex(t, x)
	if err := f.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	check("file after append", f, splitRaw(content+more))
}

// TestEntryFilterTooScattered: a filter that would keep more separate runs of entries than it may stops
// with ErrTooManySpans and keeps the view it had, in memory and over a file.
func TestEntryFilterTooScattered(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := 0; i < 101; i++ {
		word := "plain"
		if i%2 == 0 {
			word = "needle"
		}
		lines = append(lines, fmt.Sprintf("[2026-02-15T01:00:%02dZ] %s %d", i%60, word, i))
	}
	re := regexp.MustCompile("needle")
	mem := filterLines(lines, re, 10)
	x := openIndex(t, writeFile(t, t.TempDir(), "run.log", strings.Join(lines, "\n")+"\n"))
	waitIndex(t, x)
	file := x.newEntryFilter(re, 10)
	if err := file.Run(context.Background(), nil); !errors.Is(err, ErrTooManySpans) {
		t.Fatalf("file: %v, want ErrTooManySpans", err)
	}
	for name, f := range map[string]*EntryFilter{"memory": mem, "file": file} {
		if !errors.Is(f.Err(), ErrTooManySpans) {
			t.Fatalf("%s: Err = %v", name, f.Err())
		}
		if n, entries, _ := f.Len(); n != 10 || entries != 10 || !slices.Equal(f.Lines(0, 20), []int{0, 2, 4, 6, 8, 10, 12, 14, 16, 18}) {
			t.Fatalf("%s: the view kept %d lines: %v", name, n, f.Lines(0, 20))
		}
	}
}
