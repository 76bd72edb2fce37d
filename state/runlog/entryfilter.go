package runlog

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"sort"
	"sync"
)

// maxFilterSpans bounds what an EntryFilter keeps (24 bytes each): one span per run of adjacent matching
// entries (a pattern matching every entry is one span), so only a pattern matching about every other entry
// of a huge log comes near it.
const maxFilterSpans = 1 << 18

// ErrTooManySpans stops a filter whose matching entries are too scattered to keep: the view shows those
// found until then.
var ErrTooManySpans = errors.New("too many separate matching entries to show only them; the view stops there (narrow the search)")

// EntryFilter finds the entries holding a match of a pattern, for a timeline that shows only them (less's
// &, lnav's filter-in), keeping or dropping each entry whole: an entry is a timestamped line and the
// continuation lines after it, and a match in any of its lines keeps all of them. Lines before the first
// timestamped line form an entry of their own, as in EntryStart.
//
// The filtered view is addressed like a log: Len lines, line k of it is a line of the log (Lines, Pos). Run
// builds it in pieces, off the UI goroutine; the view grows as it goes, and Run again after the log grew
// reads only the new bytes.
type EntryFilter struct {
	x        *Index // nil for lines in memory
	m        *matcher
	maxSpans int // maxFilterSpans; tests reach it with fewer

	mu      sync.Mutex
	spans   []filterSpan // closed matching entries, adjacent ones merged
	entries int          // matching entries in spans
	scan    entryScan    // where the reading stopped: a line start, inside the last (open) entry
	pos     int64        // bytes read: a line start, or inside a line longer than a piece
	extra   []filterSpan // the open entry and an unfinished last line, recomputed by every Run
	extraN  int          // matching entries in extra
	reached bool         // the last Run read to the end
	err     error
}

// filterSpan is log lines [start, end), with before lines of the filtered view ahead of it.
type filterSpan struct{ start, end, before int }

// entryScan follows the entry structure line by line.
type entryScan struct {
	line    int  // lines read
	open    int  // first line of the entry being read
	matched bool // a line of the open entry matched so far
	inLine  bool // the last piece ended inside a line (a line longer than a piece)
}

// part takes the next piece of a line (a whole line unless complete is false); emit gets each matching
// entry as it closes.
func (e *entryScan) part(stamped, matched, complete bool, emit func(start, end int)) {
	if !e.inLine && stamped && e.line > e.open {
		if e.matched {
			emit(e.open, e.line)
		}
		e.open, e.matched = e.line, false
	}
	e.matched = e.matched || matched
	e.inLine = !complete
	if complete {
		e.line++
	}
}

// NewEntryFilter prepares a filter of the log's entries matching re.
func (x *Index) NewEntryFilter(re *regexp.Regexp) *EntryFilter {
	return x.newEntryFilter(re, maxFilterSpans)
}

func (x *Index) newEntryFilter(re *regexp.Regexp, maxSpans int) *EntryFilter {
	return &EntryFilter{x: x, m: newRegexpMatcher(re), maxSpans: maxSpans}
}

// FilterLines is an EntryFilter over lines held in memory, built at once.
func FilterLines(lines []string, re *regexp.Regexp) *EntryFilter {
	return filterLines(lines, re, maxFilterSpans)
}

// filterLines is FilterLines keeping at most maxSpans spans.
func filterLines(lines []string, re *regexp.Regexp, maxSpans int) *EntryFilter {
	f := &EntryFilter{m: newRegexpMatcher(re), maxSpans: maxSpans}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range lines {
		f.scan.part(hasStamp([]byte(l)), re.MatchString(l), true, f.emitLocked)
		if f.err != nil {
			break
		}
	}
	f.reached = true
	f.extra, f.extraN = f.openSpan(f.scan, nil)
	return f
}

func (f *EntryFilter) emitLocked(start, end int) {
	if f.err != nil {
		return
	}
	f.spans, f.entries = addSpan(f.spans, start, end), f.entries+1
	if len(f.spans) > f.maxSpans {
		f.spans, f.entries = f.spans[:f.maxSpans], f.entries-1
		f.err = ErrTooManySpans
	}
}

func addSpan(spans []filterSpan, start, end int) []filterSpan {
	if n := len(spans); n > 0 {
		last := &spans[n-1]
		if last.end == start {
			last.end = end
			return spans
		}
		return append(spans, filterSpan{start, end, last.before + last.end - last.start})
	}
	return append(spans, filterSpan{start: start, end: end})
}

// openSpan appends to extra the entry s is reading (the log's last so far) when it matched: it is shown,
// and may still grow. It returns how many entries it added (0 or 1).
func (f *EntryFilter) openSpan(s entryScan, extra []filterSpan) ([]filterSpan, int) {
	if !s.matched || f.err != nil {
		return extra, 0
	}
	end := s.line
	if s.inLine {
		end++
	}
	return f.tailSpan(extra, s.open, end), 1
}

