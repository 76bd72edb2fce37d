package model

import (
	"encoding/binary"
	"encoding/json"
	"iter"
	"slices"
	"strings"
)

// StageLinks is a resumable run's StageNext: each stage's key and the key of the stage known to come right
// after it ("" = known last), sorted by key and packed in one string, each key and successor after its
// length. As a map it held 254 bytes a run, 2.1 MiB of the dashboard's heap at 10,000 runs, for five or six
// short pairs (issue 35); packed they are their text and a byte a key. Never changed once packed.
type StageLinks struct{ packed string }

// PackStageLinks packs next; nil or empty packs to none.
func PackStageLinks(next map[string]string) StageLinks {
	keys := make([]string, 0, len(next))
	n := 0
	for k, v := range next {
		keys = append(keys, k)
		n += len(k) + len(v) + 2*binary.MaxVarintLen64
	}
	slices.Sort(keys)
	b := make([]byte, 0, n)
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(next[k])))
		b = append(b, next[k]...)
	}
	return StageLinks{packed: strings.Clone(string(b))}
}

// All yields each stage's key and its successor's, by key.
func (l StageLinks) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for s := l.packed; s != ""; {
			var k, v string
			k, s = cutPacked(s)
			v, s = cutPacked(s)
			if !yield(k, v) {
				return
			}
		}
	}
}

// cutPacked is the length-prefixed string at the start of s and what follows it.
func cutPacked(s string) (string, string) {
	var n uint64
	i := 0
	for shift := 0; ; shift += 7 {
		c := s[i]
		i++
		n |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	s = s[i:]
	return s[:n], s[n:]
}

// Len is the number of stages with a known successor.
func (l StageLinks) Len() int {
	n := 0
	for range l.All() {
		n++
	}
	return n
}

// Map is the links as a map of the caller's own (nil for none).
func (l StageLinks) Map() map[string]string {
	if l.packed == "" {
		return nil
	}
	m := map[string]string{}
	for k, v := range l.All() {
		m[k] = v
	}
	return m
}

// MarshalJSON writes the links as a map[string]string is written: an object, by key.
func (l StageLinks) MarshalJSON() ([]byte, error) { return l.appendJSON(nil), nil }

func (l StageLinks) appendJSON(b []byte) []byte {
	b = append(b, '{')
	first := true
	for k, v := range l.All() {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(appendJSONString(b, k), ':')
		b = appendJSONString(b, v)
	}
	return append(b, '}')
}

// UnmarshalJSON reads what MarshalJSON writes.
func (l *StageLinks) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*l = PackStageLinks(m)
	return nil
}
