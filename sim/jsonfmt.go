package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// jsonStringify renders v as JavaScript's JSON.stringify(v, null, 2) does: two-space indent, no trailing
// newline, and no HTML escaping (Go's encoder escapes <, > and & by default; JavaScript does not). Key order
// is the struct field order, which the callers keep equal to the writers' insertion order.
func jsonStringify(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// pythonJSONLine renders a flat object the way Python's json.dumps(obj, sort_keys=True) does, plus the
// newline the resumable lock writer adds: keys sorted, ", " and ": " separators, non-ASCII escaped as \uXXXX
// (ensure_ascii). Values are strings or ints.
func pythonJSONLine(obj map[string]any) (string, error) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pythonString(k))
		b.WriteString(": ")
		switch v := obj[k].(type) {
		case string:
			b.WriteString(pythonString(v))
		case int:
			b.WriteString(strconv.Itoa(v))
		default:
			return "", fmt.Errorf("lock field %s: unsupported type %T", k, v)
		}
	}
	b.WriteString("}\n")
	return b.String(), nil
}

func pythonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || r > 0x7e:
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
