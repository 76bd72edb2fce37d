// Package termsafe is the one rule for untrusted text (run files, remote hosts, configs) on its way to a
// terminal: which runes may not reach it as they are (Hidden), and what each kind of output makes of them.
//
//   - Screen: the dashboard and plain-text commands. Escape sequences go whole; every other control or
//     hidden rune is shown in caret notation or as <U+XXXX>, so it stays visible without acting.
//   - Plain: notifications and tmux messages: one line, blanks one space, hidden runes the marks Screen shows.
//   - JSON: encoded JSON whose strings keep every rune a parser reads back, with hidden ones \u-escaped.
//   - WriteEscaped: Markdown (the brief), where a mark must read as text: \xNN or \uNNNN.
//
// A rune is hidden when printing it as is could act on a terminal (C0, DEL, C1 controls), reorder the text
// around it (bidi controls) or hide inside a word (zero-width spaces, word joiners, the BOM, U+180E, the
// soft hyphen, the zero-width joiners: every Unicode format character). Screen drops ZERO WIDTH JOINER with
// the other width joiners of emoji sequences rather than marking it.
package termsafe

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Hidden reports whether r must not reach a terminal as it is.
func Hidden(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0x80:
		return false
	case r <= 0x9f:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// tabWidth is where tab stops fall, as in every terminal's default.
const tabWidth = 8

// Screen makes untrusted text safe to print in a terminal cell grid. Escape sequences (CSI, OSC including
// clipboard writes and hyperlinks, DCS, SOS, PM, APC, two-byte ESC sequences) are removed whole, because
// printing them visibly would flood a log line with noise while the text around them is what people want
// to read. Every other hidden rune is shown in caret notation (^G, ^H, ^M, ^?) or as <U+XXXX>, so its
// presence stays visible without it acting on the terminal or reordering the line; an 8-bit C1 introducer
// (U+009B CSI) too, with the text after it kept: it is a rune in a name, and never reaches the terminal to
// start anything, so what follows it is text like any other (it ate "31m" of "a\u009b31mb"). Invalid
// UTF-8 becomes U+FFFD, newlines become ^J (callers that want lines split them first, see ScreenLines) and
// tabs expand to the next 8-column stop.
func Screen(s string) string {
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
		emit(shown(r, s[i:i+size]))
		i += size
	}
	return b.String()
}

// shown is what Screen and Plain show for a rune at or above 0x80 (raw, its bytes): a hidden one as
// <U+XXXX>, a width joiner as nothing, any other as itself.
func shown(r rune, raw string) string {
	switch {
	case isWidthJoiner(r):
		// Dropped, ZERO WIDTH JOINER too: terminals disagree on what these do to width. The grapheme-aware
		// measure lipgloss uses counts a ZWJ emoji sequence, an emoji with VS16 or a skin tone as one
		// 2-cell glyph, while tmux 3.3 and wcwidth-based terminals draw ❤️ in 1 cell and 👍🏽 in 4, which
		// moves every pane border after it. Without them each emoji stands alone and every measure agrees.
		return ""
	case Hidden(r):
		return fmt.Sprintf("<U+%04X>", r)
	}
	return raw
}

// ScreenLines splits untrusted multi-line text into Screen lines; a trailing CR of each line (CRLF files)
// is dropped rather than shown.
func ScreenLines(s string) []string {
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = Screen(strings.TrimSuffix(p, "\r"))
	}
	return parts
}

// Plain makes untrusted text fit to travel inside an escape sequence or a tmux message, on one line:
// escape sequences are removed, blanks (tabs, newlines, the Unicode spaces) become one space, every other
// hidden rune is the mark Screen shows for it (^G, <U+200B>), and the text is cut to maxRunes runes (then
// "…"). The result has no byte below 0x20, no 0x7f and no U+0080–U+009F, so it can neither end the sequence
// it travels in nor start another.
func Plain(s string, maxRunes int) string {
	var b strings.Builder
	n, space := 0, false
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			i = skipEscape(s, i)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		raw := s[i : i+size]
		i += size
		var out string
		switch {
		case r == utf8.RuneError && size <= 1:
			out = "\uFFFD"
		case unicode.IsSpace(r) && (r < 0x80 || !Hidden(r)):
			space = b.Len() > 0
			continue
		case r < 0x20:
			out = "^" + string(r+'@')
		case r == 0x7f:
			out = "^?"
		case r < 0x80:
			out = raw
		default:
			out = shown(r, raw)
		}
		if out == "" {
			continue
		}
		if n >= maxRunes {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteString(out)
		n += utf8.RuneCountInString(out)
	}
	return b.String()
}

// JSON escapes, in encoded JSON (valid UTF-8, as encoding/json writes it), the hidden runes encoding/json
// leaves raw: DEL, C1 controls, bidi controls and the other format characters. Every JSON parser reads the
// same strings back; a person who pipes --json straight to a terminal sees \u escapes instead of effects.
func JSON(b []byte) []byte {
	if belowDEL(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for _, r := range string(b) {
		if r >= 0x7f && Hidden(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
			continue
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// belowDEL reports whether every byte of b is below 0x7f, eight at a time: status --json asks it of every
// run's document. A word has a byte at or above 0x7f exactly when adding one to each byte, or the byte
// itself, sets a top bit: a carry between bytes starts only at 0xff, which has its own.
func belowDEL(b []byte) bool {
	const ones, tops = 0x0101010101010101, 0x8080808080808080
	for ; len(b) >= 8; b = b[8:] {
		if w := binary.LittleEndian.Uint64(b); ((w+ones)|w)&tops != 0 {
			return false
		}
	}
	for _, c := range b {
		if c >= 0x7f {
			return false
		}
	}
	return true
}

// WriteEscaped writes r to b, or when r is hidden its escape as text a reader can see: \xNN for C0 and
// DEL, \uNNNN for the rest.
func WriteEscaped(b *strings.Builder, r rune) {
	switch {
	case r < 0x20 || r == 0x7f:
		fmt.Fprintf(b, `\x%02x`, r)
	case Hidden(r):
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		b.WriteRune(r)
	}
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
