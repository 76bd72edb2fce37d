package brief

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"runwatch/state/cachedir"
	"runwatch/state/safefile"
	"runwatch/userdir"
)

// A brief checks every artifact a run.log's `artifact integrity` blocks recorded, and those blocks can sit
// anywhere in a log of gigabytes. Reading the whole log on every brief costs seconds, so the scan keeps an
// index: the blocks found up to an offset at a line boundary, with the state of a block open there. The next
// brief reads only what was appended since. run.log is append-only (its writers append; runwatch never
// rewrites it), so the index is checked against the file rather than trusted: same inode, at least as large,
// and the same bytes at its start and just before the offset; anything else means a new scan from the start.
//
// The index lives in memory for the dashboard's process and, for logs past indexStore.persistMin, in the
// cache folder the caller names (IndexDir: $XDG_CACHE_HOME/runwatch/artifact-index/) so that `runwatch brief`
// (a new process each time) gains too. It is a cache: when it cannot be read or written, the brief scans the
// log, as before.

// IndexCache is where a brief keeps the indexes of large logs between processes.
type IndexCache struct {
	// Dir holds the index files (IndexDir); "" keeps them in memory only.
	Dir string
	// ReadOnly keeps Dir as it is: indexes found there are used, none is written (read-only mode writes
	// nothing anywhere).
	ReadOnly bool
}

// IndexDir is the index files' folder in the user's cache folder of the environment getenv reads
// (userdir.Cache), or "" when it has none.
func IndexDir(getenv func(string) string) string {
	return userdir.RunwatchCache(getenv, "artifact-index")
}

const (
	// checkWindow is how many bytes at the log's start and before the index offset must still match.
	checkWindow = 4 << 10
	// maxIndexedArtifacts bounds what an index holds; a log recording more distinct paths is scanned whole.
	maxIndexedArtifacts = 20_000
	// memoryIndexes bounds the indexes a long-lived process keeps.
	memoryIndexes = 64
	indexVersion  = 1
)

// scanState is the scan's position in one log: the blocks found before Offset and whether a block is open
// there.
type scanState struct {
	Offset   int64              `json:"offset"`
	InBlock  bool               `json:"in_block"`
	Stage    string             `json:"stage"`
	Recorded []recordedArtifact `json:"recorded"`
	index    map[string]int
}

func (s *scanState) add(stage, path string) {
	if s.index == nil {
		s.index = make(map[string]int, len(s.Recorded))
		for i, a := range s.Recorded {
			s.index[a.Path] = i
		}
	}
	if i, seen := s.index[path]; seen {
		s.Recorded[i].Stage = stage
		return
	}
	s.index[path] = len(s.Recorded)
	s.Recorded = append(s.Recorded, recordedArtifact{Stage: stage, Path: path})
}

func (s scanState) clone() scanState {
	s.Recorded = append([]recordedArtifact(nil), s.Recorded...)
	s.index = nil
	return s
}

// line handles one line (without its newline) the way a line-by-line reader would.
func (s *scanState) line(line []byte) {
	switch {
	case startsEntry(line):
		s.InBlock, s.Stage = false, ""
		msg := line[bytes.IndexByte(line, ']')+1:]
		if i := bytes.Index(msg, artifactIntegrity); i >= 0 {
			s.InBlock, s.Stage = true, string(bytes.TrimSpace(msg[:i]))
		}
	case s.InBlock:
		if p, ok := bytes.CutPrefix(bytes.TrimSpace(line), artifactKey); ok && len(p) > 0 {
			s.add(s.Stage, string(p))
		}
	}
}

// scanLines consumes buf, which holds whole lines each ending in '\n', and returns how many bytes it used.
// Outside a block only lines holding the marker are looked at: the rest are skipped by bytes.Index.
func (s *scanState) scanLines(buf []byte) {
	pos := 0
	for pos < len(buf) {
		if !s.InBlock {
			i := bytes.Index(buf[pos:], artifactIntegrity)
			if i < 0 {
				return
			}
			// Back to the start of the marker's line: pos is always at a line start.
			pos += bytes.LastIndexByte(buf[pos:pos+i], '\n') + 1
		}
		end := pos + bytes.IndexByte(buf[pos:], '\n') + 1
		s.line(scanLine(buf[pos:end]))
		pos = end
	}
}

