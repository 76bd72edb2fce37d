package runlog

import (
	"bytes"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"runwatch/model"
)

// stageWindow is how much of the head and of the tail StageStartOrder reads. Stage starts are written once
// per stage, near the top for a fresh run and near the end after a resume, so both ends are looked at and
// the middle of a huge log is skipped.
const stageWindow = 1 << 20

// StageStartOrder returns the stage ids of `stage_start stage=X` entries (also `stage-start`, and the
// positional `stage_start X` and `X start` forms) in order of first appearance. The first look at a log reads
// only its first and last MiB; later looks at the same file read only what was appended since, so a watcher
// that re-reads a run on every batch of a busy log pays for the new bytes, not for two windows each time. It
// returns nil when the log is missing, unreadable or not a regular file: stage order then falls back to
// natural order, and the log itself is reported by whoever reads it for display.
func StageStartOrder(path string) []string {
	f, fi, err := openRegular(path)
	if err != nil {
		stageScans.forget(path)
		return nil
	}
	defer f.Close()
	cur := stageScan{id: identity(fi), size: fi.Size(), mtime: fi.ModTime()}
	prev, known := stageScans.get(path)
	switch {
	case known && prev.id == cur.id && prev.size == cur.size && prev.mtime.Equal(cur.mtime):
		return append([]string(nil), prev.order...)
	case known && prev.id == cur.id && cur.size > prev.size && prev.scanned <= prev.size:
		// Appended to: scan from the end of the last whole line seen (only the last window of a huge jump).
		cur.order = append([]string(nil), prev.order...)
		lo, cut := prev.scanned, false
		if cur.size-lo > stageWindow {
			lo, cut = cur.size-stageWindow, true
		}
		cur.scanned = scanStages(f, lo, cur.size, cut, &cur.order)
	default:
		// New, truncated, rotated or rewritten: both ends afresh.
		if cur.size <= 2*stageWindow {
			cur.scanned = scanStages(f, 0, cur.size, false, &cur.order)
		} else {
			scanStages(f, 0, stageWindow, false, &cur.order)
			cur.scanned = scanStages(f, cur.size-stageWindow, cur.size, true, &cur.order)
		}
	}
	stageScans.put(path, cur)
	return append([]string(nil), cur.order...)
}

// scanStages adds the stage starts of the whole lines in [lo, hi) to order (first appearance wins) and
// returns the offset just after the last whole line, where the next scan must begin. A partial last line is
// left for the next scan, when its newline has arrived.
func scanStages(f *os.File, lo, hi int64, cutStart bool, order *[]string) int64 {
	buf := make([]byte, hi-lo)
	n, err := readFull(f, buf, lo)
	if err != nil {
		return lo
	}
	b := buf[:n]
	if lo == 0 {
		b = bytes.TrimPrefix(b, []byte("\ufeff")) // as ParseEntries does at the start of the file
	}
	end := lo + int64(bytes.LastIndexByte(buf[:n], '\n')+1)
	seen := map[string]bool{}
	for _, id := range *order {
		seen[id] = true
	}
	for _, id := range stageStarts(completeLines(b, cutStart, true)) {
		if !seen[id] {
			seen[id] = true
			*order = append(*order, id)
		}
	}
	return max(end, lo)
}

// stageScan is what StageStartOrder remembers of one log.
type stageScan struct {
	id      fileIdentity
	size    int64
	mtime   time.Time
	scanned int64
	order   []string
}

type fileIdentity struct{ dev, ino uint64 }

func identity(fi fs.FileInfo) fileIdentity {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileIdentity{uint64(st.Dev), st.Ino}
	}
	return fileIdentity{}
}

// stageScanCache is bounded: past maxStageScans logs it starts over, which costs one full look per log.
type stageScanCache struct {
	mu sync.Mutex
	m  map[string]stageScan
}

const maxStageScans = 4096

var stageScans = &stageScanCache{m: map[string]stageScan{}}

func (c *stageScanCache) get(path string) (stageScan, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.m[path]
	return s, ok
}

func (c *stageScanCache) put(path string, s stageScan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxStageScans {
		c.m = map[string]stageScan{}
	}
	c.m[path] = s
}

func (c *stageScanCache) forget(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, path)
}

// completeLines trims a window to whole lines: a cut first line (the window starts mid-file) and a cut last
// line (it ends mid-file) are dropped.
func completeLines(b []byte, cutStart, cutEnd bool) []byte {
	if cutStart {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			return nil
		}
		b = b[nl+1:]
	}
	if cutEnd {
		nl := bytes.LastIndexByte(b, '\n')
		if nl < 0 {
			return nil
		}
		b = b[:nl+1]
	}
	return b
}

// stageStarts finds stage ids in whole lines. Only lines mentioning "start" are parsed: a real log holds
// thousands of other lines, and this runs for every resumable run at startup.
func stageStarts(b []byte) []string {
	var ids []string
	for pos := 0; pos < len(b); {
		k := bytes.Index(b[pos:], []byte("start"))
		if k < 0 {
			break
		}
		at := pos + k
		ls := bytes.LastIndexByte(b[:at], '\n') + 1
		le := bytes.IndexByte(b[at:], '\n')
		if le < 0 {
			le = len(b)
		} else {
			le += at
		}
		if id := stageStartID(b[ls:le]); id != "" {
			ids = append(ids, id)
		}
		pos = le + 1
	}
	return ids
}

// stageStartID returns the stage of a `stage_start` entry line, or "". Only lines whose message can be a
// stage start (it begins with stage_start/stage-start, or has a " start" word) are parsed in full.
func stageStartID(line []byte) string {
	if !hasStamp(line) {
		return ""
	}
	_, msg, ok := splitStamp(lineText(line, len(line)))
	if !ok {
		return ""
	}
	if !strings.HasPrefix(msg, "stage_start") && !strings.HasPrefix(msg, "stage-start") && !strings.Contains(msg, " start") {
		return ""
	}
	e := model.LogEntry{Message: msg}
	parseMessage(&e)
	if e.Event != "stage_start" {
		return ""
	}
	for _, kv := range e.Fields {
		if kv.Key == "stage" && kv.Value != "" {
			return kv.Value
		}
	}
	return ""
}
