package runlog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
)

const (
	// tailWindow is how much of the end of the log is indexed before OpenIndex returns, so the tail shows at
	// once; the rest is counted in the background.
	tailWindow = 1 << 20
	// splitSearchBudget bounds the backwards search for a line start when the last MiB is one line.
	splitSearchBudget = 64 << 20
	// scanStep is what the background indexer reads at a time.
	scanStep = 1 << 20
	// entryStartReach bounds how far EntryStart looks up for the timestamped line of an entry.
	entryStartReach = 10000
	// refreshSyncBytes of an append are indexed inside Refresh, so the lines are there for the Len and Lines
	// that follow it (a viewer redraws once per append); the rest of a bigger append is indexed in the
	// background. It matches MaxPollBytes: the watcher hands a big append over in pieces of that size.
	refreshSyncBytes = MaxPollBytes
)

// searchChunk is what a search reads at a time, unless the Index says otherwise (Index.chunk).
const searchChunk = 4 << 20

// Index addresses the lines of a log by number without holding it in memory, for a timeline over logs of
// any size. Lines are the file's lines (not entries), capped like every line here.
//
// Opening is fast whatever the size: OpenIndex indexes only the last MiB and counts the lines before it
// in the background. Until that count is done, line numbers are provisional: the lines before the last MiB
// are numbered by an estimate, so the tail can be shown at Len()-h at once. Once the count is done, the
// next Len (or Exact, Renumbered, Wait, a search) switches to counted numbers, which differ by the
// estimate's error; Renumbered reports that shift so a viewer not at the end can keep its place. Lines in
// the part not yet counted read as empty strings. Search and NextLevel wait for the count, since they
// return line numbers.
type Index struct {
	path  string
	chunk int // what a search reads at a time; 0 is searchChunk (tests reach piece boundaries with less)

	mu       sync.Mutex
	changed  *sync.Cond // signals the indexer (work to do, close) and waiters (progress)
	f        *os.File
	gen      int   // bumped when the file is reopened, so stale indexer results are dropped
	size     int64 // the file size at open or at the last Refresh: what is indexed
	split    int64 // a line start: [0, split) is the head, counted in the background; [split, size) the tail
	head     region
	tail     region
	counted  bool // the head is counted
	exact    bool // line numbers follow the count (applied by applyCount)
	estimate int  // provisional number of head lines until exact
	shift    int  // renumbering not yet reported by Renumbered
	// estimateShown: provisional numbers were handed out. Only then does the switch to counted numbers move
	// anything a viewer holds; a count that finishes before anyone asked shifts nothing.
	estimateShown bool
	witness       []byte
	err           error // the indexer's last read error
	closed        bool

	finds findGate // the Finds in flight, which counts make way for

	stopped chan struct{}
}

// OpenIndex opens the log at path and indexes its tail; the head is indexed by a background goroutine
// until Close. Non-regular files are refused.
func OpenIndex(path string) (*Index, error) {
	x := &Index{path: path, stopped: make(chan struct{})}
	x.changed = sync.NewCond(&x.mu)
	if err := x.open(); err != nil {
		return nil, err
	}
	go x.run()
	return x, nil
}

// open (re)opens the file and indexes its tail. It is called without the lock held by others, or under it
// from Refresh.
func (x *Index) open() error {
	f, fi, err := openRegular(x.path)
	if err != nil {
		return err
	}
	size := fi.Size()
	split, err := findSplit(f, size)
	if err != nil {
		f.Close()
		return err
	}
	tail := newRegion(split)
	buf := make([]byte, scanStep)
	for tail.scanned < size && tail.scanned-split < tailWindow+markBytes {
		n, err := readFull(f, buf[:min(int64(len(buf)), size-tail.scanned)], tail.scanned)
		if err != nil {
			f.Close()
			return err
		}
		if n == 0 {
			size = tail.scanned // shrank while we read; Refresh will see the rest
			break
		}
		tail.scan(buf[:n])
	}
	if x.f != nil {
		x.f.Close()
	}
	x.f, x.size, x.split, x.tail, x.head = f, size, split, tail, newRegion(0)
	x.exact = split == 0
	x.counted = x.exact
	x.shift = 0 // a shift of the old file's numbers means nothing for the new one
	x.estimate = 0
	if !x.exact && tail.newlines > 0 {
		avg := float64(tail.lastStart-split) / float64(tail.newlines)
		x.estimate = int(float64(split)/avg + 0.5)
	}
	x.witness = x.readWitness(size)
	x.gen++
	return nil
}

