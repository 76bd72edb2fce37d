package runlog

import (
	"bytes"
	"regexp"
	"slices"
	"testing"
)

// naiveLines is the oracle for the matcher: every line (CR dropped) given to the regexp, in order.
func naiveLines(buf []byte, re *regexp.Regexp) (first, last int) {
	first, last = -1, -1
	for ls := 0; ls < len(buf); {
		le := lineEnd(buf, ls)
		if re.Match(trimCR(buf[ls:le])) {
			if first < 0 {
				first = ls
			}
			last = ls
		}
		ls = le + 1
	}
	return first, last
}

func TestRequiredLiterals(t *testing.T) {
	cases := []struct {
		pattern string
		lits    []string
		fold    bool
	}{
		{"stage_blocked", []string{"stage_blocked"}, false},
		{"(?i)Error", []string{"error"}, true},
		{"(?i)(blocked|error|\\berr=|fail|panic|fatal)", []string{"blocked", "error", "err=", "fail", "panic", "fatal"}, true},
		{"S3[0-9] complete", []string{" complete"}, false},
		{"pid=\\d+", []string{"pid="}, false},
		{"(ab)+cd", []string{"ab"}, false}, // the first of equally long literals
		{"[0-9]{7}q", []string{"q"}, false},
		{"a|[0-9]", nil, false},
		{"(?i)é", nil, false},
		{"x*", nil, false},
	}
	for _, c := range cases {
		m := newRegexpMatcher(regexp.MustCompile(c.pattern))
		var got []string
		for _, l := range m.lits {
			got = append(got, string(l))
		}
		if !slices.Equal(got, c.lits) || (c.lits != nil && m.fold != c.fold) {
			t.Errorf("%q: literals %q fold %v, want %q fold %v", c.pattern, got, m.fold, c.lits, c.fold)
		}
	}
}

func FuzzMatcher(f *testing.F) {
	f.Add([]byte("[2026-02-15T01:00:00Z] stage_blocked stage=S1\r\nverify FAILED\nK\u212aelvin\n"), "(?i)(blocked|error|fail)")
	f.Add([]byte("a\nb\n\nab\r\n"), "^$")
	f.Add([]byte("x\u017fy\nXSY\n"), "(?i)xsy")
	f.Add([]byte("pid=123\npid=\n"), "pid=\\d+$")
	f.Fuzz(func(t *testing.T, buf []byte, pattern string) {
		if len(pattern) > 64 {
			return
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		m := newRegexpMatcher(re)
		wantFirst, wantLast := naiveLines(buf, re)
		if got := m.first(buf); got != wantFirst {
			t.Fatalf("first(%q) = %d, want %d (literals %q fold %v)", pattern, got, wantFirst, m.lits, m.fold)
		}
		if got := m.last(buf); got != wantLast {
			t.Fatalf("last(%q) = %d, want %d", pattern, got, wantLast)
		}
		folded := make([]byte, len(buf))
		foldASCII(folded, buf)
		if want := bytes.Map(asciiLower, buf); !bytes.Equal(folded, want) && isASCIIBytes(buf) {
			t.Fatalf("foldASCII(%q) = %q", buf, folded)
		}
	})
}

func asciiLower(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

func isASCIIBytes(b []byte) bool { return isASCII(string(b)) }
