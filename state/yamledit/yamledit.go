// Package yamledit changes values in a YAML document (a jonggrang MANIFEST.yaml) while keeping every other
// byte where it was: comments, key order, quoting, indentation and line endings.
//
// A scalar is changed by splicing its new text over the old at the node's position (yaml.Node Line/Column),
// so a one-word change is a one-word diff. Structural edits (a block or flow value replaced by a scalar, a key
// that does not exist yet) rewrite only the value's own lines. Every result is parsed again and compared,
// node by node, with the old tree plus the intended changes; any other difference is an error and nothing
// is returned. The decoder works on yaml.Node only, which does not expand aliases, so an alias bomb costs
// nothing here.
package yamledit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// MaxBytes caps the documents we edit; real manifests are a few KiB.
const MaxBytes = 1 << 20

// Value is a scalar to write. Make one with String, Number, Bool or Null.
type Value struct {
	kind valueKind
	text string
}

type valueKind int

const (
	kindString valueKind = iota
	kindNumber
	kindNull
)

// String is a string value. Strings that would read back as another type (timestamps, numbers, true, null)
// are single-quoted, the way js-yaml writes them.
func String(s string) Value { return Value{kind: kindString, text: s} }

// Number is a decimal number value such as 10 or 6.5; the text is written as is.
func Number(text string) Value { return Value{kind: kindNumber, text: text} }

// Null is YAML null.
func Null() Value { return Value{kind: kindNull, text: "null"} }

func (v Value) String() string { return v.text }

// Edit sets the value at Path (mapping keys from the document root) to Value, adding the last key to its
// block mapping when it does not exist yet.
type Edit struct {
	Path  []string
	Value Value
}

// Parse decodes one YAML document into a node tree, refusing documents we would not edit safely.
func Parse(data []byte) (*yaml.Node, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("document is %d bytes, more than the %d we edit", len(data), MaxBytes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("file holds more than one YAML document")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("top level is not a mapping")
	}
	return doc.Content[0], nil
}

// Lookup returns the value node at path under a mapping, or nil.
func Lookup(root *yaml.Node, path ...string) *yaml.Node {
	n := root
	for _, k := range path {
		_, v := pair(n, k)
		if v == nil {
			return nil
		}
		n = v
	}
	return n
}

func pair(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	var k, v *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Kind == yaml.ScalarNode && m.Content[i].Value == key {
			k, v = m.Content[i], m.Content[i+1] // a later duplicate wins, as in js-yaml
		}
	}
	return k, v
}

// Apply returns data with every edit made, or an error and no bytes.
func Apply(data []byte, edits []Edit) ([]byte, error) {
	root, err := Parse(data)
	if err != nil {
		return nil, err
	}
	s := newSource(data)
	var splices []splice
	for i, e := range edits {
		if !utf8.ValidString(e.Value.text) || !utf8.ValidString(strings.Join(e.Path, "")) {
			// YAML text is UTF-8: such a value could not be written so that it reads back the same.
			return nil, fmt.Errorf("set %s: value is not valid UTF-8", strings.Join(e.Path, "."))
		}
		sp, err := s.plan(root, e)
		if err != nil {
			return nil, fmt.Errorf("set %s: %w", strings.Join(e.Path, "."), err)
		}
		sp.order = i
		splices = append(splices, sp)
	}
	sort.SliceStable(splices, func(i, j int) bool {
		if splices[i].start != splices[j].start {
			return splices[i].start < splices[j].start
		}
		return splices[i].order < splices[j].order
	})
	var out bytes.Buffer
	pos := 0
	for _, sp := range splices {
		if sp.start < pos {
			return nil, errors.New("two edits touch the same bytes")
		}
		out.Write(data[pos:sp.start])
		out.WriteString(sp.text)
		pos = sp.end
	}
	out.Write(data[pos:])
	result := out.Bytes()
	if err := verify(root, result, edits); err != nil {
		return nil, fmt.Errorf("edit check failed, nothing written: %w", err)
	}
	return result, nil
}

type splice struct {
	start, end int
	text       string
	order      int
}

type source struct {
	data      []byte
	lineStart []int // byte offset of each line, 1-based index (lineStart[0] unused)
	nl        string
}

func newSource(data []byte) *source {
	s := &source{data: data, lineStart: []int{0, 0}, nl: "\n"}
	for i, b := range data {
		if b == '\n' {
			s.lineStart = append(s.lineStart, i+1)
		}
	}
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		s.nl = "\r\n"
	}
	return s
}

