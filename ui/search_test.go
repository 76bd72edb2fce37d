// Tests of the timeline's search, filter, wrap and entries, over logs in memory and on disk.

package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/text"
	"runwatch/ui/timeline"
)

// indexOpener opens path with the real index whatever path the run names.
func indexOpener(t *testing.T, path string) app.OpenLogFunc {
	return func(string) (app.LogSource, error) {
		src, err := OpenIndexedLog(path)
		if err == nil {
			t.Cleanup(func() { src.Close() })
		}
		return src, err
	}
}

// counted is open, and wait: it returns once every log open gave to the dashboard is counted to its end
// (timeline.Waiter), as a test that needs the lines' final numbers waits.
func counted(t testing.TB, open app.OpenLogFunc) (app.OpenLogFunc, func(ctx context.Context)) {
	var mu sync.Mutex
	var opened []app.LogSource
	wrapped := func(path string) (app.LogSource, error) {
		src, err := open(path)
		if err == nil {
			mu.Lock()
			opened = append(opened, src)
			mu.Unlock()
		}
		return src, err
	}
	wait := func(ctx context.Context) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if len(opened) == 0 {
			t.Fatal("no log was opened")
		}
		for _, src := range opened {
			if w, ok := src.(timeline.Waiter); ok {
				if err := w.Wait(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return wrapped, wait
}

// genLog writes n entries: every 10th is a stage_start, every 7th has a continuation line holding NEEDLE;
// the first line holds zqxj-top. It returns the path and the lines.
func genLog(t *testing.T, n int) (string, []string) {
	t.Helper()
	var lines []string
	lines = append(lines, "[2026-11-30T10:00:00Z] run_start zqxj-top")
	for i := 1; i < n; i++ {
		ts := testNow.Add(-time.Duration(n-i) * time.Second).UTC().Format(time.RFC3339)
		if i%10 == 0 {
			lines = append(lines, fmt.Sprintf("[%s] stage_start stage=S%d", ts, i))
		} else {
			lines = append(lines, fmt.Sprintf("[%s] step %d done", ts, i))
		}
		if i%7 == 0 {
			lines = append(lines, fmt.Sprintf("  payload NEEDLE %d", i))
		}
	}
	path := filepath.Join(t.TempDir(), "run.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, lines
}

func typeSearch(t *testing.T, m Model, start, pattern string) Model {
	t.Helper()
	m = send(t, m, press(start))
	if !m.tl.Capturing() {
		t.Fatalf("%s did not open the search prompt", start)
	}
	m = send(t, m, press("ctrl+u"))
	for _, r := range pattern {
		m = send(t, m, press(string(r)))
	}
	return send(t, m, press("enter"))
}

func focusTimeline(t *testing.T, m Model) Model {
	t.Helper()
	for m.app.Focus != app.PaneTimeline {
		m = send(t, m, press("tab"))
	}
	return m
}

// TestSearchWrapsBothWays: in follow mode at the bottom, / finds what is above by wrapping (the issue's
// "no more matches"), says so, and n and N go round in both directions; on the real index and in memory.
func TestSearchWrapsBothWays(t *testing.T) {
	t.Parallel()
	path, lines := genLog(t, 3000)
	for name, open := range map[string]app.OpenLogFunc{"index": indexOpener(t, path), "memory": memOpener(lines)} {
		t.Run(name, func(t *testing.T) {
			m := focusTimeline(t, newTestModel(t, 200, 40, []model.Run{resumableRun()}, app.Options{OpenLog: open}))
			if !tlFollows(t, m) || tlCursor(t, m) != len(lines)-1 {
				t.Fatalf("not following at the end: cursor %d", tlCursor(t, m))
			}
			m = typeSearch(t, m, "/", "zqxj")
			if tlCursor(t, m) != 0 || !strings.Contains(plain(m), "search hit BOTTOM, continuing at TOP") {
				t.Fatalf("forward search from the bottom: cursor %d\n%s", tlCursor(t, m), plain(m))
			}
			// Backward from the top wraps to the last stage_start.
			last := 0
			for i, l := range lines {
				if strings.Contains(l, "stage_start") {
					last = i
				}
			}
			m = typeSearch(t, m, "ctrl+r", "stage_start")
			if tlCursor(t, m) != last || !strings.Contains(plain(m), "search hit TOP, continuing at BOTTOM") {
				t.Fatalf("backward search from the top: cursor %d, want %d\n%s", tlCursor(t, m), last, plain(m))
			}
			// n repeats the backward search (up), N goes down and wraps to the first one.
			m = send(t, m, press("n"))
			if cur, _ := m.tl.CursorLine(); !strings.Contains(cur, "stage_start") || tlCursor(t, m) >= last {
				t.Fatalf("n after a backward search should go up: cursor %d", tlCursor(t, m))
			}
			m = send(t, m, press("N"))
			m = send(t, m, press("N"))
			first := 0
			for i, l := range lines {
				if strings.Contains(l, "stage_start") {
					first = i
					break
				}
			}
			if tlCursor(t, m) != first || !strings.Contains(plain(m), "search hit BOTTOM") {
				t.Fatalf("N past the last match should wrap to the first (%d): cursor %d", first, tlCursor(t, m))
			}
		})
	}
}

// TestSearchCountsMatches: `match k/N` is right for every match, including matches in continuation lines,
// with smart case (NEEDLE found by "needle").
func TestSearchCountsMatches(t *testing.T) {
	t.Parallel()
	path, lines := genLog(t, 2000)
	var want []int
	for i, l := range lines {
		if strings.Contains(strings.ToLower(l), "needle") {
			want = append(want, i)
		}
	}
	m := focusTimeline(t, newTestModel(t, 200, 40, []model.Run{resumableRun()}, app.Options{OpenLog: indexOpener(t, path)}))
	m = send(t, m, press("g"))
	m = typeSearch(t, m, "/", "needle")
	total := len(want)
	for k := 0; k < 12; k++ {
		if tlCursor(t, m) != want[k] {
			t.Fatalf("match %d at line %d, want %d", k+1, tlCursor(t, m), want[k])
		}
		if tag, got := fmt.Sprintf("match %d/%d", k+1, total), m.tl.CountTag(); got != tag || !strings.Contains(tlTitle(t, m), tag) {
			t.Fatalf("count %q, want %q", got, tag)
		}
		m = send(t, m, press("n"))
	}
	// A line that does not match gets the total only.
	m = send(t, m, press("g"))
	if got := m.tl.CountTag(); got != fmt.Sprintf("%d matches", total) {
		t.Fatalf("off a match the title should say %d matches, says %q", total, got)
	}
}

// TestHighlightIsTheMatchedText: the matched text is drawn in the match style and the rest of the line is
// not.
func TestHighlightIsTheMatchedText(t *testing.T) {
	t.Parallel()
	m := focusTimeline(t, newTestModel(t, 140, 40, []model.Run{resumableRun()}, app.Options{OpenLog: memOpener(logLines), Theme: "dark"}))
	m = typeSearch(t, m, "/", "stage=S1")
	view := m.View().Content
	match := func(s string) string { p := text.SGROf(&m.app.Theme.Match); return p.Open + s + p.Close }
	if !strings.Contains(view, match("stage=S1")) {
		t.Fatalf("the match is not highlighted:\n%q", view)
	}
	if strings.Contains(view, match("[2026")) || strings.Contains(view, match("stage_complete stage=S1")) {
		t.Fatal("more than the matched text is highlighted")
	}
}

// TestWrapInTimeline: w wraps long lines under their message column, a continuation line under its own
// indentation, and the cursor line stays on screen.
func TestWrapInTimeline(t *testing.T) {
	t.Parallel()
	long := "[2026-11-30T11:00:00Z] stale_lock_cleared payload={" + strings.Repeat(`"k": "value", `, 30) + "}"
	cont := "    trace " + strings.Repeat("frame ", 40)
	lines := append(append([]string(nil), logLines...), long, cont)
	m := focusTimeline(t, newTestModel(t, 100, 30, []model.Run{resumableRun()}, app.Options{OpenLog: memOpener(lines)}))
	m = send(t, m, press("w"))
	if !tlWraps(t, m) {
		t.Fatal("w did not turn wrap on")
	}
	s := plain(m)
	if !strings.Contains(s, "wrap") || strings.Contains(s, "›") {
		t.Fatalf("wrapped view:\n%s", s)
	}
	var payloadRows, traceRows int
	for _, row := range strings.Split(s, "\n") {
		i := strings.Index(row, "┃")
		if i < 0 {
			continue
		}
		inner := strings.TrimSuffix(row[i+len("┃"):], "┃")
		switch {
		case strings.HasPrefix(inner, strings.Repeat(" ", m.tl.PrefixWidth())+`"`):
			payloadRows++ // under the message column
		case strings.HasPrefix(inner, strings.Repeat(" ", m.tl.TimeWidth()+1+2+4)+"frame"):
			traceRows++ // under the time column, the │ and the line's own four blanks
		}
	}
	if payloadRows < 2 || traceRows < 2 {
		t.Fatalf("continuation rows not indented (payload %d, trace %d):\n%s", payloadRows, traceRows, m.View().Content)
	}
	if !strings.Contains(s, "frame frame }") && !strings.Contains(s, "frame ") {
		t.Fatalf("the cursor line is not on screen:\n%s", s)
	}
	m = send(t, m, press("w"))
	if tlWraps(t, m) || !strings.Contains(plain(m), "›") {
		t.Fatal("w again should cut lines with a continuation mark")
	}
}

// TestEnterOpensEntryWhole: enter on any line of an entry opens the whole entry in a pager, wrapped; its
// search counts and wraps; y copies it; esc closes.
func TestEnterOpensEntryWhole(t *testing.T) {
	t.Parallel()
	payload := "[2026-11-30T11:45:00Z] stale_lock_cleared payload={" + strings.Repeat(`"key": "value", `, 40) + "}"
	lines := append(append([]string(nil), logLines...), payload, "  cont one value", "  cont two", "[2026-11-30T11:50:00Z] after")
	var copied string
	m := focusTimeline(t, newTestModel(t, 100, 30, []model.Run{resumableRun()}, app.Options{OpenLog: memOpener(lines), Copy: func(s string) error { copied = s; return nil }}))
	m = send(t, m, press("k")) // on "  cont two"
	m = send(t, m, press("enter"))
	if m.pagerOverlay() == nil {
		t.Fatal("enter did not open the entry")
	}
	s := plain(m)
	for _, want := range []string{"Entry at line", "3 lines", "stale_lock_cleared payload={", "cont one value", "cont two", `"value", }`} {
		if !strings.Contains(s, want) {
			t.Fatalf("pager lacks %q:\n%s", want, s)
		}
	}
	if rows := strings.Join(m.pagerRows(), "\n"); strings.Contains(rows, "after") || strings.Contains(rows, "…") {
		t.Fatalf("pager shows more than the entry, or cuts it:\n%s", s)
	}
	// Its footer calls / what it does in a pager: search (it said "filter").
	if !strings.Contains(s, "/ search") || strings.Contains(s, "/ filter") {
		t.Fatalf("pager footer does not say / searches:\n%s", s)
	}
	m = send(t, m, press("/"))
	for _, r := range "value" {
		m = send(t, m, press(string(r)))
	}
	m = send(t, m, press("enter"))
	if !strings.Contains(plain(m), "match 1/2") {
		t.Fatalf("pager search:\n%s", plain(m))
	}
	m = send(t, m, press("n"))
	m = send(t, m, press("n"))
	if !strings.Contains(plain(m), "match 1/2") || !strings.Contains(plain(m), "search hit BOTTOM") {
		t.Fatalf("pager n should wrap:\n%s", plain(m))
	}
	m = send(t, m, press("y"))
	if !strings.Contains(copied, "cont two") || !strings.Contains(copied, "stale_lock_cleared") {
		t.Fatalf("y copied %q", copied)
	}
	m = send(t, m, press("esc"))
	if m.pagerOverlay() != nil {
		t.Fatal("esc did not close the pager")
	}
}

// wholeEntries is the "only matches" view by brute force: every line of each entry (a timestamped line
// and the continuation lines after it) that has a line containing sub (case-insensitive).
func wholeEntries(lines []string, sub string) (shown []string, entries int) {
	var cur []string
	hit := false
	flush := func() {
		if hit {
			shown, entries = append(shown, cur...), entries+1
		}
		cur, hit = nil, false
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "[") {
			flush()
		}
		cur = append(cur, l)
		hit = hit || strings.Contains(strings.ToLower(l), strings.ToLower(sub))
	}
	flush()
	return shown, entries
}

// TestOnlyMatchesKeepsWholeEntries: & shows only the entries with a match, each whole: a match in a
// continuation line brings its timestamped line, a match on the timestamped line brings its continuation
// lines, with the count of entries in the title; the cursor stays on its log line both ways; n goes to
// the next match within the filtered view. Over a file index and over lines in memory.
func TestOnlyMatchesKeepsWholeEntries(t *testing.T) {
	t.Parallel()
	path, lines := genLog(t, 500)
	for _, src := range []struct {
		name string
		open app.OpenLogFunc
	}{{"index", indexOpener(t, path)}, {"memory", memOpener(lines)}} {
		for _, pattern := range []string{"needle", "stage_start"} {
			name := src.name + " " + pattern
			want, entries := wholeEntries(lines, pattern)
			m := focusTimeline(t, newTestModel(t, 200, 40, []model.Run{resumableRun()}, app.Options{OpenLog: src.open}))
			m = typeSearch(t, m, "/", pattern)
			line := tlCursor(t, m)
			m = send(t, m, press("&"))
			if !tlFiltered(t, m) || m.tl.Len() != len(want) || !strings.Contains(tlTitle(t, m), fmt.Sprintf("only matches: %d entries", entries)) {
				t.Fatalf("%s: & shows %d lines (want %d), title %q, want %d entries", name, m.tl.Len(), len(want), tlTitle(t, m), entries)
			}
			if got, _ := m.tl.LogLine(tlCursor(t, m)); got != line {
				t.Fatalf("%s: the cursor moved off its line: %d, was %d", name, got, line)
			}
			k := min(12, len(want))
			m = send(t, m, press("g"))
			m, top := tlWalk(t, m, k, "j")
			if !slices.Equal(top, want[:k]) {
				t.Fatalf("%s: the filtered view from the top:\n%s\nwant\n%s", name, strings.Join(top, "\n"), strings.Join(want[:k], "\n"))
			}
			if pattern == "needle" && (!strings.HasPrefix(top[0], "[") || !strings.Contains(top[1], "NEEDLE")) {
				t.Fatalf("%s: a match in a continuation line is not shown under its timestamped line: %q", name, top[:2])
			}
			if pattern == "stage_start" && !slices.ContainsFunc(want, func(l string) bool { return strings.Contains(l, "NEEDLE") }) {
				t.Fatalf("%s: the oracle has no continuation line of a matching entry", name)
			}
			m = send(t, m, press("G"))
			m, end := tlWalk(t, m, k, "k")
			if slices.Reverse(end); !slices.Equal(end, want[len(want)-k:]) {
				t.Fatalf("%s: the filtered view's end:\n%s\nwant\n%s", name, strings.Join(end, "\n"), strings.Join(want[len(want)-k:], "\n"))
			}
			// n from the top of the filtered view lands on the second match, in the view.
			m = send(t, m, press("g"))
			m = send(t, m, press("n"))
			m = send(t, m, press("n"))
			cur, ok := m.tl.CursorLine()
			if !tlFiltered(t, m) || !ok || !strings.Contains(strings.ToLower(cur), pattern) {
				t.Fatalf("%s: n in the filtered view is on %q", name, cur)
			}
			at, _ := m.tl.LogLine(tlCursor(t, m))
			m = send(t, m, press("&"))
			if tlFiltered(t, m) || tlCursor(t, m) != at {
				t.Fatalf("%s: & again: filtered %v cursor %d, want %d", name, tlFiltered(t, m), tlCursor(t, m), at)
			}
		}
	}
}

// TestBriefWrapsScrollsSearchesCopies: the brief opens wrapped (its long sentences whole, list items
// indented under their text), scrolls, searches and copies.
func TestBriefWrapsScrollsSearchesCopies(t *testing.T) {
	t.Parallel()
	md := "# Resume brief\n\n- answer the questions " + strings.Repeat("about the stage ", 12) + "then run the verification again\n" +
		strings.Repeat("filler line\n", 60) + "last line with target\n"
	var copied string
	m := newTestModel(t, 80, 24, sampleRuns(), app.Options{Copy: func(s string) error { copied = s; return nil }})
	m = send(t, m, app.PagerMsg{Title: "Resume brief r1", Text: md, Copyable: true})
	s := plain(m)
	if !strings.Contains(s, "- answer the questions about") || strings.Contains(strings.Join(m.pagerRows(), "\n"), "…") {
		t.Fatalf("brief not wrapped:\n%s", s)
	}
	var under int
	for _, row := range strings.Split(s, "\n") {
		if strings.HasPrefix(row, "┃  about") || strings.HasPrefix(row, "┃  stage") || strings.HasPrefix(row, "┃  then") {
			under++
		}
	}
	if under == 0 {
		t.Fatalf("the bullet's continuation rows are not under its text:\n%s", s)
	}
	m = send(t, m, press("j"))
	if m.pagerOverlay().Top != 1 {
		t.Fatal("j did not scroll the brief")
	}
	m = send(t, m, press("/"))
	for _, r := range "target" {
		m = send(t, m, press(string(r)))
	}
	m = send(t, m, press("enter"))
	if !strings.Contains(plain(m), "last line with target") || !strings.Contains(plain(m), "match 1/1") {
		t.Fatalf("brief search:\n%s", plain(m))
	}
	m = send(t, m, press("y"))
	if !strings.Contains(copied, "then run the verification again") {
		t.Fatal("y did not copy the brief")
	}
	m = send(t, m, press("w"))
	if m.pagerOverlay().Wrap {
		t.Fatal("w did not turn the brief's wrap off")
	}
	m = send(t, m, press("esc"))
	if m.pagerOverlay() != nil {
		t.Fatal("esc did not close the brief")
	}
}

// TestDetailWrapAndScroll: w in Detail wraps its long lines; with wrap off, l and $ scroll them.
func TestDetailWrapAndScroll(t *testing.T) {
	t.Parallel()
	runList := sampleRuns()
	runList[2].Title = "Add login form " + strings.Repeat("with validation ", 12) + "END-OF-TITLE" // the run selected first
	m := newTestModel(t, 80, 30, runList, app.Options{})
	m = send(t, m, press("tab"))
	if m.app.Focus != app.PaneDetail {
		t.Fatal("focus")
	}
	if strings.Contains(plain(m), "END-OF-TITLE") {
		t.Fatal("the long line is not cut to begin with")
	}
	m = send(t, m, press("$"))
	if !strings.Contains(plain(m), "END-OF-TITLE") || !strings.Contains(plain(m), "‹") {
		t.Fatalf("$ did not scroll to the end:\n%s", plain(m))
	}
	m = send(t, m, press("w"))
	s := plain(m)
	if !strings.Contains(s, "OF-TITLE") || !strings.Contains(s, "Add login form with") || strings.Contains(s, "‹") {
		t.Fatalf("w did not wrap the detail:\n%s", s)
	}
}

// BenchmarkFrameWrapLongLines: one frame of the timeline with wrap on, at 200x60, every visible line 4 KiB
// long (the worst a screen holds: the cursor line and its neighbours all wrap to many rows).
func BenchmarkFrameWrapLongLines(b *testing.B) {
	var lines []string
	for i := 0; i < 500; i++ {
		lines = append(lines, fmt.Sprintf("[2026-11-30T11:%02d:00Z] stale_lock_cleared payload=%s", i%60, strings.Repeat(`{"host": "h", "pid": 42} `, 160)))
	}
	m := newTestModel(b, 200, 60, []model.Run{resumableRun()}, app.Options{OpenLog: memOpener(lines), Theme: "dark"})
	for m.app.Focus != app.PaneTimeline {
		m = send(b, m, press("tab"))
	}
	m = send(b, m, press("w"))
	m = send(b, m, press("/"))
	for _, r := range "pid" {
		m = send(b, m, press(string(r)))
	}
	m = send(b, m, press("enter"))
	if !tlWraps(b, m) {
		b.Fatal("wrap is off")
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// TestEntryPagerShowsHugeLineWhole: enter on an entry holding a 50 MiB line opens it whole (not cut at the
// index's 16 KiB), wrapped, with frames that draw only the rows on screen; G reaches the line's end, a
// search finds the word at its end, and y copies all of it through tmux's buffer, or says it is too big
// for the terminal's clipboard when there is no tmux.
func TestEntryPagerShowsHugeLineWhole(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes a 50 MiB line")
	}
	path := filepath.Join(t.TempDir(), "run.log")
	var b strings.Builder
	b.WriteString("[2026-11-30T11:00:00Z] run_start\n[2026-11-30T11:00:01Z] dump payload=")
	b.WriteString(strings.Repeat("0123456789abcdef ", (50<<20)/17))
	b.WriteString("THE-END\n  continuation after the payload\n[2026-11-30T11:00:02Z] next entry\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, inTmux := range []bool{true, false} {
		var copied string
		open, wait := counted(t, indexOpener(t, path))
		opts := app.Options{OpenLog: open}
		if inTmux {
			opts.Copy = func(s string) error { copied = s; return nil }
		}
		m := focusTimeline(t, newTestModel(t, 120, 30, []model.Run{resumableRun()}, opts))
		wait(context.Background())
		m = send(t, m, app.TickMsg(testNow))
		m = send(t, m, press("k")) // the continuation line of the payload's entry
		m = send(t, m, press("enter"))
		pg := m.pagerOverlay()
		if pg == nil {
			t.Fatal("enter did not open the entry")
		}
		if len(pg.Lines) != 2 || len(pg.Lines[0]) < 50<<20 || strings.Contains(pg.Title, "cut") {
			t.Fatalf("the entry is not whole: %d lines, first %d bytes, title %q", len(pg.Lines), len(pg.Lines[0]), pg.Title)
		}
		if pg.Rows < (50<<20)/(2*pg.Width) {
			t.Fatalf("%d rows: the 50 MiB line is not wrapped whole", pg.Rows)
		}
		if n := len(m.View().Content); n > 64<<10 {
			t.Fatalf("a frame is %d bytes: the pager drew more than the screen", n)
		}
		m = send(t, m, press("G"))
		s := plain(m)
		if !strings.Contains(s, "THE-END") || !strings.Contains(s, "continuation after the payload") {
			t.Fatalf("G did not reach the end of the entry:\n%s", s)
		}
		m = send(t, m, press("g"))
		m = typePagerSearch(t, m, "THE-END")
		if s := plain(m); !strings.Contains(s, "THE-END") || !strings.Contains(s, "match 1/1") {
			t.Fatalf("the search did not reach the end of the line:\n%s", s)
		}
		m = send(t, m, press("y"))
		if inTmux {
			if len(copied) != len(pg.Text) || !strings.Contains(copied, "THE-END") || !strings.Contains(m.app.Msgs.Last.Text, "tmux's buffer") {
				t.Fatalf("y copied %d bytes of %d; note %q", len(copied), len(pg.Text), m.app.Msgs.Last.Text)
			}
		} else if !strings.Contains(m.app.Msgs.Last.Text, "too big for the terminal's clipboard") {
			t.Fatalf("y without tmux: %q", m.app.Msgs.Last.Text)
		}
	}
}

func typePagerSearch(t *testing.T, m Model, pattern string) Model {
	t.Helper()
	m = send(t, m, press("/"))
	for _, r := range pattern {
		m = send(t, m, press(string(r)))
	}
	return send(t, m, press("enter"))
}

// TestNarrowTitleKeepsTheCount: on a narrow pane the search's count stays in the timeline's title (the
// position, follow state and pattern give way), for match k/N and for the filtered view's entries.
func TestNarrowTitleKeepsTheCount(t *testing.T) {
	t.Parallel()
	path, _ := genLog(t, 500)
	m := focusTimeline(t, newTestModel(t, 50, 20, []model.Run{resumableRun()}, app.Options{OpenLog: indexOpener(t, path)}))
	m = typeSearch(t, m, "/", "stage_start")
	if s := plain(m); !strings.Contains(s, "match 1/49") {
		t.Fatalf("the count is not in the narrow title:\n%s", s)
	}
	m = send(t, m, press("&"))
	if s := plain(m); !strings.Contains(s, "only matches: 49 entries") {
		t.Fatalf("the filtered count is not in the narrow title:\n%s", s)
	}
}

// TestNarrowPagerTitleKeepsTheCount: in a narrow pager the title gives way to the search's count.
func TestNarrowPagerTitleKeepsTheCount(t *testing.T) {
	t.Parallel()
	md := "# Resume brief\n\n" + strings.Repeat("filler line\n", 60) + "the target line\nand the target again\n"
	m := newTestModel(t, 50, 20, sampleRuns(), app.Options{})
	m = send(t, m, app.PagerMsg{Title: "Resume brief of a run with a very long identifier-20260301T101500Z", Text: md, Copyable: true})
	m = typePagerSearch(t, m, "target")
	if s := plain(m); !strings.Contains(s, "/target match 1/2") || !strings.Contains(s, "Resume") {
		t.Fatalf("the narrow pager's title lost the count or the title:\n%s", s)
	}
}

// TestOnlyHitSaysSo (issue 36): with one error entry, e from it goes round to itself; it said "search hit
// BOTTOM, continuing at TOP" on every press. As less and vim, it says the hit is the only one; n/N too.
func TestOnlyHitSaysSo(t *testing.T) {
	t.Parallel()
	lines := []string{
		"[2026-02-15T01:50:43Z] run bootstrapped",
		"[2026-02-15T01:51:00Z] stage_failed stage=S1 error=disk",
		"[2026-02-15T01:52:00Z] stage_start stage=S2",
	}
	m := focusTimeline(t, newTestModel(t, 140, 40, []model.Run{resumableRun()}, app.Options{OpenLog: memOpener(lines)}))
	m = send(t, m, press("e"))
	if tlCursor(t, m) != 1 || !strings.Contains(plain(m), "search hit BOTTOM, continuing at TOP") {
		t.Fatalf("e from the bottom: cursor %d\n%s", tlCursor(t, m), plain(m))
	}
	for _, k := range []string{"e", "E"} {
		m = send(t, m, press(k))
		if s := plain(m); tlCursor(t, m) != 1 || !strings.Contains(s, "the only error") || strings.Contains(s, "search hit") {
			t.Fatalf("%s on the only error: cursor %d\n%s", k, tlCursor(t, m), s)
		}
	}
	m = typeSearch(t, m, "/", "S2")
	for _, k := range []string{"n", "N"} {
		m = send(t, m, press(k))
		if s := plain(m); tlCursor(t, m) != 2 || !strings.Contains(s, "the only match") {
			t.Fatalf("%s on the only match: cursor %d\n%s", k, tlCursor(t, m), s)
		}
	}
}