// scanLine is what the line reader keeps of one line with its newline: a line longer than maxScanLine is cut
// there (and not trimmed), shorter ones lose their line ending.
func scanLine(raw []byte) []byte {
	if len(raw) > maxScanLine {
		return raw[:maxScanLine]
	}
	return bytes.TrimRight(raw, "\r\n")
}

// scanFrom reads f from st.Offset to its end. It returns the state at the last line boundary (to keep) and
// the state with the unterminated last line, if any, taken too (to use).
func (s *indexStore) scanFrom(f *os.File, size int64, st scanState) (kept, final scanState, err error) {
	if _, err := f.Seek(st.Offset, io.SeekStart); err != nil {
		return st, st, err
	}
	// A small log (or a small appended part) needs no 4 MiB buffer; the buffer stays above the line cap so
	// that a line filling it is one to cut.
	buf := make([]byte, min(int64(s.chunk), max(size-st.Offset+1, maxScanLine+1)))
	have := 0
	for {
		n, rerr := io.ReadFull(f, buf[have:])
		s.scanned.Add(int64(n))
		have += n
		eof := errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF)
		if rerr != nil && !eof {
			return st, st, rerr
		}
		whole := bytes.LastIndexByte(buf[:have], '\n') + 1
		if whole == 0 && have == len(buf) {
			// One line fills the buffer: keep what a line reader keeps of it and skip to its end.
			before := st.clone()
			st.line(scanLine(buf[:have]))
			skipped, end, serr := skipLine(f, &s.scanned)
			if serr != nil {
				return before, st, serr
			}
			if end {
				// The line is not finished: the index stays before it, so the rest of it is read next time.
				return before, st, nil
			}
			st.Offset += int64(have) + skipped
			have = 0
			continue
		}
		st.scanLines(buf[:whole])
		st.Offset += int64(whole)
		have = copy(buf, buf[whole:have])
		if eof {
			final = st.clone()
			if have > 0 {
				final.line(scanLine(buf[:have]))
			}
			return st, final, nil
		}
	}
}

// skipLine reads past the next '\n', counting what it reads in scanned. It returns the bytes consumed and
// whether the file ended first.
func skipLine(f *os.File, scanned *atomic.Int64) (int64, bool, error) {
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, err := f.Read(buf)
		scanned.Add(int64(k))
		if i := bytes.IndexByte(buf[:k], '\n'); i >= 0 {
			n += int64(i + 1)
			_, serr := f.Seek(int64(i+1-k), io.SeekCurrent)
			return n, false, serr
		}
		n += int64(k)
		if errors.Is(err, io.EOF) {
			return n, true, nil
		}
		if err != nil {
			return n, false, err
		}
	}
}

// scanArtifactBlocks returns the artifact= paths of `<STAGE> artifact integrity` entries in run.log, in log
// order; a later block for the same path replaces the earlier one's stage. It reads only what an index of an
// earlier scan of this log does not cover, kept in s and in c.
func (s *indexStore) scanArtifactBlocks(path string, c IndexCache) ([]recordedArtifact, error) {
	f, fi, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	id := logIdentity(fi)
	start := scanState{}
	idx, ok := s.get(path, id, c.Dir)
	if ok && idx.valid(f, fi.Size()) {
		start = idx.State.clone()
	} else {
		idx = nil
	}
	kept, final, err := s.scanFrom(f, fi.Size(), start)
	if err != nil {
		return final.Recorded, err
	}
	if kept.Offset > 0 && len(kept.Recorded) <= maxIndexedArtifacts {
		if next, err := newIndex(f, path, id, kept); err == nil {
			s.put(next, idx, c)
		}
	}
	return final.Recorded, nil
}

// fileIdentity tells a log from another one created at the same path.
type fileIdentity struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

func logIdentity(fi os.FileInfo) fileIdentity {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileIdentity{Dev: uint64(sys.Dev), Ino: sys.Ino}
	}
	return fileIdentity{}
}

// artifactIndex is the scan of one log up to State.Offset.
type artifactIndex struct {
	Version int          `json:"version"`
	Path    string       `json:"path"`
	File    fileIdentity `json:"file"`
	Head    string       `json:"head_sha256"` // of the first min(checkWindow, Offset) bytes
	Tail    string       `json:"tail_sha256"` // of the checkWindow bytes (or fewer) before Offset
	State   scanState    `json:"state"`
	// persisted is the offset of the copy in the cache folder (0: none), so that a brief after a few appended
	// lines does not rewrite the file.
	persisted int64
}

