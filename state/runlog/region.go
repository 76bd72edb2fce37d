package runlog

import (
	"bytes"
	"os"
	"sort"
)

const (
	// A mark is kept every markLines lines, and sooner when markBytes have passed since the last one, so
	// reaching any line means reading at most markLines lines or about markBytes bytes from a mark. That is
	// about 16 bytes per 256 lines: a 1 GiB log of 100-byte lines needs under 1 MB of marks.
	markLines = 256
	markBytes = 64 << 10
	// countSeg is the piece bytes.Count looks at in one go; lines are walked one by one only in pieces where
	// a mark falls.
	countSeg = 4 << 10
)

// mark is the start offset of line number line (relative to its region).
type mark struct {
	line int
	off  int64
}

// region indexes the line starts of a byte range of the file starting at a line start, base. Line 0 starts
// at base. Only the goroutine that scans a region writes it (on a copy, published under the Index lock);
// readers use copies taken under the lock, whose marks are never modified, only appended to.
type region struct {
	base      int64
	scanned   int64 // [base, scanned) is indexed
	newlines  int   // newlines in [base, scanned)
	lastStart int64 // start of the line after the last newline, base if none
	marks     []mark
}

func newRegion(base int64) region {
	return region{base: base, scanned: base, lastStart: base, marks: []mark{{0, base}}}
}

// scan indexes b, the file's bytes at r.scanned.
func (r *region) scan(b []byte) {
	off := r.scanned
	last := r.marks[len(r.marks)-1]
	for p := 0; p < len(b); {
		q := min(len(b), p+countSeg)
		seg := b[p:q]
		c := bytes.Count(seg, []byte{'\n'})
		if c == 0 {
			p = q
			continue
		}
		if r.newlines+c < last.line+markLines && off+int64(q)-last.off < markBytes {
			r.newlines += c
			r.lastStart = off + int64(p+bytes.LastIndexByte(seg, '\n')+1)
			p = q
			continue
		}
		for i := 0; i < len(seg); {
			j := bytes.IndexByte(seg[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			r.newlines++
			start := off + int64(p+i)
			r.lastStart = start
			if r.newlines-last.line >= markLines || start-last.off >= markBytes {
				last = mark{r.newlines, start}
				r.marks = append(r.marks, last)
			}
		}
		p = q
	}
	r.scanned += int64(len(b))
}

// count is the number of lines in the region when it ends at end: the complete lines, plus the unfinished
// last one once everything up to end is indexed.
func (r *region) count(end int64) int {
	n := r.newlines
	if r.scanned == end && end > r.lastStart {
		n++
	}
	return n
}

// markAtOrBefore returns the last mark at or before line.
func (r *region) markAtOrBefore(line int) mark {
	i := sort.Search(len(r.marks), func(i int) bool { return r.marks[i].line > line })
	return r.marks[max(0, i-1)]
}

// markAtOrBeforeOffset returns the last mark at or before off.
func (r *region) markAtOrBeforeOffset(off int64) mark {
	i := sort.Search(len(r.marks), func(i int) bool { return r.marks[i].off > off })
	return r.marks[max(0, i-1)]
}

// markAfter returns the first mark after off.
func (r *region) markAfter(off int64) (mark, bool) {
	i := sort.Search(len(r.marks), func(i int) bool { return r.marks[i].off > off })
	if i == len(r.marks) {
		return mark{}, false
	}
	return r.marks[i], true
}

// lineReader walks lines forward through a region, buffering reads. A line longer than its buffer is not
// read to its end: the mark that follows every long line (see markBytes) says where it ends.
type lineReader struct {
	f      *os.File
	r      *region
	end    int64 // region end: a last line without newline ends here
	buf    []byte
	bufOff int64
	n      int
	err    error
}

const readerBuf = 2 * markBytes

func newLineReader(f *os.File, r *region, end int64) *lineReader {
	return &lineReader{f: f, r: r, end: end, buf: make([]byte, readerBuf)}
}

// line returns the text of the line starting at pos and the start of the next line.
func (lr *lineReader) line(pos int64) (string, int64) {
	if pos < lr.bufOff || pos >= lr.bufOff+int64(lr.n) {
		lr.fill(pos)
	}
	i := int(pos - lr.bufOff)
	if j := bytes.IndexByte(lr.buf[i:lr.n], '\n'); j >= 0 {
		return lineText(lr.buf[i:i+j], j), pos + int64(j) + 1
	}
	if lr.bufOff+int64(lr.n) >= lr.end {
		// The unfinished last line of the region, wholly in the buffer.
		return lineText(lr.buf[i:lr.n], lr.n-i), lr.end
	}
	if i > 0 {
		lr.fill(pos) // the line may fit once the buffer starts at it
		return lr.line(pos)
	}
	lineEnd, next := lr.end, lr.end
	if m, ok := lr.r.markAfter(pos); ok && m.off <= lr.end {
		lineEnd, next = m.off-1, m.off
	}
	return lr.longLine(pos, lineEnd), next
}

// longLine builds the capped text of a line known to span [pos, lineEnd) without reading its middle.
func (lr *lineReader) longLine(pos, lineEnd int64) string {
	total := int(lineEnd - pos)
	head := lr.buf[:min(lr.n, MaxLineBytes+1)]
	if total <= len(head) {
		return lineText(head, total)
	}
	var last [1]byte
	if _, err := readFull(lr.f, last[:], lineEnd-1); err != nil {
		lr.err = err
	}
	return cutLine(head, total, last[0] == '\r')
}

func (lr *lineReader) fill(pos int64) {
	want := min(int64(len(lr.buf)), max(0, lr.end-pos))
	n, err := readFull(lr.f, lr.buf[:want], pos)
	if err != nil {
		lr.err = err
	}
	lr.bufOff, lr.n = pos, n
}

// lines returns k lines of the region starting at line rel.
func (lr *lineReader) lines(rel, k int) []string {
	m := lr.r.markAtOrBefore(rel)
	pos, line := m.off, m.line
	out := make([]string, 0, k)
	for line < rel+k && pos < lr.end {
		text, next := lr.line(pos)
		if line >= rel {
			out = append(out, text)
		}
		if lr.err != nil || next <= pos {
			break
		}
		pos, line = next, line+1
	}
	return out
}

// lineStart returns the offset where line rel of the region starts.
func (lr *lineReader) lineStart(rel int) int64 {
	m := lr.r.markAtOrBefore(rel)
	pos, line := m.off, m.line
	for line < rel && pos < lr.end {
		_, next := lr.line(pos)
		if lr.err != nil || next <= pos {
			break
		}
		pos, line = next, line+1
	}
	return pos
}

// lineOf returns the region line holding byte off (off within the indexed part of the region).
func (lr *lineReader) lineOf(off int64) int {
	m := lr.r.markAtOrBeforeOffset(off)
	line := m.line
	buf := lr.buf
	for pos := m.off; pos < off; {
		n, err := readFull(lr.f, buf[:min(int64(len(buf)), off-pos)], pos)
		if err != nil || n == 0 {
			lr.err = err
			break
		}
		line += bytes.Count(buf[:n], []byte{'\n'})
		pos += int64(n)
	}
	lr.n = 0 // the buffer no longer holds what bufOff says
	return line
}
