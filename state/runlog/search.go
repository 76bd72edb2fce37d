package runlog

import (
	"bytes"
	"context"
	"regexp"

	"runwatch/model"
)

// lineOffset returns where line starts in the snapshot (exact numbering).
func (v *view) lineOffset(line int) int64 {
	if line < v.headLines {
		return newLineReader(v.f, &v.head, v.split).lineStart(line)
	}
	if line >= v.length {
		return v.tail.scanned
	}
	return newLineReader(v.f, &v.tail, v.size).lineStart(line - v.headLines)
}

// lineAt returns the line holding byte off (exact numbering).
func (v *view) lineAt(off int64) int {
	if off < v.split {
		return newLineReader(v.f, &v.head, v.split).lineOf(off)
	}
	return v.headLines + newLineReader(v.f, &v.tail, v.size).lineOf(off)
}

// Search returns the first line at or after from (forward) or at or before from (backward) matching re,
// looking at the file's bytes in 4 MiB pieces. Lines are matched one at a time, as the timeline shows them
// (but uncapped), so ^ and $ anchor at line ends.
func (x *Index) Search(re *regexp.Regexp, from int, forward bool) (int, bool) {
	return x.find(context.Background(), newRegexpMatcher(re), from, forward)
}

// SearchContext is Search that gives up when ctx ends.
func (x *Index) SearchContext(ctx context.Context, re *regexp.Regexp, from int, forward bool) (int, bool) {
	return x.find(ctx, newRegexpMatcher(re), from, forward)
}

// NextLevel returns the next (or previous) entry-start line at or after (before) from whose entry has the
// given level, as ParseEntries classifies it.
func (x *Index) NextLevel(from int, level model.Level, forward bool) (int, bool) {
	m := &matcher{match: func(line []byte) bool {
		entries, _ := ParseEntries(append(line[:len(line):len(line)], '\n'), 0)
		return len(entries) == 1 && entries[0].HasTime && entries[0].Level == level
	}}
	for _, lw := range levelWords {
		if lw.level == level {
			// levelOf lowers ASCII only, so the ASCII-folded search finds every candidate; the Unicode
			// k and s that (?i) regexps need checked line by line do not make a level word here.
			m.setLiterals(lw.words, true)
			m.keepUnicodeFold = false
		}
	}
	if m.lits == nil {
		return 0, false
	}
	return x.find(context.Background(), m, from, forward)
}

func (x *Index) find(ctx context.Context, m *matcher, from int, forward bool) (int, bool) {
	x.waitExact()
	v := x.snapshot()
	if !v.exact || from < 0 || from >= v.length {
		return 0, false
	}
	end := v.tail.scanned
	buf := x.searchBuf()
	if forward {
		for pos := v.lineOffset(from); pos < end; {
			if ctx.Err() != nil {
				return 0, false
			}
			n, err := readFull(v.f, buf[:min(int64(len(buf)), end-pos)], pos)
			if err != nil || n == 0 {
				return 0, false
			}
			chunk := buf[:n]
			if pos+int64(n) < end {
				// End the piece at a line end; a line longer than the piece is searched in pieces.
				if k := bytes.LastIndexByte(chunk, '\n'); k >= 0 {
					chunk = chunk[:k+1]
				}
			}
			if ls := m.first(chunk); ls >= 0 {
				return v.lineAt(pos + int64(ls)), true
			}
			pos += int64(len(chunk))
		}
		return 0, false
	}
	limit := end
	if from+1 < v.length {
		limit = v.lineOffset(from + 1)
	}
	for hi := limit; hi > 0; {
		if ctx.Err() != nil {
			return 0, false
		}
		lo := max(0, hi-int64(len(buf)))
		n, err := readFull(v.f, buf[:hi-lo], lo)
		if err != nil || int64(n) != hi-lo {
			return 0, false
		}
		chunk := buf[:n]
		if lo > 0 {
			// Start the piece at a line start; the cut line is searched with the piece before.
			if k := bytes.IndexByte(chunk, '\n'); k >= 0 && k+1 < len(chunk) {
				chunk = chunk[k+1:]
				lo += int64(k + 1)
			}
		}
		if ls := m.last(chunk); ls >= 0 {
			return v.lineAt(lo + int64(ls)), true
		}
		hi = lo
	}
	return 0, false
}
