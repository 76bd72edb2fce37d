package sim

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reproduces what js-yaml 4 `dump(obj, {lineWidth: -1})` writes, for the value shapes a jonggrang
// MANIFEST.yaml holds: ordered maps, lists, strings, numbers, booleans and null. The simulator must write the
// bytes the real writer writes, so quirks are kept on purpose: integer-like keys come first in ascending order
// (JavaScript object key order), strings that another YAML type would claim are single-quoted, empty
// collections are written inline as [] and {}.

// yMap is an ordered YAML mapping. Key order is the JavaScript insertion order; dumpYAML applies the
// integer-keys-first rule itself.
type yMap []yKV

type yKV struct {
	Key   string
	Value any
}

// yList is a YAML sequence.
type yList []any

// dumpYAML renders a top-level mapping the way js-yaml does, ending with a newline.
func dumpYAML(m yMap) ([]byte, error) {
	var b bytes.Buffer
	if len(m) == 0 {
		b.WriteString("{}\n")
		return b.Bytes(), nil
	}
	if err := writeYAMLMap(&b, m, 0, false); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeYAMLMap writes the entries of m at indent. When inList is true the first entry follows a "- " that
// the caller already wrote.
func writeYAMLMap(b *bytes.Buffer, m yMap, indent int, inList bool) error {
	for i, kv := range jsKeyOrder(m) {
		if i > 0 || !inList {
			b.WriteString(strings.Repeat(" ", indent))
		}
		b.WriteString(yamlString(kv.Key, 0, true))
		b.WriteByte(':')
		if err := writeYAMLValue(b, kv.Value, indent); err != nil {
			return fmt.Errorf("%s: %w", kv.Key, err)
		}
	}
	return nil
}

// writeYAMLValue writes what follows "key:" (or "-"): an inline scalar or empty collection, or a newline and
// a nested block. Nested blocks are indented two spaces below their parent, lists included (js-yaml's
// default noArrayIndent: false).
func writeYAMLValue(b *bytes.Buffer, v any, indent int) error {
	switch x := v.(type) {
	case yMap:
		if len(x) == 0 {
			b.WriteString(" {}\n")
			return nil
		}
		b.WriteByte('\n')
		return writeYAMLMap(b, x, indent+2, false)
	case yList:
		if len(x) == 0 {
			b.WriteString(" []\n")
			return nil
		}
		b.WriteByte('\n')
		return writeYAMLList(b, x, indent+2)
	}
	s, err := yamlScalar(v, indent+2)
	if err != nil {
		return err
	}
	b.WriteByte(' ')
	b.WriteString(s)
	b.WriteByte('\n')
	return nil
}

func writeYAMLList(b *bytes.Buffer, l yList, indent int) error {
	for _, item := range l {
		b.WriteString(strings.Repeat(" ", indent))
		b.WriteByte('-')
		switch x := item.(type) {
		case yMap:
			if len(x) > 0 {
				b.WriteByte(' ')
				if err := writeYAMLMap(b, x, indent+2, true); err != nil {
					return err
				}
				continue
			}
		case yList:
			if len(x) > 0 {
				// js-yaml writes a nested list as "- - a" with the rest aligned under the inner dash.
				b.WriteByte(' ')
				var inner bytes.Buffer
				if err := writeYAMLList(&inner, x, indent+2); err != nil {
					return err
				}
				b.Write(inner.Bytes()[indent+2:])
				continue
			}
		}
		if err := writeYAMLValue(b, item, indent); err != nil {
			return err
		}
	}
	return nil
}

// jsKeyOrder returns m's entries in JavaScript object key order: keys that are array indices (canonical
// decimal integers below 2^32-1) first, ascending, then every other key in insertion order. This is why
// '6.5' is written after '17'.
func jsKeyOrder(m yMap) []yKV {
	var ints, rest []yKV
	for _, kv := range m {
		if _, ok := arrayIndex(kv.Key); ok {
			ints = append(ints, kv)
		} else {
			rest = append(rest, kv)
		}
	}
	if len(ints) == 0 {
		return m
	}
	// Insertion sort keeps this allocation-free and stable for the small maps a manifest holds.
	for i := 1; i < len(ints); i++ {
		for j := i; j > 0; j-- {
			a, _ := arrayIndex(ints[j-1].Key)
			c, _ := arrayIndex(ints[j].Key)
			if a <= c {
				break
			}
			ints[j-1], ints[j] = ints[j], ints[j-1]
		}
	}
	return append(ints, rest...)
}

func arrayIndex(k string) (uint64, bool) {
	if k == "" || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	if err != nil || n >= math.MaxUint32 {
		return 0, false
	}
	return n, true
}

// yamlScalar renders a scalar value as js-yaml's representers do. indent is where the lines of a block
// literal go (two spaces deeper than the key or dash the value belongs to).
func yamlScalar(v any, indent int) (string, error) {
	switch x := v.(type) {
	case nil:
		return "null", nil
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return jsNumber(x), nil
	case string:
		return yamlString(x, indent, false), nil
	case *string:
		if x == nil {
			return "null", nil
		}
		return yamlString(*x, indent, false), nil
	}
	return "", fmt.Errorf("cannot write %T as YAML", v)
}

// jsNumber formats a number as js-yaml does: integers (the int type) with Number.prototype.toString,
// other numbers (the float type) the same way but with a dot forced into an exponent form ("5.e-100"), and
// the specials as .nan, .inf, -.inf, -0.0.
func jsNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	case f == 0 && math.Signbit(f):
		return "-0.0"
	}
	s := jsToString(f)
	if f != math.Trunc(f) && scientificWithoutDot.MatchString(s) {
		s = strings.Replace(s, "e", ".e", 1)
	}
	return s
}

