package termsafe

import "strings"

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