// persistEvery is how far a log must have grown past its persisted index before the file is written again.
const persistEvery = 1 << 20

func windowHashes(f *os.File, offset int64) (head, tail string, err error) {
	read := func(from, n int64) (string, error) {
		b := make([]byte, n)
		if _, err := f.ReadAt(b, from); err != nil {
			return "", err
		}
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:]), nil
	}
	if head, err = read(0, min(checkWindow, offset)); err != nil {
		return "", "", err
	}
	from := max(0, offset-checkWindow)
	tail, err = read(from, offset-from)
	return head, tail, err
}

func newIndex(f *os.File, path string, id fileIdentity, st scanState) (*artifactIndex, error) {
	head, tail, err := windowHashes(f, st.Offset)
	if err != nil {
		return nil, err
	}
	return &artifactIndex{Version: indexVersion, Path: path, File: id, Head: head, Tail: tail, State: st.clone()}, nil
}

// valid reports whether the log still begins with the bytes the index was built from.
func (x *artifactIndex) valid(f *os.File, size int64) bool {
	if x.Version != indexVersion || x.State.Offset <= 0 || x.State.Offset > size {
		return false
	}
	head, tail, err := windowHashes(f, x.State.Offset)
	return err == nil && head == x.Head && tail == x.Tail
}

// indexStore holds indexes in memory and, for large logs, in a cache folder (IndexCache).
type indexStore struct {
	mu  sync.Mutex
	mem map[string]*artifactIndex
	// chunk is how much of the log one read takes; between blocks the scan only looks for the marker. It
	// must exceed maxScanLine (tests make it small to cross chunk boundaries often).
	chunk int
	// persistMin: smaller logs scan in a few milliseconds and are not worth a file in the cache.
	persistMin int64
	// scanned counts the log bytes scans have read, so tests can tell an indexed scan from a full one.
	scanned atomic.Int64
}

func newIndexStore() *indexStore {
	return &indexStore{mem: map[string]*artifactIndex{}, chunk: 4 << 20, persistMin: 16 << 20}
}

// indexes are this process's: a long-lived one (the dashboard) keeps them from one brief to the next.
var indexes = newIndexStore()

// maxIndexFileBytes caps an index file, read or written: an index is a few bytes an artifact recorded.
const maxIndexFileBytes = 64 << 20

func indexFileName(path string) string {
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:16]) + ".json"
}

// get is the index of the log at path: in memory, else in dir ("" for none).
func (s *indexStore) get(path string, id fileIdentity, dir string) (*artifactIndex, bool) {
	s.mu.Lock()
	x, ok := s.mem[path]
	s.mu.Unlock()
	if ok && x.File == id {
		return x, true
	}
	if dir == "" {
		return nil, false
	}
	d, ok := cachedir.Open(dir, false)
	if !ok {
		return nil, false
	}
	data, err := d.ReadFile(indexFileName(path), maxIndexFileBytes)
	d.Close()
	if err != nil {
		return nil, false
	}
	x = &artifactIndex{}
	if json.Unmarshal(data, x) != nil || x.Path != path || x.File != id {
		return nil, false
	}
	x.persisted = x.State.Offset
	return x, true
}

// put keeps x in memory and, unless c says not to, in c.Dir; from is the index x grew from, if any.
func (s *indexStore) put(x *artifactIndex, from *artifactIndex, c IndexCache) {
	if from != nil && from.File == x.File {
		x.persisted = from.persisted
	}
	s.mu.Lock()
	if _, ok := s.mem[x.Path]; !ok && len(s.mem) >= memoryIndexes {
		for k := range s.mem {
			delete(s.mem, k)
			break
		}
	}
	s.mem[x.Path] = x
	s.mu.Unlock()
	dir := c.Dir
	if dir == "" || c.ReadOnly || x.State.Offset < s.persistMin || (x.persisted > 0 && x.State.Offset-x.persisted < persistEvery) {
		return
	}
	data, err := json.Marshal(x)
	if err != nil || len(data) > maxIndexFileBytes {
		return
	}
	d, ok := cachedir.Open(dir, true)
	if !ok {
		return
	}
	defer d.Close()
	// Whole or not at all, so a reader never sees half of one; losing it costs one full scan.
	if d.WriteFile(indexFileName(x.Path), data) == nil {
		x.persisted = x.State.Offset
	}
}