// findSplit returns the line start nearest below size-tailWindow (0 for small files).
func findSplit(f *os.File, size int64) (int64, error) {
	if size <= tailWindow {
		return 0, nil
	}
	buf := make([]byte, tailChunk)
	for hi := size - tailWindow; hi > 0 && size-tailWindow-hi < splitSearchBudget; {
		lo := max(0, hi-tailChunk)
		n, err := readFull(f, buf[:hi-lo], lo)
		if err != nil {
			return 0, err
		}
		if j := bytes.LastIndexByte(buf[:n], '\n'); j >= 0 {
			return lo + int64(j) + 1, nil
		}
		hi = lo
	}
	return 0, nil // one enormous line: index everything from the start
}

func (x *Index) readWitness(size int64) []byte {
	w := make([]byte, min(size, witnessBytes))
	if n, err := readFull(x.f, w, size-int64(len(w))); err != nil || n != len(w) {
		return nil
	}
	return w
}

// run is the background indexer: appended tail bytes first (they are what a follower looks at), then the
// head count.
func (x *Index) run() {
	defer close(x.stopped)
	buf := make([]byte, scanStep)
	x.mu.Lock()
	defer x.mu.Unlock()
	for {
		for !x.closed && (x.err != nil || (x.tail.scanned >= x.size && x.counted)) {
			x.changed.Wait()
		}
		if x.closed {
			return
		}
		gen, f := x.gen, x.f
		tailAt := x.tail.scanned
		var r region
		var end int64
		isTail := x.tail.scanned < x.size
		if isTail {
			r, end = x.tail, x.size
			// Refresh may extend the tail's marks while this step runs: append to a copy, not into the
			// same array.
			r.marks = r.marks[:len(r.marks):len(r.marks)]
		} else {
			r, end = x.head, x.split
		}
		x.mu.Unlock()
		n, err := readFull(f, buf[:min(int64(len(buf)), end-r.scanned)], r.scanned)
		if n > 0 {
			r.scan(buf[:n])
		}
		x.mu.Lock()
		if gen != x.gen || (isTail && x.tail.scanned != tailAt) {
			continue // reopened, or Refresh indexed this part of the tail meanwhile
		}
		switch {
		case err != nil:
			x.err = err
		case n == 0:
			x.err = fmt.Errorf("%s: shrank while being indexed; Refresh reindexes it", x.path)
		case isTail:
			x.tail = r
		default:
			x.head = r
			x.counted = r.scanned == x.split
		}
		x.changed.Broadcast()
	}
}

// Close stops the indexer and closes the file.
// searchBuf is a buffer of the size a search reads at a time.
func (x *Index) searchBuf() []byte {
	if x.chunk > 0 {
		return make([]byte, x.chunk)
	}
	return make([]byte, searchChunk)
}

func (x *Index) Close() error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	x.closed = true
	x.changed.Broadcast()
	x.mu.Unlock()
	<-x.stopped
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.f.Close()
}

// Len is the number of lines (provisional until Exact). The switch from provisional to counted numbers
// happens only in Len, Exact, Renumbered, Wait and the searches, never in Lines, so a viewer that calls Len
// and then Lines gets lines in the numbering Len gave it.
func (x *Index) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.applyCount()
	return x.headLinesLocked() + x.tail.count(x.size)
}

// applyCount switches to counted line numbers once the background count is done.
func (x *Index) applyCount() {
	if x.counted && !x.exact {
		x.exact = true
		if x.estimateShown {
			x.shift += x.head.newlines - x.estimate
		}
	}
}

func (x *Index) headLinesLocked() int {
	if x.exact {
		return x.head.newlines
	}
	x.estimateShown = true
	return x.estimate
}

// Exact reports whether line numbers are final (the whole log is counted).
func (x *Index) Exact() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.applyCount()
	return x.exact
}

// Renumbered returns how far line numbers moved since the last call (the head estimate being replaced by
// the count); a viewer adds it to the line numbers it holds.
func (x *Index) Renumbered() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.applyCount()
	s := x.shift
	x.shift = 0
	return s
}

// Progress returns the bytes indexed and the bytes to index.
func (x *Index) Progress() (done, total int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.head.scanned + (x.tail.scanned - x.split), x.size
}

// Wait blocks until everything up to the last Refresh is indexed, or ctx ends.
func (x *Index) Wait(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		x.mu.Lock()
		x.changed.Broadcast()
		x.mu.Unlock()
	})
	defer stop()
	x.mu.Lock()
	defer x.mu.Unlock()
	for !x.closed && x.err == nil && (!x.counted || x.tail.scanned < x.size) {
		if err := ctx.Err(); err != nil {
			return err
		}
		x.changed.Wait()
	}
	x.applyCount()
	return x.err
}

