// Package envfile reads and edits the resumable convention's env files (state.env, checklist.state.env)
// without disturbing them: every line keeps its raw bytes, so an edit changes exactly one value and nothing
// else moves (comments, key order, quoting style, export prefixes, line endings, a BOM).
//
// Syntax (docs/FORMATS.md B.2: what the writers write, and what hand-written templates hold):
//   - one KEY=VALUE per line, split at the first '=', key and value trimmed of ASCII blanks;
//   - blank lines and lines starting with '#' are kept and ignored; lines without '=' are kept and skipped,
//     exactly as the upstream readers skip them;
//   - an optional "export " prefix before the key;
//   - "double quoted" values unescape \\ and \". The upstream state_tool.py reader decodes with Python's
//     unicode_escape, so \n, \t and \r are decoded to newline, tab and carriage return as it would; any other
//     backslash sequence is kept verbatim (that is what envfiles.py and unicode_escape agree on for \$ etc.);
//   - 'single quoted' values are literal;
//   - unquoted values are taken verbatim after trimming, a trailing "# comment" included, as the upstream
//     readers do;
//   - after a closing quote only blanks and a "# comment" may follow;
//   - a later duplicate key wins; "$VAR" is never expanded;
//   - line endings \n, \r\n and a lone \r (Python's universal newlines split there too) are kept per line.
//
// Lines that cannot be understood (a NUL byte, an unterminated quote, a key with blanks) are kept verbatim,
// contribute no entry, and are reported as *ParseError values.
package envfile

import (
	"bytes"
	"fmt"
	"strings"

	"runwatch/model"
)

// MaxSize is the largest env file Parse accepts. Real state files are a few KiB; anything near this is not a
// state file, and refusing it keeps a hostile file from costing memory.
const MaxSize = 1 << 20

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseError names a line that could not be understood. Line is 1-based.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

type quoteStyle uint8

const (
	styleBare quoteStyle = iota
	styleDouble
	styleSingle
)

type lineKind uint8

const (
	kindBlank lineKind = iota
	kindComment
	kindEntry
	kindNoEquals // skipped by every reader, kept verbatim
	kindBad      // not understood: kept verbatim and reported
)

type line struct {
	text   string // the line without its ending; for unedited lines exactly the bytes read
	ending string // "\n", "\r\n", "\r" or "" (last line without a newline)
	key    string
	value  string // unescaped
	kind   lineKind
	export bool
	style  quoteStyle
	// valStart..valEnd is the value token inside text, quotes included, so an edit can replace just it.
	valStart, valEnd int
}

// File is a parsed env file that can be edited and written back byte-for-byte.
type File struct {
	bom   bool
	lines []line
	errs  []*ParseError
}

// Parse reads an env file. On malformed lines it returns the first *ParseError, and the File still holds
// every line (the good ones usable through Get/Entries). Input larger than MaxSize is refused with a
// *SizeError and an empty File.
func Parse(data []byte) (*File, error) {
	if len(data) > MaxSize {
		return &File{}, &SizeError{Size: int64(len(data)), Limit: MaxSize}
	}
	return parse(string(data)) // a copy: the File must not alias the caller's buffer
}

// parse is Parse of text the File may keep.
func parse(s string) (*File, error) {
	f := &File{}
	if len(s) > MaxSize {
		return f, &SizeError{Size: int64(len(s)), Limit: MaxSize}
	}
	if strings.HasPrefix(s, "\uFEFF") {
		f.bom = true
		s = s[len(utf8BOM):]
	}
	f.lines = make([]line, 0, strings.Count(s, "\n")+1)
	for n := 1; len(s) > 0; n++ {
		text, ending, rest := cutLine(s)
		s = rest
		ln, msg := parseLine(text)
		ln.ending = ending
		if msg != "" {
			ln = line{text: text, ending: ending, kind: kindBad}
			f.errs = append(f.errs, &ParseError{Line: n, Msg: msg})
		}
		f.lines = append(f.lines, ln)
	}
	if len(f.errs) > 0 {
		return f, f.errs[0]
	}
	return f, nil
}

// cutLine splits off the first line and its ending.
func cutLine(s string) (text, ending, rest string) {
	i := strings.IndexAny(s, "\r\n")
	if i < 0 {
		return s, "", ""
	}
	if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
		return s[:i], "\r\n", s[i+2:]
	}
	return s[:i], s[i : i+1], s[i+1:]
}

// blanks are the characters trimmed around keys and values. ASCII only: trimming Unicode spaces would make
// valEnd point into the middle of what a person sees as the value.
const blanks = " \t\v\f"

func parseLine(text string) (line, string) {
	ln := line{text: text}
	if strings.IndexByte(text, 0) >= 0 {
		return ln, "contains a NUL byte"
	}
	t := strings.Trim(text, blanks)
	switch {
	case t == "":
		ln.kind = kindBlank
		return ln, ""
	case t[0] == '#':
		ln.kind = kindComment
		return ln, ""
	}
	eq := strings.IndexByte(text, '=')
	if eq < 0 {
		ln.kind = kindNoEquals
		return ln, ""
	}
	key := strings.Trim(text[:eq], blanks)
	if rest, ok := cutExport(key); ok {
		key, ln.export = rest, true
	}
	if key == "" {
		return ln, "no key before '='"
	}
	if !ValidKey(key) {
		return ln, fmt.Sprintf("key %q contains blanks, quotes or control characters", key)
	}
	ln.kind, ln.key = kindEntry, key

	afterEq := text[eq+1:]
	v := strings.TrimLeft(afterEq, blanks)
	start := eq + 1 + len(afterEq) - len(v)
	ln.valStart = start
	switch {
	case strings.HasPrefix(v, `"`):
		val, end, ok := scanDouble(v)
		if !ok {
			return ln, "unterminated double quote"
		}
		if !onlyComment(v[end:]) {
			return ln, "unexpected text after the closing double quote"
		}
		ln.value, ln.style, ln.valEnd = val, styleDouble, start+end
	case strings.HasPrefix(v, "'"):
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return ln, "unterminated single quote"
		}
		end += 2
		if !onlyComment(v[end:]) {
			return ln, "unexpected text after the closing single quote"
		}
		ln.value, ln.style, ln.valEnd = v[1:end-1], styleSingle, start+end
	default:
		val := strings.TrimRight(v, blanks)
		ln.value, ln.style, ln.valEnd = val, styleBare, start+len(val)
	}
	return ln, ""
}

