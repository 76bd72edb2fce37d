// Width, cutting and wrapping of terminal text: every pane measures and cuts its lines with these.

package text

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

func VisibleWidth(s string) int { return ansi.StringWidth(s) }

func Stripped(s string) string { return ansi.Strip(s) }

// Truncate cuts styled text to w cells, marking the cut with an ellipsis.
func Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

func PadRight(s string, w int) string {
	if n := w - ansi.StringWidth(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// WrapText wraps plain text to w cells, breaking long words.
func WrapText(s string, w int) []string {
	if w <= 0 {
		return []string{s}
	}
	return strings.Split(ansi.Wrap(s, w, ""), "\n")
}

// CutMiddle shortens s to w cells by removing its middle, keeping more of the end: run ids of one task
// share their start and differ in their suffix (irm-id-full-backfill-20261201T0518Z).
func CutMiddle(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	if w <= 1 {
		return string(r[:max(0, w)])
	}
	tail := (w - 1) * 2 / 3
	head := w - 1 - tail
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

func CutEnd(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	if w <= 1 {
		return string(r[:max(0, w)])
	}
	return string(r[:w-1]) + "…"
}

// WrapStyled wraps an already styled row (detail rows are built styled) with lipgloss.Wrap, which carries
// the styles over to every row, indenting continuation rows as deep as the row's own indentation.
func WrapStyled(text string, w int) []string {
	if ansi.StringWidth(text) <= w {
		return []string{text}
	}
	plain := ansi.Strip(text)
	indent := min(len(plain)-len(strings.TrimLeft(plain, " ")), w/2)
	first := strings.SplitN(wrapLG(text, w), "\n", 2)[0]
	fw := ansi.StringWidth(first)
	rest := ansi.Cut(text, fw, ansi.StringWidth(text))
	out := []string{first}
	for _, r := range strings.Split(wrapLG(strings.TrimLeft(rest, " "), w-indent), "\n") {
		out = append(out, strings.Repeat(" ", indent)+r)
	}
	return out
}

func wrapLG(s string, w int) string { return lipgloss.Wrap(s, max(1, w), "") }

func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// MarkFirst is the glyph that starts line i of a wrapped message when i is its first; its continuation lines
// are indented instead, so one error does not read as three.
func MarkFirst(i int, glyph string) string {
	if i == 0 {
		return glyph
	}
	return strings.Repeat(" ", VisibleWidth(glyph))
}