var scientificWithoutDot = regexp.MustCompile(`^[-+]?[0-9]+e`)

// jsToString is Number.prototype.toString(10): the shortest digits that round-trip, in fixed notation for
// magnitudes from 1e-6 up to 1e21 and in exponent notation ("1e+21", "1.5e-7") outside that.
func jsToString(f float64) string {
	if a := math.Abs(f); a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	return mant + "e" + exp[:1] + strings.TrimLeft(exp[1:], "0")
}

// The scalar styles js-yaml chooses between (lineWidth -1, so never folded).
const (
	stylePlain = iota
	styleSingle
	styleLiteral
	styleDouble
)

// yamlString writes a string the way js-yaml's writeScalar does: ” for empty, YAML 1.1 booleans and
// base-60 numbers single-quoted, then plain when that is safe and no schema type would claim the text,
// single-quoted when only the type is the problem, a |-style literal block for multi-line text (not for
// keys), and double quotes with escapes when a character is not printable. This mirrors js-yaml 4.3.2.
func yamlString(s string, indent int, key bool) string {
	if s == "" {
		return "''"
	}
	if deprecatedBoolean[s] || base60.MatchString(s) {
		return "'" + s + "'"
	}
	switch chooseStyle(s, key) {
	case stylePlain:
		return s
	case styleSingle:
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	case styleLiteral:
		return "|" + blockHeader(s) + strings.TrimSuffix(indentLines(s, indent), "\n")
	}
	return `"` + escapeDouble(s) + `"`
}

func chooseStyle(s string, singleLine bool) int {
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	plain := plainSafeFirst(first) && !isWhite(last) && last != ':'
	hasBreak := false
	prev := rune(-1)
	for i, c := range s {
		if c == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return styleDouble // not text a JavaScript string could hold
			}
		}
		if c == '\n' && !singleLine {
			hasBreak = true
		} else if !isPrintable(c) {
			return styleDouble
		}
		plain = plain && plainSafe(c, prev)
		prev = c
	}
	if !hasBreak {
		if plain && !ambiguousType(s) {
			return stylePlain
		}
		return styleSingle
	}
	return styleLiteral
}

// isPrintable is YAML's nb-char less tab, NEL, NBSP, the line and paragraph separators and the BOM.
func isPrintable(c rune) bool {
	return (c >= 0x20 && c <= 0x7e) ||
		(c >= 0xa1 && c <= 0xd7ff && c != 0x2028 && c != 0x2029) ||
		(c >= 0xe000 && c <= 0xfffd && c != 0xfeff) ||
		(c >= 0x10000 && c <= 0x10ffff)
}

func isWhite(c rune) bool { return c == ' ' || c == '\t' }

func isNsOrWhite(c rune) bool { return isPrintable(c) && c != 0xfeff && c != '\r' && c != '\n' }

func plainSafeFirst(c rune) bool {
	return isPrintable(c) && c != 0xfeff && !isWhite(c) && !strings.ContainsRune("-?:,[]{}#&*!|=>'\"%@`", c)
}

// plainSafe is js-yaml's isPlainSafe in block context: no " #" and no ": ", but "a#b" and "a:b" are fine.
func plainSafe(c, prev rune) bool {
	cNsOrWhite := isNsOrWhite(c)
	cNs := cNsOrWhite && !isWhite(c)
	return (cNsOrWhite && c != '#' && !(prev == ':' && !cNs)) ||
		(prev >= 0 && isNsOrWhite(prev) && !isWhite(prev) && c == '#') ||
		(prev == ':' && cNs)
}