// view is a consistent snapshot for reading without the lock.
type view struct {
	f                 *os.File
	size, split       int64
	head, tail        region
	exact             bool
	headLines, length int
}

func (x *Index) snapshot() view {
	x.mu.Lock()
	defer x.mu.Unlock()
	h := x.headLinesLocked()
	return view{f: x.f, size: x.size, split: x.split, head: x.head, tail: x.tail, exact: x.exact,
		headLines: h, length: h + x.tail.count(x.size)}
}

// Lines returns up to n lines from line from. Lines in the part not yet counted are empty strings.
func (x *Index) Lines(from, n int) []string {
	v := x.snapshot()
	return v.lines(from, n)
}

// Tail returns the last n lines. Unlike Lines(Len()-n, n) it cannot straddle a renumbering.
func (x *Index) Tail(n int) []string {
	v := x.snapshot()
	return v.lines(v.length-n, n)
}

func (v *view) lines(from, n int) []string {
	from = max(0, from)
	n = min(n, v.length-from)
	if n <= 0 {
		return nil
	}
	out := make([]string, 0, n)
	for len(out) < n {
		line := from + len(out)
		want := n - len(out)
		switch {
		case line >= v.headLines:
			rel := line - v.headLines
			out = append(out, newLineReader(v.f, &v.tail, v.size).lines(rel, min(want, v.tail.count(v.size)-rel))...)
			if len(out) < n { // the file shrank under us
				return out
			}
		case line < v.head.newlines:
			k := min(want, v.head.newlines-line)
			got := newLineReader(v.f, &v.head, v.split).lines(line, k)
			out = append(out, got...)
			if len(got) < k {
				return out
			}
		default:
			k := min(want, v.headLines-line)
			for i := 0; i < k; i++ {
				out = append(out, "")
			}
		}
	}
	return out
}

// Refresh picks up bytes appended since the last call. When the file was truncated, rewritten in place or
// replaced (rotated), the index starts over and truncated is true.
func (x *Index) Refresh() (truncated bool, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return false, os.ErrClosed
	}
	cur, err := os.Stat(x.path)
	if err != nil {
		return false, err
	}
	old, err := x.f.Stat()
	if err != nil {
		return false, err
	}
	switch {
	case !os.SameFile(cur, old), old.Size() < x.size, !bytes.Equal(x.readWitness(x.size), x.witness):
		if err := x.open(); err != nil {
			return true, err
		}
		x.err = nil
		x.changed.Broadcast()
		return true, nil
	case old.Size() > x.size:
		x.size = old.Size()
		x.witness = x.readWitness(x.size)
		x.err = nil
		if err := x.scanTailLocked(refreshSyncBytes); err != nil {
			x.err = err
		}
		x.changed.Broadcast()
	}
	return false, nil
}

// scanTailLocked indexes up to limit bytes of the tail not yet indexed, with the lock held.
func (x *Index) scanTailLocked(limit int64) error {
	buf := make([]byte, min(scanStep, limit, x.size-x.tail.scanned))
	for done := int64(0); done < limit && x.tail.scanned < x.size; {
		n, err := readFull(x.f, buf[:min(int64(len(buf)), x.size-x.tail.scanned, limit-done)], x.tail.scanned)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%s: shrank while being indexed; Refresh reindexes it", x.path)
		}
		x.tail.scan(buf[:n])
		done += int64(n)
	}
	return nil
}

// waitExact blocks until line numbers are final.
func (x *Index) waitExact() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for !x.counted && !x.closed && x.err == nil {
		x.changed.Wait()
	}
	x.applyCount()
}

// EntryStart returns the line where the entry holding line starts: line itself when it has a timestamp,
// else the nearest timestamped line above it. A log that begins with untimed lines has its first entry at
// line 0. The search looks at most entryStartReach lines up and returns the highest line it looked at
// when that is not enough.
func (x *Index) EntryStart(line int) int {
	const step = 256
	top := max(0, line-entryStartReach)
	for hi := line + 1; hi > top; {
		lo := max(top, hi-step)
		lines := x.Lines(lo, hi-lo)
		for i := len(lines) - 1; i >= 0; i-- {
			if hasStamp([]byte(lines[i])) {
				return lo + i
			}
		}
		hi = lo
	}
	return top
}

// Size is the number of bytes indexed (the file size at open or at the last Refresh).
func (x *Index) Size() int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.size
}
