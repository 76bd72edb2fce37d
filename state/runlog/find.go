package runlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"sync"
	"sync/atomic"
	"unicode"
)

// CompilePattern turns what a person typed into a search box into the regexp every search, count and
// highlight uses, as less and vim do: the text is literal unless regex is set, and the search ignores case
// unless the pattern holds an upper-case letter (smart case).
func CompilePattern(pattern string, regex bool) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, errors.New("empty search pattern")
	}
	expr := pattern
	if !regex {
		expr = regexp.QuoteMeta(pattern)
	}
	if !hasUpper(pattern, regex) {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("search pattern %q: %w", pattern, err)
	}
	return re, nil
}

// hasUpper reports an upper-case letter in the pattern. In a regexp, a letter after a backslash is an
// escape (\S, \D, \W), not text, so it does not make the search case-sensitive.
func hasUpper(pattern string, regex bool) bool {
	escaped := false
	for _, r := range pattern {
		if regex && !escaped && r == '\\' {
			escaped = true
			continue
		}
		if unicode.IsUpper(r) && !escaped {
			return true
		}
		escaped = false
	}
	return false
}

// Progress is how far a running search or count has read, for a progress line: it is written by the
// search's goroutine and read by the UI at any time.
type Progress struct {
	done, total atomic.Int64
	waiting     atomic.Bool // the search waits for the line count before it can read
}

// Bytes returns the bytes read so far and the bytes to read.
func (p *Progress) Bytes() (done, total int64) {
	if p == nil {
		return 0, 0
	}
	return p.done.Load(), p.total.Load()
}

// Indexing reports that the search is still waiting for the log's lines to be counted.
func (p *Progress) Indexing() bool { return p != nil && p.waiting.Load() }

func (p *Progress) set(done, total int64) {
	if p != nil {
		p.done.Store(done)
		p.total.Store(total)
	}
}

func (p *Progress) add(n int64) {
	if p != nil {
		p.done.Add(n)
	}
}

// Hit is where a search found a matching line. Wrapped means it went past the end (forward) or the start
// (backward) of the log and continued from the other end.
type Hit struct {
	Line    int
	Wrapped bool
}

// ErrNoMatch means no line of the log matches.
var ErrNoMatch = errors.New("no match")

// Find looks for the next line matching re from line from: forward from from to the end and then from the
// top down to from, or backward from from to the top and then from the bottom up to from, the way less and
// vim wrap. The line from itself is looked at first, so callers pass cursor±1 for "next". It returns
// ErrNoMatch when no line matches, or ctx's error when it was cancelled. p (may be nil) follows the bytes
// read.
func (x *Index) Find(ctx context.Context, re *regexp.Regexp, from int, forward bool, p *Progress) (Hit, error) {
	if err := x.waitExactCtx(ctx, p); err != nil {
		return Hit{}, err
	}
	x.finds.enter()
	defer x.finds.leave()
	v := x.snapshot()
	if !v.exact {
		return Hit{}, fmt.Errorf("%s: line numbers are not known", x.path)
	}
	if v.length == 0 {
		return Hit{}, ErrNoMatch
	}
	from = (from%v.length + v.length) % v.length // cursor+1 past the end starts at the top
	m := newRegexpMatcher(re)
	end := v.tail.scanned
	p.set(0, end)
	buf := x.searchBuf()
	if forward {
		at := v.lineOffset(from)
		if off, err := v.findForward(ctx, m, buf, at, end, p); err != nil || off >= 0 {
			return Hit{Line: v.lineAt(off)}, err
		}
		off, err := v.findForward(ctx, m, buf, 0, at, p)
		if err == nil && off < 0 {
			err = ErrNoMatch
		}
		return Hit{Line: v.lineAt(off), Wrapped: true}, err
	}
	at := end
	if from+1 < v.length {
		at = v.lineOffset(from + 1)
	}
	if off, err := v.findBackward(ctx, m, buf, 0, at, p); err != nil || off >= 0 {
		return Hit{Line: v.lineAt(off)}, err
	}
	off, err := v.findBackward(ctx, m, buf, at, end, p)
	if err == nil && off < 0 {
		err = ErrNoMatch
	}
	return Hit{Line: v.lineAt(off), Wrapped: true}, err
}

