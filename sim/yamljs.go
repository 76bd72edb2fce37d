package sim

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
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
		b.WriteString(yamlScalarString(kv.Key))
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
	s, err := yamlScalar(v)
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

// yamlScalar renders a scalar value as js-yaml's representers do.
func yamlScalar(v any) (string, error) {
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
		return yamlScalarString(x), nil
	case *string:
		if x == nil {
			return "null", nil
		}
		return yamlScalarString(*x), nil
	}
	return "", fmt.Errorf("cannot write %T as YAML", v)
}

// jsNumber formats a number as JavaScript's Number.prototype.toString does for the values a manifest holds:
// integers without a fraction, other values in their shortest round-trip form.
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
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// JavaScript writes 1e+21 as "1e+21"; js-yaml adds ".e" when there is no dot so it reads back as float.
		if !strings.Contains(s, ".") {
			s = strings.Replace(s, "e", ".e", 1)
		}
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// yamlScalarString chooses js-yaml's style for a string: plain when that is safe and reads back as the same
// string, single-quoted otherwise, double-quoted only when it holds characters a single-quoted scalar cannot
// carry (line breaks, control characters).
func yamlScalarString(s string) string {
	if s == "" {
		return "''"
	}
	if needsDoubleQuotes(s) {
		return strconv.Quote(s)
	}
	if deprecatedBoolean[s] || base60.MatchString(s) || !plainSafe(s) || ambiguousType(s) {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return s
}

func needsDoubleQuotes(s string) bool {
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '\t' || r < 0x20 || r == 0x7f || r == 0xfeff || (r >= 0x80 && r < 0xa0) || r == 0xfffd {
			return true
		}
	}
	return false
}

// plainSafe follows js-yaml's isPlainSafeFirst/isPlainSafe/isPlainSafeLast for block context.
func plainSafe(s string) bool {
	rs := []rune(s)
	first, last := rs[0], rs[len(rs)-1]
	if strings.ContainsRune("-?:,[]{}#&*!|=>'\"%@`", first) || first == ' ' {
		return false
	}
	if last == ' ' || last == ':' {
		return false
	}
	for i := 1; i < len(rs); i++ {
		c, prev := rs[i], rs[i-1]
		if c == '#' && prev == ' ' {
			return false
		}
		if prev == ':' && c == ' ' {
			return false
		}
	}
	return true
}

// ambiguousType reports whether js-yaml's default schema would load s as something other than a string:
// null, bool, int, float, timestamp or merge key.
func ambiguousType(s string) bool {
	switch s {
	case "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "<<":
		return true
	}
	if yamlInt.MatchString(s) && !strings.HasSuffix(s, "_") {
		return true
	}
	if yamlFloat.MatchString(s) && !strings.HasSuffix(s, "_") {
		return true
	}
	return yamlDate.MatchString(s) || yamlTimestamp.MatchString(s)
}

// deprecatedBoolean are YAML 1.1 booleans that js-yaml still quotes in its compatibility mode.
var deprecatedBoolean = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true, "off": true, "Off": true, "OFF": true,
}

var (
	base60        = regexp.MustCompile(`^[-+]?[0-9_]+(?::[0-9_]+)+(?:\.[0-9_]*)?$`)
	yamlInt       = regexp.MustCompile(`^[-+]?(?:0b[01_]+|0x[0-9a-fA-F_]+|0o[0-7_]+|[0-9][0-9_]*)$`)
	yamlFloat     = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	yamlDate      = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	yamlTimestamp = regexp.MustCompile(`^[0-9]{4}-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9]{2})?))?$`)
)
