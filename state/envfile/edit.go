package envfile

import (
	"fmt"
	"strings"
)

// Set gives key the value. An existing key is edited in place (its last, winning occurrence), keeping the
// line's export prefix, quoting style, trailing comment and line ending; a new key is inserted at its sorted
// position in the convention's written style KEY="value". Keys that cannot be written (see ValidKey) and
// values holding a NUL byte are refused and leave the file unchanged; use TrySet to learn why.
func (f *File) Set(key, value string) { _ = f.TrySet(key, value) }

// TrySet is Set that reports a refusal.
func (f *File) TrySet(key, value string) error {
	if !ValidKey(key) {
		return fmt.Errorf("envfile: key %q cannot be written as KEY=value", key)
	}
	if strings.IndexByte(value, 0) >= 0 {
		return fmt.Errorf("envfile: value for %s holds a NUL byte, which no env file can carry", key)
	}
	if i := f.lastIndex(key); i >= 0 {
		f.lines[i] = editValue(f.lines[i], value)
		return nil
	}
	f.insert(key, value)
	return nil
}

func editValue(ln line, value string) line {
	var token string
	switch {
	case ln.style == styleSingle && !strings.ContainsAny(value, "'\r\n"):
		token = "'" + value + "'"
	case ln.style == styleBare && bareSafe(value):
		token = value
	default:
		// A value the line's own style cannot carry switches the line to double quotes rather than
		// producing a file that reads back differently.
		token = quoteDouble(value)
		ln.style = styleDouble
	}
	ln.text = ln.text[:ln.valStart] + token + ln.text[ln.valEnd:]
	ln.valEnd = ln.valStart + len(token)
	ln.value = value
	return ln
}

// bareSafe limits unquoted values to characters that mean the same to every reader, shells included, so an
// edit of a hand-written KEY=0 line stays KEY=1 but anything richer gets quoted.
func bareSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_-.,:/@%+", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// quoteDouble writes the convention's escaping (\ and "), plus \n and \r for line breaks, which Parse
// decodes the way state_tool.py's unicode_escape reader does. A raw line break would split the entry.
func quoteDouble(v string) string {
	var b strings.Builder
	b.Grow(len(v) + 2)
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// insert adds KEY="value" after the last entry whose key sorts before key (the writers keep keys sorted), or
// before the first entry when none does, or at the end of a file without entries.
func (f *File) insert(key, value string) {
	text := key + "=" + quoteDouble(value)
	nl := line{text: text, kind: kindEntry, key: key, value: value, style: styleDouble,
		valStart: len(key) + 1, valEnd: len(text)}
	pos, first := -1, -1
	for i, ln := range f.lines {
		if ln.kind != kindEntry {
			continue
		}
		if first < 0 {
			first = i
		}
		if ln.key < key {
			pos = i + 1
		}
	}
	switch {
	case pos >= 0:
	case first >= 0:
		pos = first
	default:
		pos = len(f.lines)
	}
	nl.ending = f.dominantEnding()
	if pos == len(f.lines) && pos > 0 && f.lines[pos-1].ending == "" {
		// The file ended without a newline: the old last line needs one now, and the new last line keeps
		// the file's missing final newline.
		f.lines[pos-1].ending = nl.ending
		nl.ending = ""
	}
	f.lines = append(f.lines, line{})
	copy(f.lines[pos+1:], f.lines[pos:])
	f.lines[pos] = nl
}

func (f *File) dominantEnding() string {
	for _, ln := range f.lines {
		if ln.ending != "" {
			return ln.ending
		}
	}
	return "\n"
}