// findForward returns the start of the first matching line starting in [lo, hi) (lo a line start), or -1.
func (v *view) findForward(ctx context.Context, m *matcher, buf []byte, lo, hi int64, p *Progress) (int64, error) {
	for pos := lo; pos < hi; {
		if err := ctx.Err(); err != nil {
			return -1, err
		}
		n, err := readFull(v.f, buf[:min(int64(len(buf)), hi-pos)], pos)
		if err != nil {
			return -1, err
		}
		if n == 0 {
			return -1, nil
		}
		chunk := buf[:n]
		if pos+int64(n) < hi {
			// End the piece at a line end; a line longer than the piece is searched in pieces.
			if k := bytes.LastIndexByte(chunk, '\n'); k >= 0 {
				chunk = chunk[:k+1]
			}
		}
		if ls := m.first(chunk); ls >= 0 {
			return pos + int64(ls), nil
		}
		pos += int64(len(chunk))
		p.add(int64(len(chunk)))
	}
	return -1, nil
}

// findBackward returns the start of the last matching line starting in [lo, hi) (both line starts, or hi
// the end), or -1.
func (v *view) findBackward(ctx context.Context, m *matcher, buf []byte, lo, hi int64, p *Progress) (int64, error) {
	for hi > lo {
		if err := ctx.Err(); err != nil {
			return -1, err
		}
		start := max(lo, hi-int64(len(buf)))
		n, err := readFull(v.f, buf[:hi-start], start)
		if err != nil {
			return -1, err
		}
		if int64(n) != hi-start {
			return -1, fmt.Errorf("log shrank while being searched")
		}
		chunk := buf[:n]
		if start > lo {
			// Start the piece at a line start; the cut line is searched with the piece before.
			if k := bytes.IndexByte(chunk, '\n'); k >= 0 && k+1 < len(chunk) {
				chunk = chunk[k+1:]
				start += int64(k + 1)
			}
		}
		if ls := m.last(chunk); ls >= 0 {
			return start + int64(ls), nil
		}
		p.add(hi - start)
		hi = start
	}
	return -1, nil
}

// waitExactCtx is waitExact that gives up when ctx ends and shows the count's progress in p meanwhile.
func (x *Index) waitExactCtx(ctx context.Context, p *Progress) error {
	stop := context.AfterFunc(ctx, func() {
		x.mu.Lock()
		x.changed.Broadcast()
		x.mu.Unlock()
	})
	defer stop()
	x.mu.Lock()
	defer x.mu.Unlock()
	for !x.counted && !x.closed && x.err == nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p != nil {
			p.waiting.Store(true)
			p.set(x.head.scanned, x.split)
		}
		x.changed.Wait()
	}
	if p != nil {
		p.waiting.Store(false)
	}
	if x.closed {
		return fmt.Errorf("%s: %w", x.path, errClosed)
	}
	if !x.counted && x.err != nil {
		return x.err
	}
	x.applyCount()
	return ctx.Err()
}

var errClosed = errors.New("log closed")

// findGate lets background counts make way for the search a person waits for: a Counter pauses between
// pieces while a Find runs. Two scans at once would take both cores of a small machine and leave the UI
// goroutine waiting for a time slice (docs/BENCHMARKS.md, "Searching a 1 GiB run.log", says what key → frame
// was then); one at a time leaves it a core, and the search is not slowed by the count.
type findGate struct {
	mu      sync.Mutex
	n       int
	idle    chan struct{} // closed when n drops to 0; nil before the first Find
	waiting int           // counts paused at the gate (what its test waits for)
}

func (g *findGate) enter() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n == 0 {
		g.idle = make(chan struct{})
	}
	g.n++
}

func (g *findGate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n--
	if g.n == 0 {
		close(g.idle)
	}
}