// offset converts a yaml.Node position (1-based line, 1-based column in characters) to a byte offset.
func (s *source) offset(line, col int) (int, error) {
	if line < 1 || line >= len(s.lineStart) {
		return 0, fmt.Errorf("line %d out of range", line)
	}
	off := s.lineStart[line]
	for c := 1; c < col; c++ {
		if off >= len(s.data) || s.data[off] == '\n' {
			return 0, fmt.Errorf("column %d out of range on line %d", col, line)
		}
		_, w := utf8.DecodeRune(s.data[off:])
		off += w
	}
	return off, nil
}

// lineEnd is the offset of the line terminator (\r\n or \n) of the line holding off, or len(data).
func (s *source) lineEnd(off int) int {
	i := bytes.IndexByte(s.data[off:], '\n')
	if i < 0 {
		return len(s.data)
	}
	end := off + i
	if end > off && s.data[end-1] == '\r' {
		end--
	}
	return end
}

// scalarEnd finds where a single-line scalar that starts at off ends; ok is false for block scalars and
// scalars that continue on the next line.
func (s *source) scalarEnd(off int, n *yaml.Node, inFlow bool) (int, bool) {
	eol := s.lineEnd(off)
	if off >= eol {
		return off, false
	}
	switch s.data[off] {
	case '\'':
		for i := off + 1; i < eol; i++ {
			if s.data[i] == '\'' {
				if i+1 < eol && s.data[i+1] == '\'' {
					i++
					continue
				}
				return i + 1, true
			}
		}
		return 0, false
	case '"':
		for i := off + 1; i < eol; i++ {
			switch s.data[i] {
			case '\\':
				i++
			case '"':
				return i + 1, true
			}
		}
		return 0, false
	case '|', '>':
		return 0, false
	}
	end := off
	for i := off; i < eol; i++ {
		c := s.data[i]
		if c == '#' && i > off && (s.data[i-1] == ' ' || s.data[i-1] == '\t') {
			break
		}
		if inFlow && (c == ',' || c == '}' || c == ']') {
			break
		}
		if c == ':' && (i+1 == eol || s.data[i+1] == ' ' || s.data[i+1] == '\t') {
			break
		}
		end = i + 1
	}
	for end > off && (s.data[end-1] == ' ' || s.data[end-1] == '\t') {
		end--
	}
	// A plain scalar folded over several lines reads back as more than this line holds.
	if string(s.data[off:end]) != n.Value {
		return 0, false
	}
	return end, true
}

func (s *source) plan(root *yaml.Node, e Edit) (splice, error) {
	if len(e.Path) == 0 {
		return splice{}, errors.New("empty path")
	}
	parent := Lookup(root, e.Path[:len(e.Path)-1]...)
	if parent == nil || parent.Kind != yaml.MappingNode {
		return splice{}, errors.New("parent is not a mapping")
	}
	inFlow := parent.Style&yaml.FlowStyle != 0
	key, val := pair(parent, e.Path[len(e.Path)-1])
	if key == nil {
		if inFlow || len(parent.Content) == 0 {
			return splice{}, errors.New("key is missing and its mapping is not a block mapping")
		}
		return s.insertKey(parent, e.Path[len(e.Path)-1], e.Value)
	}
	text := format(e.Value, val)
	if val.Kind == yaml.ScalarNode && val.Line == key.Line && val.Value != "" || val.Kind == yaml.ScalarNode && val.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 {
		start, err := s.offset(val.Line, val.Column)
		if err != nil {
			return splice{}, err
		}
		if end, ok := s.scalarEnd(start, val, inFlow); ok {
			return splice{start: start, end: end, text: text}, nil
		}
	}
	if inFlow {
		return splice{}, errors.New("value inside a flow mapping is not a single-line scalar")
	}
	start, end, err := s.valueRegion(key, val)
	if err != nil {
		return splice{}, err
	}
	return splice{start: start, end: end, text: " " + text}, nil
}

// valueRegion is the span from just after "key:" to the end of the value's last line: what a structural
// replacement of the value rewrites. Block structure is indentation, so the value's lines are those indented
// deeper than the key (plus "- " items at the key's own indent, which YAML allows for sequences).
func (s *source) valueRegion(key, val *yaml.Node) (int, int, error) {
	kstart, err := s.offset(key.Line, key.Column)
	if err != nil {
		return 0, 0, err
	}
	kend, ok := s.scalarEnd(kstart, key, false)
	if !ok {
		return 0, 0, errors.New("key is not a single-line scalar")
	}
	i := kend
	for i < len(s.data) && (s.data[i] == ' ' || s.data[i] == '\t') {
		i++
	}
	if i >= len(s.data) || s.data[i] != ':' {
		return 0, 0, errors.New("no ':' after the key")
	}
	start := i + 1
	end := s.lineEnd(start)
	indent := key.Column - 1
	for line := key.Line + 1; line < len(s.lineStart); line++ {
		ls := s.lineStart[line]
		le := s.lineEnd(ls)
		body := s.data[ls:le]
		trimmed := bytes.TrimLeft(body, " ")
		if len(bytes.TrimSpace(trimmed)) == 0 || trimmed[0] == '#' {
			continue
		}
		ind := len(body) - len(trimmed)
		seqItem := val.Kind == yaml.SequenceNode && ind == indent && trimmed[0] == '-' && (len(trimmed) == 1 || trimmed[1] == ' ')
		if ind <= indent && !seqItem {
			break
		}
		end = le
	}
	return start, end, nil
}