func cutExport(key string) (string, bool) {
	const kw = "export"
	if len(key) > len(kw) && strings.HasPrefix(key, kw) && strings.IndexByte(blanks, key[len(kw)]) >= 0 {
		return strings.TrimLeft(key[len(kw):], blanks), true
	}
	return key, false
}

// scanDouble reads a double-quoted value starting at v[0] == '"'. end is the index just past the closing
// quote.
func scanDouble(v string) (val string, end int, ok bool) {
	// Most values hold no escapes: then the value is a slice of the line, no copy needed.
	if q := strings.IndexByte(v[1:], '"'); q >= 0 && strings.IndexByte(v[1:1+q], '\\') < 0 {
		return v[1 : 1+q], q + 2, true
	}
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			return b.String(), i + 1, true
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case '\\', '"':
				b.WriteByte(v[i])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte('\\')
				b.WriteByte(v[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

func onlyComment(tail string) bool {
	t := strings.TrimLeft(tail, blanks)
	return t == "" || t[0] == '#'
}

// ValidKey reports whether key can be written as a KEY=... line that reads back as the same key.
func ValidKey(key string) bool {
	if key == "" || key[0] == '#' {
		return false
	}
	if _, isExport := cutExport(key); isExport {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c <= ' ' || c == 0x7f || c == '=' || c == '"' || c == '\'' {
			return false
		}
	}
	return true
}

// Errors returns every malformed line, in file order.
func (f *File) Errors() []*ParseError { return f.errs }

// Get returns the effective value of key: the last occurrence wins.
func (f *File) Get(key string) (string, bool) {
	if i := f.lastIndex(key); i >= 0 {
		return f.lines[i].value, true
	}
	return "", false
}

func (f *File) lastIndex(key string) int {
	for i := len(f.lines) - 1; i >= 0; i-- {
		if f.lines[i].kind == kindEntry && f.lines[i].key == key {
			return i
		}
	}
	return -1
}

// Entries returns the effective key/values in file order. A duplicated key appears once, at the position
// of its last (winning) occurrence. The entries do not share the file's text: a watcher keeps every run's
// entries for as long as it shows the run, and a substring would keep the whole text (its comments, quotes
// and line endings) along. Keys are interned, as the same keys recur in every run of a task; the values are
// one copy (issue 35).
func (f *File) Entries() []model.KV {
	last := map[string]int{}
	for i, ln := range f.lines {
		if ln.kind == kindEntry {
			last[ln.key] = i
		}
	}
	n := 0
	for _, i := range last {
		n += len(f.lines[i].value)
	}
	var b strings.Builder
	b.Grow(n)
	for i, ln := range f.lines {
		if ln.kind == kindEntry && last[ln.key] == i {
			b.WriteString(ln.value)
		}
	}
	values := b.String()
	out := make([]model.KV, 0, len(last))
	for i, ln := range f.lines {
		if ln.kind == kindEntry && last[ln.key] == i {
			v := values[:len(ln.value)]
			values = values[len(v):]
			out = append(out, model.KV{Key: model.Intern(ln.key), Value: v})
		}
	}
	return out
}

// Bytes returns the file's content. Lines that were not edited come back byte-for-byte.
func (f *File) Bytes() []byte {
	n := 0
	for _, ln := range f.lines {
		n += len(ln.text) + len(ln.ending)
	}
	var b bytes.Buffer
	b.Grow(n + len(utf8BOM))
	if f.bom {
		b.Write(utf8BOM)
	}
	for _, ln := range f.lines {
		b.WriteString(ln.text)
		b.WriteString(ln.ending)
	}
	return b.Bytes()
}

// Comment is a "# …" note a person left beside an entry. Line is 1-based.
type Comment struct {
	Line int
	Text string
}

// Comments returns the notes beside key's effective (last) line: the comment lines directly above it, with
// no blank line between, then a "# …" after its quoted value. The writers drop comments when they save, so
// these survive only in files a person kept by hand; an unquoted value's "# …" is part of the value, as the
// upstream readers read it, and is not a comment.
func (f *File) Comments(key string) []Comment {
	i := f.lastIndex(key)
	if i < 0 {
		return nil
	}
	start := i
	for start > 0 && f.lines[start-1].kind == kindComment {
		start--
	}
	var out []Comment
	for j := start; j < i; j++ {
		if t := commentText(f.lines[j].text); t != "" {
			out = append(out, Comment{Line: j + 1, Text: t})
		}
	}
	if ln := f.lines[i]; ln.style != styleBare {
		if t := commentText(ln.text[ln.valEnd:]); t != "" {
			out = append(out, Comment{Line: i + 1, Text: t})
		}
	}
	return out
}

func commentText(s string) string {
	t := strings.TrimLeft(s, blanks)
	if !strings.HasPrefix(t, "#") {
		return ""
	}
	return strings.Trim(strings.TrimLeft(t, "#"), blanks)
}