// wait returns once no Find runs, or with ctx's error.
func (g *findGate) wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	idle := g.idle
	if idle != nil {
		g.waiting++
	}
	g.mu.Unlock()
	if idle == nil {
		return nil
	}
	defer func() {
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
	}()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Counter counts the lines a pattern matches, for `match 3/17`: Run counts in pieces, Total reports the
// count so far, Rank the ordinal of one line. It keeps one checkpoint per piece (the piece's first line and
// the matches before it), so a 1 GiB log costs a few hundred checkpoints however many lines match, and
// Rank reads at most one piece. Run may be called again after the log grew to count what was appended.
type Counter struct {
	x  *Index
	re *regexp.Regexp
	m  *matcher

	mu       sync.Mutex
	pieces   []countPiece
	total    int   // matching lines in [0, endOff)
	endOff   int64 // bytes counted; a line start
	endLine  int   // lines in [0, endOff)
	lastLine int   // the last matching line counted, -1 for none (a line split over pieces counts once)
	target   int64 // bytes Run has been asked to reach (the log size when it started)
	// partial: the last piece ends in a line without its newline yet. It is counted (the timeline shows
	// that line), and counted again from the piece's start by the next Run, when the line may have grown.
	partial bool
}

type countPiece struct {
	off    int64
	line   int
	before int // matching lines before line
	prev   int // the last matching line before the piece, -1 for none
}

// NewCounter prepares a count of the lines matching re.
func (x *Index) NewCounter(re *regexp.Regexp) *Counter {
	return &Counter{x: x, re: re, m: newRegexpMatcher(re), lastLine: -1}
}

// Total returns the matching lines counted so far and whether the count reached the end of the log as it
// was when Run started.
func (c *Counter) Total() (n int, done bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, c.target > 0 && c.endOff >= c.target
}

// Counted returns the number of lines counted so far: Rank answers for lines below it.
func (c *Counter) Counted() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endLine
}

// Run counts from where the last Run stopped to the end of the log, until done or ctx ends. p (may be nil)
// follows its progress.
func (c *Counter) Run(ctx context.Context, p *Progress) error {
	if err := c.x.waitExactCtx(ctx, p); err != nil {
		return err
	}
	v := c.x.snapshot()
	end := v.tail.scanned
	c.mu.Lock()
	if c.partial {
		last := c.pieces[len(c.pieces)-1]
		c.pieces = c.pieces[:len(c.pieces)-1]
		c.total, c.lastLine, c.endOff, c.endLine, c.partial = last.before, last.prev, last.off, last.line, false
	}
	pos, line := c.endOff, c.endLine
	c.target = max(end, 1)
	c.mu.Unlock()
	p.set(pos, end)
	buf := c.x.searchBuf()
	for pos < end {
		chunk, err := c.x.backgroundPiece(ctx, v.f, buf, pos, end, "counted")
		if err != nil {
			return err
		}
		n := len(chunk)
		if pos+int64(n) < end {
			if k := bytes.LastIndexByte(chunk, '\n'); k >= 0 {
				chunk = chunk[:k+1]
			}
		}
		matches, lastLine, lines := c.countPiece(chunk, line)
		c.mu.Lock()
		c.pieces = append(c.pieces, countPiece{off: pos, line: line, before: c.total, prev: c.lastLine})
		c.total += matches
		if matches > 0 {
			c.lastLine = lastLine
		}
		pos += int64(len(chunk))
		line += lines
		c.endOff, c.endLine = pos, line
		if pos == end && chunk[len(chunk)-1] != '\n' {
			c.partial = true
			c.endLine++ // the unfinished line is there to rank
		}
		c.mu.Unlock()
		p.set(pos, end)
	}
	return nil
}

// countPiece counts the matching lines of chunk, whose first line is number line. It returns the matches,
// the last matching line and the newlines in chunk.
func (c *Counter) countPiece(chunk []byte, line int) (matches, lastLine, lines int) {
	c.mu.Lock()
	prev := c.lastLine
	c.mu.Unlock()
	s := c.m.scan(chunk)
	at, cur := 0, line
	for ls := s.next(); ls >= 0; ls = s.next() {
		cur += bytes.Count(chunk[at:ls], []byte{'\n'})
		at = ls
		if cur == prev {
			continue // the rest of a line longer than a piece, already counted
		}
		matches++
		lastLine, prev = cur, cur
	}
	return matches, lastLine, bytes.Count(chunk, []byte{'\n'})
}