func (s *source) insertKey(m *yaml.Node, key string, v Value) (splice, error) {
	lastKey, lastVal := m.Content[len(m.Content)-2], m.Content[len(m.Content)-1]
	_, end, err := s.valueRegion(lastKey, lastVal)
	if err != nil {
		return splice{}, err
	}
	indent := strings.Repeat(" ", m.Content[0].Column-1)
	line := indent + format(String(key), nil) + ": " + format(v, nil)
	// Insert after the last value's line terminator; a file without a final newline gets one first.
	at := end
	prefix := ""
	switch {
	case at < len(s.data) && s.data[at] == '\r':
		at += 2
	case at < len(s.data):
		at++
	default:
		prefix = s.nl
	}
	return splice{start: at, end: at, text: prefix + line + s.nl}, nil
}

var plainSafe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_./-]*$`)

// format renders v as YAML scalar text. old (may be nil) is the node being replaced: a double-quoted string
// stays double-quoted.
func format(v Value, old *yaml.Node) string {
	switch v.kind {
	case kindNull, kindNumber:
		return v.text
	}
	// Single quotes fold line breaks into spaces and cannot escape anything, so text with a control character
	// goes double-quoted; for valid UTF-8, Go's escapes (\r, \t, \x7f, \u2028) are YAML's escapes too.
	if (old != nil && old.Style&yaml.DoubleQuotedStyle != 0) || strings.IndexFunc(v.text, needsEscape) >= 0 {
		return strconv.Quote(v.text)
	}
	if plainSafe.MatchString(v.text) && resolvesToString(v.text) {
		return v.text
	}
	return "'" + strings.ReplaceAll(v.text, "'", "''") + "'"
}

func needsEscape(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }

func resolvesToString(plain string) bool {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(plain), &n); err != nil || len(n.Content) != 1 {
		return false
	}
	return n.Content[0].Tag == "!!str"
}

// scalarNode is what v must read back as. For a string that is its exact text: comparing against how format
// encodes it would let an encoding that changes the text (a folded line break) verify against itself.
func scalarNode(v Value) *yaml.Node {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(format(v, nil)), &n); err != nil || len(n.Content) != 1 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v.text}
	}
	if v.kind == kindString {
		n.Content[0].Value = v.text
	}
	return n.Content[0]
}

// verify parses result and checks it equals the old tree with exactly the edits applied.
func verify(oldRoot *yaml.Node, result []byte, edits []Edit) error {
	newRoot, err := Parse(result)
	if err != nil {
		return fmt.Errorf("result does not parse: %w", err)
	}
	want := clone(oldRoot)
	for _, e := range edits {
		parent := Lookup(want, e.Path[:len(e.Path)-1]...)
		k, _ := pair(parent, e.Path[len(e.Path)-1])
		nv := scalarNode(e.Value)
		if k == nil {
			parent.Content = append(parent.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: e.Path[len(e.Path)-1]}, nv)
			continue
		}
		for i := 0; i+1 < len(parent.Content); i += 2 {
			if parent.Content[i] == k {
				parent.Content[i+1] = nv
			}
		}
	}
	return equal(want, newRoot, "")
}

func clone(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = clone(ch)
	}
	return &c
}

func equal(a, b *yaml.Node, at string) error {
	if a.Kind != b.Kind || a.ShortTag() != b.ShortTag() || a.Kind != yaml.MappingNode && a.Kind != yaml.SequenceNode && a.Value != b.Value {
		return fmt.Errorf("at %q: expected %s %q, got %s %q", at, a.ShortTag(), a.Value, b.ShortTag(), b.Value)
	}
	if len(a.Content) != len(b.Content) {
		return fmt.Errorf("at %q: expected %d children, got %d", at, len(a.Content), len(b.Content))
	}
	if a.Kind == yaml.AliasNode {
		return nil
	}
	for i := range a.Content {
		p := at + "/" + strconv.Itoa(i)
		if a.Kind == yaml.MappingNode && i%2 == 1 {
			p = at + "/" + a.Content[i-1].Value
		}
		if err := equal(a.Content[i], b.Content[i], p); err != nil {
			return err
		}
	}
	return nil
}
