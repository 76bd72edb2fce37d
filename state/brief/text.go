package brief

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"runwatch/termsafe"
)

// maxValueRunes caps one untrusted value inside a sentence: a brief is pasted into an agent, so a runaway
// error message must not drown the instructions around it.
const maxValueRunes = 400

// oneLine makes an untrusted value safe to embed in a sentence: one line (so a value cannot start a Markdown
// heading or a fake instruction of its own), valid UTF-8, control and bidi characters shown escaped, capped.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if n == maxValueRunes {
			fmt.Fprintf(&b, "… (%d more bytes)", len(s)-i+size)
			break
		}
		n++
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		default:
			termsafe.WriteEscaped(&b, r)
		}
	}
	return b.String()
}

// neutralize is the last pass over a whole rendered document: every line break stays, anything else that
// could act on a terminal is shown escaped. Values were already made one-line where they were embedded.
func neutralize(doc string) string {
	var b strings.Builder
	b.Grow(len(doc))
	for i := 0; i < len(doc); {
		r, size := utf8.DecodeRuneInString(doc[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n':
			b.WriteByte('\n')
		default:
			termsafe.WriteEscaped(&b, r)
		}
	}
	return b.String()
}

// code renders an untrusted value as inline Markdown code, with a fence longer than any backtick run inside.
func code(s string) string {
	s = oneLine(s)
	if s == "" {
		return "(empty)"
	}
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 || strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// quoted renders an untrusted free-text value inside quotation marks.
func quoted(s string) string { return "“" + oneLine(s) + "”" }

func itoa(n int) string { return strconv.Itoa(n) }
