package runlog

import (
	"bytes"
	"strings"

	"runwatch/model"
)

// stageWindow is how much of the head and of the tail StageStartOrder reads. Stage starts are written once
// per stage, near the top for a fresh run and near the end after a resume, so both ends are looked at and
// the middle of a huge log is skipped.
const stageWindow = 1 << 20

// StageStartOrder returns the stage ids of `stage_start stage=X` entries (also `stage-start`, and the
// positional `stage_start X` and `X start` forms) in order of first appearance, reading only the first and
// last MiB of the log. It returns nil when the log is missing, unreadable or not a regular file: stage order
// then falls back to natural order, and the log itself is reported by whoever reads it for display.
func StageStartOrder(path string) []string {
	f, fi, err := openRegular(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	size := fi.Size()
	var order []string
	seen := map[string]bool{}
	collect := func(lo, hi int64) {
		buf := make([]byte, hi-lo)
		n, err := readFull(f, buf, lo)
		if err != nil {
			return
		}
		b := buf[:n]
		if lo == 0 {
			b = bytes.TrimPrefix(b, []byte("\ufeff")) // as ParseEntries does at the start of the file
		}
		for _, id := range stageStarts(completeLines(b, lo > 0, hi < size)) {
			if !seen[id] {
				seen[id] = true
				order = append(order, id)
			}
		}
	}
	if size <= 2*stageWindow {
		collect(0, size)
	} else {
		collect(0, stageWindow)
		collect(size-stageWindow, size)
	}
	return order
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
