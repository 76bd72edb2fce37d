package runlog

import (
	"bytes"
	"encoding/binary"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// matcher finds lines in large buffers. Go's regexp runs at tens of MB/s on text without a literal prefix,
// far from the 500 MB/s a 1 GiB log needs, so a regexp is first reduced to literals that every match must
// contain: the buffer is scanned for those with bytes.Index (SIMD), ASCII-case-folded first when the
// regexp ignores case, and only lines holding one are given to the regexp. Patterns without such literals
// fall back to running the regexp line by line.
type matcher struct {
	lits [][]byte // every matching line contains one of these; nil means no prefilter
	fold bool     // lits are lower case and are looked for in the folded buffer
	// keepUnicodeFold: the literals hold k or s, which (?i) also matches as the Kelvin sign and long s; a
	// buffer holding either is checked line by line so the ASCII prefilter cannot miss them.
	keepUnicodeFold bool
	// anchors replace bytes.Index: each literal is found by its rarest byte (IndexByte runs at memory speed
	// on rare bytes, where bytes.Index stumbles over a common first byte), one pass per distinct byte. With
	// fold, a letter is looked for in both cases and the buffer is compared case-insensitively in place.
	anchors []anchor
	match   func(line []byte) bool
	scratch []byte
}

// anchor is a byte looked for with IndexByte, and the literals that hold it at offset k.
type anchor struct {
	c    byte
	lits []anchoredLit
}

type anchoredLit struct {
	lit []byte
	k   int
}

// commonBytes lists bytes from most to least frequent in logs (English letters by frequency, with the
// digits, blanks and punctuation of timestamps and key=value pairs up front); bytes not listed are rare.
const commonBytes = " e0=t1a2_o3:i4n5-s6r7/Tl8Z9d.chu\"mfpgw,ybvSPEARCkx[]{}jqz"

var byteRarity = func() (r [256]int) {
	for i := range r {
		r[i] = len(commonBytes)
	}
	for i := 0; i < len(commonBytes); i++ {
		r[commonBytes[i]] = i
	}
	return r
}()

// setAnchors groups the literals by their rarest byte. Literals holding a newline keep the plain search:
// anchor order equals line order only for literals within one line.
func (m *matcher) setAnchors() {
	byByte := map[byte]int{}
	add := func(c byte, al anchoredLit) {
		j, ok := byByte[c]
		if !ok {
			j = len(m.anchors)
			byByte[c] = j
			m.anchors = append(m.anchors, anchor{c: c})
		}
		m.anchors[j].lits = append(m.anchors[j].lits, al)
	}
	for _, lit := range m.lits {
		if bytes.IndexByte(lit, '\n') >= 0 {
			m.anchors = nil
			return
		}
		k := 0
		for i := range lit {
			if byteRarity[lit[i]] > byteRarity[lit[k]] {
				k = i
			}
		}
		al := anchoredLit{lit: lit, k: k}
		add(lit[k], al)
		if c := lit[k]; m.fold && c >= 'a' && c <= 'z' {
			add(c-'a'+'A', al)
		}
	}
}

func newRegexpMatcher(re *regexp.Regexp) *matcher {
	m := &matcher{match: re.Match}
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return m
	}
	lits, fold, ok := requiredLiterals(parsed.Simplify())
	if !ok {
		return m
	}
	m.setLiterals(lits, fold)
	return m
}

func (m *matcher) setLiterals(lits []string, fold bool) {
	for _, l := range lits {
		if l == "" {
			m.lits = nil // an empty literal is in every line: no prefilter
			return
		}
		if fold {
			l = strings.ToLower(l)
			if strings.ContainsAny(l, "ks") {
				m.keepUnicodeFold = true
			}
		}
		m.lits = append(m.lits, []byte(l))
	}
	m.fold = fold
	m.setAnchors()
}

// requiredLiterals returns literals one of which every match contains, and whether they are case-folded.
func requiredLiterals(re *syntax.Regexp) ([]string, bool, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		s := string(re.Rune)
		if fold && !isASCII(s) {
			return nil, false, false // Unicode case folding is beyond the ASCII fold of the prefilter
		}
		return []string{s}, fold, true
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		// The best single part: the one whose shortest literal is longest.
		var best []string
		bestFold, bestLen := false, 0
		for _, sub := range re.Sub {
			lits, fold, ok := requiredLiterals(sub)
			if !ok {
				continue
			}
			if l := shortest(lits); l > bestLen {
				best, bestFold, bestLen = lits, fold, l
			}
		}
		return best, bestFold, best != nil
	case syntax.OpAlternate:
		var all []string
		anyFold := false
		for _, sub := range re.Sub {
			lits, fold, ok := requiredLiterals(sub)
			if !ok {
				return nil, false, false
			}
			all = append(all, lits...)
			anyFold = anyFold || fold
		}
		// Folded search finds a superset of case-sensitive matches, so mixing is safe.
		return all, anyFold, true
	}
	return nil, false, false
}

