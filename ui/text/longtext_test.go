// Tests of the long-line drawing: wrap points, hanging indents, windows.

package text

import (
	"regexp"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

func TestWrapKeepsContinuationIndentation(t *testing.T) {
	body := "  artifact=/cfg/reports/irm/artifacts/s1/out-12.json sha256=" + strings.Repeat("ab", 40) + " size_bytes=1234"
	prefix := "      │ "
	l := NewRichLine(prefix, body, nil)
	const w = 40
	rows := l.wrap(w)
	if len(rows) < 4 {
		t.Fatalf("%d rows", len(rows))
	}
	indent := strings.Repeat(" ", ansi.StringWidth(prefix)+2) // the prefix, then the body's own two blanks
	var joined strings.Builder
	for i, r := range rows {
		if ansi.StringWidth(r) > w {
			t.Errorf("row %d is %d cells wide: %q", i, ansi.StringWidth(r), r)
		}
		if i == 0 {
			if !strings.HasPrefix(r, prefix+"  artifact=") {
				t.Errorf("first row %q", r)
			}
			joined.WriteString(strings.TrimPrefix(r, prefix))
			continue
		}
		if !strings.HasPrefix(r, indent) || r[len(indent)] == ' ' {
			t.Errorf("row %d %q: want exactly %d blanks of indentation", i, r, len(indent))
		}
		joined.WriteString(" " + strings.TrimPrefix(r, indent))
	}
	// Nothing is lost: the rows hold the body's words (a break at a blank drops only that blank, and the
	// long hex run is cut mid-word).
	if got, want := strings.ReplaceAll(joined.String(), " ", ""), strings.ReplaceAll(body, " ", ""); got != want {
		t.Errorf("text changed:\n got %q\nwant %q", got, want)
	}
	// Words stay whole where a blank is near the row end.
	for _, r := range rows {
		if strings.HasSuffix(strings.TrimRight(r, " "), "size_byt") {
			t.Errorf("a word was cut although a blank was near: %q", r)
		}
	}
}

func TestWrapNarrowAndEmpty(t *testing.T) {
	if rows := NewRichLine("pre ", "", nil).wrap(20); len(rows) != 1 || rows[0] != "pre " {
		t.Fatalf("empty body: %q", rows)
	}
	// A deep indentation in a narrow pane is capped so every row still carries text.
	rows := NewRichLine("", strings.Repeat(" ", 30)+strings.Repeat("x", 50), nil).wrap(20)
	for i, r := range rows[1:] {
		if strings.TrimSpace(r) == "" || ansi.StringWidth(r) > 20 {
			t.Fatalf("row %d %q", i+1, r)
		}
	}
	// Wide runes are never split and rows stay within the width.
	rows = NewRichLine("", strings.Repeat("界", 25), nil).wrap(9)
	for _, r := range rows {
		if ansi.StringWidth(r) > 9 || !strings.Contains(r, "界") {
			t.Fatalf("wide row %q", r)
		}
	}
}

func TestWindowScrollsWithIndicators(t *testing.T) {
	body := "0123456789abcdefghijklmnopqrstuvwxyz"
	l := NewRichLine("T ", body, nil)
	if got := l.Window(0, 12); got != "T 012345678›" {
		t.Errorf("start: %q", got)
	}
	if got := l.Window(10, 12); got != "T ‹bcdefghi›" {
		t.Errorf("middle: %q", got)
	}
	end := l.Width() - 10
	if got := l.Window(end, 12); got != "T ‹rstuvwxyz" {
		t.Errorf("end: %q", got)
	}
	if got := NewRichLine("T ", "short", nil).Window(0, 12); got != "T short" {
		t.Errorf("short: %q", got)
	}
}

func TestHighlightStylesOnlyTheMatchedText(t *testing.T) {
	hit := lipgloss.NewStyle().Reverse(true)
	l := NewRichLine("", "before NEEDLE after needle end", nil)
	if n := l.Highlight(regexp.MustCompile("(?i)needle"), hit); n != 2 {
		t.Fatalf("%d matches", n)
	}
	got := l.Render(0, len(l.Body))
	want := "before " + hit.Render("NEEDLE") + " after " + hit.Render("needle") + " end"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	// A highlight cut by a wrap is styled completely on both rows.
	rows := l.wrap(10)
	var joined string
	for _, r := range rows {
		joined += r
	}
	if !strings.Contains(joined, hit.Render("NEE")) && !strings.Contains(joined, hit.Render("NEEDLE")) {
		t.Fatalf("rows lost the highlight: %q", rows)
	}
}

func TestHangingPrefix(t *testing.T) {
	for _, c := range [][3]string{
		{"- answer the questions", "- ", "answer the questions"},
		{"  1. then run", "  1. ", "then run"},
		{"- [ ] tick", "- [ ] ", "tick"},
		{"   plain indented", "   ", "plain indented"},
		{"2026 is a year", "", "2026 is a year"},
	} {
		p, b := HangingPrefix(c[0])
		if p != c[1] || b != c[2] {
			t.Errorf("%q: %q %q", c[0], p, b)
		}
	}
}

// wrap draws the line in rows of at most w cells, as a pane draws them with Rows and DrawRow.
func (l *RichLine) wrap(w int) []string {
	lay := l.Rows(w)
	out := make([]string, len(lay.Rows))
	for i := range lay.Rows {
		out[i] = l.DrawRow(lay, i)
	}
	return out
}