// Rank returns how many matching lines there are in [0, line], which is line's ordinal (from 1) when line
// matches. ok is false until the count has passed line.
func (c *Counter) Rank(line int) (n int, ok bool) {
	c.mu.Lock()
	if line >= c.endLine || len(c.pieces) == 0 {
		c.mu.Unlock()
		return 0, false
	}
	i := sort.Search(len(c.pieces), func(i int) bool { return c.pieces[i].line > line }) - 1
	pc := c.pieces[max(0, i)]
	pieceEnd := c.endOff
	if i+1 < len(c.pieces) {
		pieceEnd = c.pieces[i+1].off
	}
	prev := pc.prev
	c.mu.Unlock()
	v := c.x.snapshot()
	buf := make([]byte, pieceEnd-pc.off)
	got, err := readFull(v.f, buf, pc.off)
	if err != nil || got != len(buf) {
		return 0, false
	}
	n = pc.before
	s := c.m.scan(buf)
	at, cur := 0, pc.line
	for ls := s.next(); ls >= 0; ls = s.next() {
		cur += bytes.Count(buf[at:ls], []byte{'\n'})
		at = ls
		if cur > line {
			break
		}
		if cur == prev {
			continue
		}
		n++
		prev = cur
	}
	return n, true
}

// LineBytes returns up to n bytes of line's raw text from byte off (newline and CR excluded) and the line's
// full length, reading only those bytes: a horizontal window over a line of any length.
func (x *Index) LineBytes(line int, off int64, n int) ([]byte, int64, error) {
	v := x.snapshot()
	if line < 0 || line >= v.length {
		return nil, 0, fmt.Errorf("line %d out of range", line)
	}
	if line < v.headLines && line >= v.head.newlines {
		return nil, 0, nil // not counted yet: shown as empty, like Lines
	}
	start := v.lineOffset(line)
	end := v.tail.scanned
	if line+1 < v.length {
		end = v.lineOffset(line+1) - 1 // its newline
	} else if byteAt(v, end-1) == '\n' {
		end--
	}
	if end > start && byteAt(v, end-1) == '\r' {
		end-- // CRLF lines read like LF lines, as in Lines
	}
	length := end - start
	off = max(0, min(off, length))
	buf := make([]byte, min(int64(n), length-off))
	got, err := readFull(v.f, buf, start+off)
	return buf[:got], length, err
}

// byteAt reads the byte at off, or 0.
func byteAt(v view, off int64) byte {
	var b [1]byte
	if off < 0 {
		return 0
	}
	if n, _ := readFull(v.f, b[:], off); n == 1 {
		return b[0]
	}
	return 0
}

// FindLines is Find over lines held in memory (a timeline built from run files rather than a log).
func FindLines(lines []string, re *regexp.Regexp, from int, forward bool) (Hit, error) {
	n := len(lines)
	if n == 0 {
		return Hit{}, ErrNoMatch
	}
	from = (from%n + n) % n
	d := 1
	if !forward {
		d = -1
	}
	for k := 0; k < n; k++ {
		i := from + d*k
		wrapped := i >= n || i < 0
		i = (i%n + n) % n
		if re.MatchString(lines[i]) {
			return Hit{Line: i, Wrapped: wrapped}, nil
		}
	}
	return Hit{}, ErrNoMatch
}

// backgroundPiece reads the next piece (up to len(buf) bytes, not past end) of a background scan, a count or
// a filter, after making way for any running Find. doing names the scan in the error a log that shrank gets.
func (x *Index) backgroundPiece(ctx context.Context, f *os.File, buf []byte, pos, end int64, doing string) ([]byte, error) {
	if err := x.finds.wait(ctx); err != nil {
		return nil, err
	}
	n, err := readFull(f, buf[:min(int64(len(buf)), end-pos)], pos)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: shrank while being %s", x.path, doing)
	}
	return buf[:n], nil
}