func shortest(lits []string) int {
	n := -1
	for _, l := range lits {
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	return n
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// kelvin and longS are the non-ASCII runes that (?i) equates with k and s.
var kelvin, longS = []byte("\u212a"), []byte("\u017f")

// first returns the start of the first line in buf (lines end with \n; buf holds whole lines) for which
// match is true, or -1.
func (m *matcher) first(buf []byte) int {
	return m.scan(buf).next()
}

// last returns the start of the last matching line in buf, or -1.
func (m *matcher) last(buf []byte) int {
	s := m.scan(buf)
	found := -1
	for ls := s.next(); ls >= 0; ls = s.next() {
		found = ls
	}
	return found
}

// lineScan walks the matching lines of one buffer in order. It remembers where each literal occurs next,
// so walking all matches costs one pass per literal, not one per match.
type lineScan struct {
	m        *matcher
	buf, hay []byte // hay is nil when lines are matched one by one
	litNext  []int  // next occurrence of each literal at or after pos; -2 not looked for yet, -1 none left
	pos      int    // start of the next line to consider
}

func (m *matcher) scan(buf []byte) *lineScan {
	s := &lineScan{m: m, buf: buf, hay: m.haystack(buf), litNext: make([]int, max(len(m.lits), len(m.anchors)))}
	for i := range s.litNext {
		s.litNext[i] = -2
	}
	return s
}

// next returns the start of the next matching line, or -1.
func (s *lineScan) next() int {
	buf := s.buf
	for s.pos < len(buf) {
		cand := s.pos
		if s.hay != nil {
			cand = s.candidate()
			if cand < 0 {
				s.pos = len(buf)
				return -1
			}
		}
		ls := bytes.LastIndexByte(buf[:cand], '\n') + 1
		le := lineEnd(buf, cand)
		s.pos = le + 1
		if s.m.match(trimCR(buf[ls:le])) {
			return ls
		}
	}
	return -1
}

// candidate returns the first literal occurrence at or after pos, or -1.
func (s *lineScan) candidate() int {
	if s.m.anchors != nil {
		return s.anchoredCandidate()
	}
	cand := -1
	for i, lit := range s.m.lits {
		if n := s.litNext[i]; n == -2 || (n >= 0 && n < s.pos) {
			if k := bytes.Index(s.hay[s.pos:], lit); k >= 0 {
				s.litNext[i] = s.pos + k
			} else {
				s.litNext[i] = -1
			}
		}
		if n := s.litNext[i]; n >= 0 && (cand < 0 || n < cand) {
			cand = n
		}
	}
	return cand
}

// anchoredCandidate returns the start of the first literal occurrence at or after pos, found through the
// anchors. Occurrences come in anchor order, which is line order because a literal lies within a line.
func (s *lineScan) anchoredCandidate() int {
	next := s.litNext // per anchor: next position of its byte at or after pos
	for {
		best, second := -1, -1 // the anchor whose byte comes first, and where the next other one comes
		for j := range s.m.anchors {
			if n := next[j]; n == -2 || (n >= 0 && n < s.pos) {
				next[j] = indexFrom(s.hay, s.m.anchors[j].c, s.pos)
			}
			n := next[j]
			switch {
			case n < 0:
			case best < 0 || n < next[best]:
				if best >= 0 {
					second = next[best]
				}
				best = j
			case second < 0 || n < second:
				second = n
			}
		}
		if best < 0 {
			return -1
		}
		// Walk this anchor's byte until another anchor's comes first: a common anchor byte then costs an
		// IndexByte and a compare per occurrence, not a look at every anchor.
		a := &s.m.anchors[best]
		p := next[best]
		for p >= 0 && (second < 0 || p <= second) {
			if st := s.verify(a, p); st >= 0 {
				next[best] = p
				return st
			}
			p = indexFrom(s.hay, a.c, p+1)
		}
		next[best] = p
	}
}

// verify returns the start of a literal of a whose anchor byte is at p, or -1.
func (s *lineScan) verify(a *anchor, p int) int {
	for _, al := range a.lits {
		st := p - al.k
		if st < s.pos || st+len(al.lit) > len(s.hay) {
			continue
		}
		if seg := s.hay[st : st+len(al.lit)]; (!s.m.fold && bytes.Equal(seg, al.lit)) || (s.m.fold && equalFoldASCII(seg, al.lit)) {
			return st
		}
	}
	return -1
}

// equalFoldASCII compares b with the lower-case lit, lowering A-Z of b.
func equalFoldASCII(b, lit []byte) bool {
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lit[i] {
			return false
		}
	}
	return true
}

// indexFrom is IndexByte from position from, -1 if c does not occur there.
func indexFrom(b []byte, c byte, from int) int {
	if k := bytes.IndexByte(b[from:], c); k >= 0 {
		return from + k
	}
	return -1
}

// haystack returns the bytes to look for literals in (buf, or its folded copy), or nil to go line by line.
func (m *matcher) haystack(buf []byte) []byte {
	if m.lits == nil {
		return nil
	}
	if m.keepUnicodeFold && (bytes.Contains(buf, kelvin) || bytes.Contains(buf, longS)) {
		return nil
	}
	if !m.fold || m.anchors != nil {
		return buf // anchors compare case-insensitively in place
	}
	if cap(m.scratch) < len(buf) {
		m.scratch = make([]byte, len(buf))
	}
	m.scratch = m.scratch[:len(buf)]
	foldASCII(m.scratch, buf)
	return m.scratch
}

func lineEnd(buf []byte, from int) int {
	if k := bytes.IndexByte(buf[from:], '\n'); k >= 0 {
		return from + k
	}
	return len(buf)
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// foldASCII writes src with A-Z lowered into dst, eight bytes at a time: per byte, bit 7 of (b&0x7f)+0x3f
// says b >= 'A' and of (b&0x7f)+0x25 says b > 'Z'; bytes with bit 7 set (non-ASCII) are left alone.
func foldASCII(dst, src []byte) {
	const (
		low7 = 0x7f7f7f7f7f7f7f7f
		high = 0x8080808080808080
		geA  = 0x3f3f3f3f3f3f3f3f
		gtZ  = 0x2525252525252525
	)
	i := 0
	for ; i+8 <= len(src); i += 8 {
		x := binary.LittleEndian.Uint64(src[i:])
		h := x & low7
		upper := (h + geA) &^ (h + gtZ) &^ x & high
		binary.LittleEndian.PutUint64(dst[i:], x|upper>>2)
	}
	for ; i < len(src); i++ {
		c := src[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
}