// blockHeader is the literal block's indentation indicator (when the text starts with a space) and its
// chomping indicator: "-" without a final newline, "" with one, "+" with more.
func blockHeader(s string) string {
	indicator := ""
	if strings.HasPrefix(strings.TrimLeft(s, "\n"), " ") {
		indicator = "2"
	}
	chomp := "-"
	if strings.HasSuffix(s, "\n") {
		chomp = ""
		if strings.HasSuffix(s, "\n\n") || s == "\n" {
			chomp = "+"
		}
	}
	return indicator + chomp + "\n"
}

// indentLines indents every line but empty ones.
func indentLines(s string, indent int) string {
	pad := strings.Repeat(" ", indent)
	var b strings.Builder
	for len(s) > 0 {
		line, rest, found := strings.Cut(s, "\n")
		if found {
			line += "\n"
		}
		if line != "" && line != "\n" {
			b.WriteString(pad)
		}
		b.WriteString(line)
		s = rest
	}
	return b.String()
}

// escapeDouble is js-yaml's escapeString: YAML's named escapes, \xXX / \uXXXX / \UXXXXXXXX for other
// characters that are not printable, everything else as is.
func escapeDouble(s string) string {
	var b strings.Builder
	for i, c := range s {
		if c == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				fmt.Fprintf(&b, "\\x%02X", s[i])
				continue
			}
		}
		if e, ok := namedEscapes[c]; ok {
			b.WriteString(e)
			continue
		}
		switch {
		case isPrintable(c):
			b.WriteRune(c)
		case c <= 0xff:
			fmt.Fprintf(&b, "\\x%02X", c)
		case c <= 0xffff:
			fmt.Fprintf(&b, "\\u%04X", c)
		default:
			fmt.Fprintf(&b, "\\U%08X", c)
		}
	}
	return b.String()
}

var namedEscapes = map[rune]string{
	0x00: `\0`, 0x07: `\a`, 0x08: `\b`, 0x09: `\t`, 0x0a: `\n`, 0x0b: `\v`, 0x0c: `\f`, 0x0d: `\r`,
	0x1b: `\e`, '"': `\"`, '\\': `\\`, 0x85: `\N`, 0xa0: `\_`, 0x2028: `\L`, 0x2029: `\P`,
}

// ambiguousType reports whether js-yaml's default schema would load s as something other than a string:
// null, bool, int, float, timestamp or the merge key.
func ambiguousType(s string) bool {
	switch s {
	case "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "<<":
		return true
	}
	return yamlInt(s) || yamlFloat(s) || yamlDate.MatchString(s) || yamlTimestamp.MatchString(s)
}

// yamlInt is js-yaml's resolveYamlInteger: 0, 0b/0x/0o with at least one digit, or decimal digits, with an
// optional sign, and finite as a JavaScript number.
func yamlInt(s string) bool {
	body := s
	if strings.HasPrefix(body, "+") || strings.HasPrefix(body, "-") {
		body = body[1:]
	}
	if body == "" {
		return false
	}
	if body == "0" {
		return true
	}
	base, digits := 10, body
	if len(body) >= 2 && body[0] == '0' {
		switch body[1] {
		case 'b':
			base, digits = 2, body[2:]
		case 'x':
			base, digits = 16, body[2:]
		case 'o':
			base, digits = 8, body[2:]
		}
	}
	if digits == "" {
		return false
	}
	n, ok := new(big.Int).SetString(digits, base)
	if !ok || n.Sign() < 0 || strings.ContainsAny(digits, "+-_") {
		return false
	}
	f, _ := new(big.Float).SetInt(n).Float64()
	return !math.IsInf(f, 0)
}

// yamlFloat is js-yaml's resolveYamlFloat: the float pattern (no underscores since 4.x) and a finite value,
// or .inf / .nan.
func yamlFloat(s string) bool {
	if !yamlFloatPattern.MatchString(s) {
		return false
	}
	if yamlFloatSpecial.MatchString(s) {
		return true
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && !math.IsInf(f, 0)
}

// deprecatedBoolean are YAML 1.1 booleans that js-yaml still quotes in its compatibility mode.
var deprecatedBoolean = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true, "off": true, "Off": true, "OFF": true,
}

var (
	base60           = regexp.MustCompile(`^[-+]?[0-9_]+(?::[0-9_]+)+(?:\.[0-9_]*)?$`)
	yamlFloatPattern = regexp.MustCompile(`^(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	yamlFloatSpecial = regexp.MustCompile(`^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	yamlDate         = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	yamlTimestamp    = regexp.MustCompile(`^[0-9]{4}-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9]{2})?))?$`)
)
