// Package shellword is the one way runwatch quotes a word for a shell: the commands it shows a person to
// paste (a brief, a next step, a tmux attach), the scripts it sends a host's sh, the lines of its benchmarks.
//
// A word is left bare when it is made only of characters no shell gives a meaning (letters, digits and
// -_./:@%+=, not starting with = or %self, which zsh and fish expand); otherwise it is single-quoted, with each ' and \ put
// between double quotes outside the single quotes ("'" and "\\"). That spelling means the same bytes to sh,
// bash, zsh and fish: fish reads \' and \\ inside single quotes as escapes, so the POSIX spelling 'a\'
// would not end there.
package shellword

import "strings"

// Quote returns s as one word of a command line.
func Quote(s string) string {
	if bare(s) {
		return s
	}
	if s == "" {
		return "''"
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	open := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' || c == '\\' {
			if open {
				b.WriteByte('\'')
				open = false
			}
			if c == '\'' {
				b.WriteString(`"'"`)
			} else {
				b.WriteString(`"\\"`)
			}
			continue
		}
		if !open {
			b.WriteByte('\'')
			open = true
		}
		b.WriteByte(c)
	}
	if open {
		b.WriteByte('\'')
	}
	return b.String()
}

// Line returns argv as one command line, each word quoted when it needs to be.
func Line(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = Quote(a)
	}
	return strings.Join(parts, " ")
}

func bare(s string) bool {
	if s == "" || s[0] == '=' || strings.HasPrefix(s, "%self") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_./:@%+=,", c) >= 0:
		default:
			return false
		}
	}
	return true
}
