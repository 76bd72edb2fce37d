// Package text holds what every part of the dashboard does to a string before it reaches the terminal:
// sanitising untrusted text (sanitize.go), measuring, cutting and wrapping it (width.go), and drawing long
// lines with styles that survive wrapping and windowing (longtext.go). It knows no component.
//
// sanitize.go: the one quoting helper between run files and the terminal.
package text

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// tabWidth is where tab stops fall, as in every terminal's default.
const tabWidth = 8

// Sanitize makes untrusted text (log lines, phase names, errors, paths from run files) safe to print in a
// terminal cell grid. Escape sequences (CSI, OSC including clipboard writes and hyperlinks, DCS, SOS, PM,
// APC, two-byte ESC sequences and their 8-bit C1 forms) are removed whole, because printing them visibly
// would flood a log line with noise while the text around them is what people want to read. Every other
// control character is shown in caret notation (^G, ^H, ^M, ^?) or as <U+XXXX>, so its presence stays
// visible without it acting on the terminal. Bidirectional overrides are shown the same way, so text cannot
// reorder itself on screen. Invalid UTF-8 becomes U+FFFD, newlines become ^J (callers that want lines split
// them first, see SanitizeLines) and tabs expand to the next 8-column stop.
func Sanitize(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	col := 0
	emit := func(str string) {
		b.WriteString(str)
		col += ansi.StringWidth(str)
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b {
			i = skipEscape(s, i)
			continue
		}
		if c < 0x80 {
			switch {
			case c == '\t':
				n := tabWidth - col%tabWidth
				b.WriteString(strings.Repeat(" ", n))
				col += n
			case c < 0x20:
				emit("^" + string(rune(c+'@')))
			case c == 0x7f:
				emit("^?")
			default:
				b.WriteByte(c)
				col++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			emit("\uFFFD")
			i++
			continue
		}
		switch {
		case r >= 0x80 && r <= 0x9f:
			// 8-bit C1 controls: the introducers start sequences exactly like ESC [ / ESC ] / ESC P do.
			if end, ok := skipC1Sequence(s, i+size, r); ok {
				i = end
				continue
			}
			emit(fmt.Sprintf("<U+%04X>", r))
		case IsBidiControl(r):
			emit(fmt.Sprintf("<U+%04X>", r))
		case isWidthJoiner(r):
			// Dropped: terminals disagree on what these do to width. The grapheme-aware measure lipgloss
			// uses counts a ZWJ emoji sequence, an emoji with VS16 or a skin tone as one 2-cell glyph, while
			// tmux 3.3 and wcwidth-based terminals draw ❤️ in 1 cell and 👍🏽 in 4, which moves every pane
			// border after it. Without them each emoji stands alone and every measure agrees.
		default:
			emit(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// SanitizeLines splits untrusted multi-line text into sanitized lines; a trailing CR of each line (CRLF
// files) is dropped rather than shown.
func SanitizeLines(s string) []string {
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = Sanitize(strings.TrimSuffix(p, "\r"))
	}
	return parts
}

// isPlain is the fast path: printable ASCII needs no work, and most log text is exactly that.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// isWidthJoiner: ZERO WIDTH JOINER, the variation selectors, and the emoji skin-tone modifiers.
func isWidthJoiner(r rune) bool {
	return r == 0x200d || (r >= 0xfe00 && r <= 0xfe0f) || (r >= 0x1f3fb && r <= 0x1f3ff)
}

func IsBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// skipEscape returns the index just past the escape sequence starting at s[i] == ESC. A lone ESC (at the
// end, or before a byte that starts no sequence) is dropped by itself.
func skipEscape(s string, i int) int {
	if i+1 >= len(s) {
		return i + 1
	}
	switch s[i+1] {
	case '[':
		return skipCSI(s, i+2)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+2)
	}
	n := s[i+1]
	// nF sequences: intermediates 0x20–0x2f then a final byte (e.g. ESC ( B for charset selection).
	j := i + 1
	for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
		j++
	}
	if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
		return j + 1
	}
	if n < 0x20 || n >= 0x7f {
		return i + 1
	}
	return j
}

// skipCSI skips parameter and intermediate bytes up to and including the final byte. A sequence cut short
// by a byte that cannot belong to it ends there, so the byte is still judged on its own.
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c >= 0x20 && c <= 0x3f:
			i++
		case c >= 0x40 && c <= 0x7e:
			return i + 1
		default:
			return i
		}
	}
	return i
}

// skipString skips a control string (OSC, DCS, SOS, PM, APC) through its terminator: BEL, ESC \ or 8-bit
// ST. An unterminated string swallows the rest of the text, as a terminal would.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case s[i] == 0x1b:
			// ESC inside a string that is not ST: the terminal aborts the string and starts a new sequence.
			return i
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + len("\u009c")
		}
		i++
	}
	return i
}

func skipC1Sequence(s string, i int, r rune) (int, bool) {
	switch r {
	case 0x9b: // CSI
		return skipCSI(s, i), true
	case 0x9d, 0x90, 0x98, 0x9e, 0x9f: // OSC, DCS, SOS, PM, APC
		return skipString(s, i), true
	}
	return 0, false
}
