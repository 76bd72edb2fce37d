package launch

import (
	"errors"
	"strings"
)

// word is one template word: its text with quotes removed, and whether any part was quoted (a quoted empty
// word is still an argument).
type word struct {
	text   string
	quoted bool
}

// splitWords splits a command template like a POSIX shell splits words: blanks separate, '...' is literal,
// "..." keeps blanks (backslash escapes only \ " $ `), a backslash outside quotes escapes the next character.
// A {{ ... }} action is copied whole wherever it appears, so its own spaces and quotes belong to the template.
func splitWords(s string) ([]word, error) {
	var words []word
	var cur strings.Builder
	inWord, quoted := false, false
	flush := func() {
		if inWord {
			words = append(words, word{text: cur.String(), quoted: quoted})
		}
		cur.Reset()
		inWord, quoted = false, false
	}
	// copyAction copies a {{ ... }} action starting at i and returns the index after it.
	copyAction := func(i int) (int, error) {
		end := strings.Index(s[i+2:], "}}")
		if end < 0 {
			return 0, errors.New("unclosed {{ action")
		}
		end += i + 4
		cur.WriteString(s[i:end])
		return end, nil
	}
	state := byte(0) // 0, '\'' or '"'
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "{{") {
			next, err := copyAction(i)
			if err != nil {
				return nil, err
			}
			inWord, i = true, next
			continue
		}
		c := s[i]
		switch state {
		case '\'':
			if c == '\'' {
				state = 0
			} else {
				cur.WriteByte(c)
			}
			i++
		case '"':
			switch {
			case c == '"':
				state = 0
			case c == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0:
				cur.WriteByte(s[i+1])
				i++
			default:
				cur.WriteByte(c)
			}
			i++
		default:
			switch c {
			case ' ', '\t', '\n', '\r':
				flush()
			case '\'', '"':
				state, inWord, quoted = c, true, true
			case '\\':
				if i+1 < len(s) {
					i++
					if s[i] != '\n' {
						cur.WriteByte(s[i])
						inWord = true
					}
				}
			default:
				cur.WriteByte(c)
				inWord = true
			}
			i++
		}
	}
	if state != 0 {
		return nil, errors.New("unterminated " + string(state) + " quote")
	}
	flush()
	return words, nil
}

// Program is the first word of a command template as written (before any value is inserted), for a config
// loader to judge where the program would be found.
func Program(tmpl string) (string, error) {
	words, err := splitWords(tmpl)
	if err != nil || len(words) == 0 {
		return "", err
	}
	return words[0].text, nil
}