// tailSpan appends [start, end) to extra, whose first span follows the closed runs.
func (f *EntryFilter) tailSpan(extra []filterSpan, start, end int) []filterSpan {
	if len(extra) == 0 {
		before := 0
		if n := len(f.spans); n > 0 {
			last := f.spans[n-1]
			before = last.before + last.end - last.start
		}
		return append(extra, filterSpan{start, end, before})
	}
	return addSpan(extra, start, end)
}

// Run reads from where the last Run stopped to the end of the log, until done or ctx ends. It makes way
// for a Find in flight, like Counter. p (may be nil) follows its progress.
func (f *EntryFilter) Run(ctx context.Context, p *Progress) error {
	if f.x == nil {
		return nil
	}
	if err := f.x.waitExactCtx(ctx, p); err != nil {
		return err
	}
	v := f.x.snapshot()
	end := v.tail.scanned
	f.mu.Lock()
	pos, scan := f.pos, f.scan
	f.reached = false
	done := f.err != nil
	f.mu.Unlock()
	if done {
		return f.err
	}
	p.set(pos, end)
	buf := f.x.searchBuf()
	for pos < end {
		piece, err := f.x.backgroundPiece(ctx, v.f, buf, pos, end, "filtered")
		if err != nil {
			return err
		}
		chunk, rest := piece, []byte(nil)
		n := len(piece)
		k := bytes.LastIndexByte(chunk, '\n')
		switch {
		case pos+int64(n) >= end:
			// The log's last line may have no newline yet: it is shown as it is and read again by the next
			// Run, once it may have grown.
			chunk, rest = chunk[:k+1], chunk[k+1:]
		case k >= 0:
			chunk = chunk[:k+1] // a line longer than a piece is read in pieces
		}
		f.mu.Lock()
		f.feed(&scan, chunk, f.emitLocked)
		pos += int64(len(chunk))
		f.scan, f.pos = scan, pos
		f.extra, f.extraN = f.openSpan(scan, nil)
		if len(rest) > 0 {
			probe := scan
			var extra []filterSpan
			extraN := 0
			f.feed(&probe, rest, func(a, b int) { extra, extraN = f.tailSpan(extra, a, b), extraN+1 })
			extra, open := f.openSpan(probe, extra)
			f.extra, f.extraN = extra, extraN+open
		}
		err = f.err
		f.mu.Unlock()
		if err != nil {
			return err
		}
		if len(rest) > 0 {
			break
		}
		p.set(pos, end)
	}
	p.set(end, end)
	f.mu.Lock()
	f.reached = true
	f.mu.Unlock()
	return nil
}

// feed reads chunk's lines (whole lines, or a piece of one line longer than a piece) into s.
func (f *EntryFilter) feed(s *entryScan, chunk []byte, emit func(start, end int)) {
	ms := f.m.scan(chunk)
	next := ms.next()
	for at := 0; at < len(chunk); {
		end := len(chunk)
		if k := bytes.IndexByte(chunk[at:], '\n'); k >= 0 {
			end = at + k + 1
		}
		matched := false
		for next >= 0 && next < end {
			matched = true
			next = ms.next()
		}
		s.part(!s.inLine && hasStamp(chunk[at:end]), matched, chunk[end-1] == '\n', emit)
		at = end
	}
}

// Len returns the lines of the filtered view and the matching entries found so far, and whether the
// filter reached the end of the log as it was when Run started.
func (f *EntryFilter) Len() (lines, entries int, done bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.linesLocked(), f.entries + f.extraN, f.reached
}

// Err is why the filter stopped early (ErrTooManySpans), or nil.
func (f *EntryFilter) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// spanLocked is span i of the view: the closed runs, then the extra ones (which are not merged into the
// closed runs, so the closed ones never change).
func (f *EntryFilter) spanLocked(i int) filterSpan {
	if i < len(f.spans) {
		return f.spans[i]
	}
	return f.extra[i-len(f.spans)]
}

func (f *EntryFilter) nSpansLocked() int { return len(f.spans) + len(f.extra) }

func (f *EntryFilter) linesLocked() int {
	n := f.nSpansLocked()
	if n == 0 {
		return 0
	}
	s := f.spanLocked(n - 1)
	return s.before + s.end - s.start
}

// Lines returns the log line numbers of up to n lines of the filtered view from its line k.
func (f *EntryFilter) Lines(k, n int) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	ns := f.nSpansLocked()
	i := sort.Search(ns, func(i int) bool { s := f.spanLocked(i); return s.before+s.end-s.start > k })
	var out []int
	for ; i < ns && len(out) < n; i++ {
		s := f.spanLocked(i)
		for line := s.start + max(0, k-s.before); line < s.end && len(out) < n; line++ {
			out = append(out, line)
		}
	}
	return out
}

// Pos returns the filtered view's line showing log line line, or, when line is not shown, the next line
// of the view after it; ok is false when the view has no line at or after it (yet).
func (f *EntryFilter) Pos(line int) (k int, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ns := f.nSpansLocked()
	i := sort.Search(ns, func(i int) bool { return f.spanLocked(i).end > line })
	if i == ns {
		return 0, false
	}
	s := f.spanLocked(i)
	return s.before + max(0, line-s.start), true
}
