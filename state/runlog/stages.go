package runlog

import (
	"bytes"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"runwatch/model"
)

// stageWindow is how much of the head and of the tail ReadStageEvidence reads. Stage starts are written once
// per stage, near the top for a fresh run and near the end after a resume, so both ends are looked at and
// the middle of a huge log is skipped.
const stageWindow = 1 << 20

// StageEvidence is what a run.log says about its stages (docs/FORMATS.md C.1), from the bounded scan described at
// ReadStageEvidence.
type StageEvidence struct {
	// Starts and Completes are the stages of stage_start / stage_complete entries (any of the spellings of
	// B.5: `stage_start stage=X`, `stage-complete X next=Y`, `X complete`), in order of first appearance.
	Starts    []string
	Completes []string
	// Next are [stage, next] pairs from `next=` and `next_stage=` fields of completion entries.
	Next [][2]string
	// Latest is the last stage event seen for each stage, keyed by the upper-case stage id.
	Latest map[string]StageEvent
	// Spans is each stage's latest start and the completion after it, keyed by the upper-case stage id: what
	// durations are learned from (model.History).
	Spans map[string]model.StageSpan
	// Undone are the action ids that `runwatch_undo undoes=X` entries name, oldest first, the latest
	// maxUndone of them: every entry of such an action (tool=runwatch action_id=X) was undone, and the
	// timeline marks it so.
	Undone []string

	// The lines of an action runwatch undid say nothing about the run any more: a `runwatch_undo undoes=X`
	// entry cancels the stage entries that carry action_id=X. To take them out after the fact, the latest
	// stage entries are kept (recent); what fell out of that window is folded into base, where nothing can be
	// cancelled any more (an undo names the run's last action, so its lines are recent).
	recent []StageEvent
	base   *StageEvidence
	undone map[string]bool
}

// maxRecentStageEvents is how many of the latest stage entries of a log at least are kept for cancellation
// by a later undo (at most twice as many are).
const maxRecentStageEvents = 256

// StageEvent is one stage entry: its event (stage_start, stage_complete, stage_blocked), stage id as written
// and its fields.
type StageEvent struct {
	Stage   string
	Event   string
	Time    time.Time
	Message string
	Fields  []model.KV
	// ActionID is the action_id of an entry runwatch wrote (tool=runwatch), which a later undo may cancel.
	ActionID string
}

// Field returns a field's value.
func (e StageEvent) Field(key string) string {
	for _, f := range e.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	return ""
}

// Mentioned lists every stage id the evidence names, in order of first appearance.
func (ev StageEvidence) Mentioned() []string {
	var out []string
	seen := map[string]bool{}
	addID := func(id string) {
		if k := strings.ToUpper(id); id != "" && !seen[k] {
			seen[k] = true
			out = append(out, id)
		}
	}
	for _, id := range ev.Starts {
		addID(id)
	}
	for _, id := range ev.Completes {
		addID(id)
	}
	for _, p := range ev.Next {
		addID(p[0])
		addID(p[1])
	}
	var rest []StageEvent
	for _, e := range ev.Latest {
		rest = append(rest, e)
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].Time.Before(rest[j].Time) })
	for _, e := range rest {
		addID(e.Stage)
	}
	return out
}

func (ev StageEvidence) clone() StageEvidence {
	out := StageEvidence{
		Starts:    append([]string(nil), ev.Starts...),
		Completes: append([]string(nil), ev.Completes...),
		Next:      append([][2]string(nil), ev.Next...),
		Latest:    make(map[string]StageEvent, len(ev.Latest)),
		Spans:     make(map[string]model.StageSpan, len(ev.Spans)),
		Undone:    append([]string(nil), ev.Undone...),
		// recent is only ever appended to or replaced, so the copies may share its array.
		recent: ev.recent[:len(ev.recent):len(ev.recent)],
		base:   ev.base,
	}
	for k, v := range ev.Latest {
		out.Latest[k] = v
	}
	for k, v := range ev.Spans {
		out.Spans[k] = v
	}
	if len(ev.undone) > 0 {
		out.undone = make(map[string]bool, len(ev.undone))
		for k := range ev.undone {
			out.undone[k] = true
		}
	}
	return out
}

// ReadStageEvidence returns what the log says about stages. The first look at a log reads only its first and
// last MiB; later looks at the same file (past StageTailWindow) read only what was appended since, so a
// watcher that re-reads a run on every batch of a busy log pays for the new bytes, not for two windows each
// time. ok is false when the
// log is missing, unreadable or not a regular file: the log itself is reported by whoever reads it for
// display.
func ReadStageEvidence(path string) (StageEvidence, bool) {
	f, fi, err := openRegularAt(path)
	if err != nil {
		stageScans.forget(path)
		return StageEvidence{}, false
	}
	defer f.Close()
	cur := stageScan{id: identity(fi), size: fi.Size(), mtime: fi.ModTime()}
	prev, known := stageScans.get(path)
	switch {
	case known && prev.id == cur.id && prev.size == cur.size && prev.mtime.Equal(cur.mtime):
		return prev.ev.clone(), true
	case known && prev.id == cur.id && cur.size > prev.size && prev.scanned <= prev.size:
		// Appended to: scan from the end of the last whole line seen (only the last window of a huge jump).
		cur.ev = prev.ev.clone()
		lo, cut := prev.scanned, false
		if cur.size-lo > stageWindow {
			lo, cut = cur.size-stageWindow, true
		}
		cur.scanned = scanStages(f, lo, cur.size, cut, &cur.ev)
	default:
		// New, truncated, rotated or rewritten: both ends afresh.
		cur.ev = StageEvidence{Latest: map[string]StageEvent{}, Spans: map[string]model.StageSpan{}}
		if cur.size <= 2*stageWindow {
			cur.scanned = scanStages(f, 0, cur.size, false, &cur.ev)
		} else {
			scanStages(f, 0, stageWindow, false, &cur.ev)
			cur.scanned = scanStages(f, cur.size-stageWindow, cur.size, true, &cur.ev)
		}
	}
	if cur.size <= StageTailWindow {
		// A log within one tail window is scanned whole again when it grows, as cheaply as status scans a
		// tail: its evidence is not worth keeping, and most logs are this short.
		stageScans.forget(path)
		return cur.ev, true
	}
	stageScans.put(path, cur)
	return cur.ev.clone(), true
}

// scanStages adds the stage entries of the whole lines in [lo, hi) to ev and returns the offset just after
// the last whole line, where the next scan must begin. A partial last line is left for the next scan, when
// its newline has arrived.
func scanStages(f io.ReaderAt, lo, hi int64, cutStart bool, ev *StageEvidence) int64 {
	var buf []byte
	if hi-lo <= StageTailWindow {
		// status reads one tail a run: the buffer is taken again, not allocated each time (what is kept of
		// the entries is copied out of it by ParseEntries).
		p := scanBufs.Get().(*[]byte)
		defer scanBufs.Put(p)
		buf = (*p)[:hi-lo]
	} else {
		buf = make([]byte, hi-lo)
	}
	n, err := readFull(f, buf, lo)
	if err != nil {
		return lo
	}
	b := buf[:n]
	if lo == 0 {
		b = bytes.TrimPrefix(b, []byte("\ufeff")) // as ParseEntries does at the start of the file
	}
	end := lo + int64(bytes.LastIndexByte(buf[:n], '\n')+1)
	stageEntries(completeLines(b, cutStart, true), ev.add)
	return max(end, lo)
}

// scanBufs are read buffers of StageTailWindow bytes for scanStages.
var scanBufs = sync.Pool{New: func() any {
	b := make([]byte, StageTailWindow)
	return &b
}}

func appendFirst(list []string, id string) []string {
	for _, x := range list {
		if strings.EqualFold(x, id) {
			return list
		}
	}
	return append(list, id)
}

func (ev *StageEvidence) add(e model.LogEntry) {
	if e.Event == "runwatch_undo" {
		id := fieldOf(e.Fields, "undoes")
		ev.noteUndone(id)
		ev.cancel(id)
		return
	}
	stage := fieldOf(e.Fields, "stage")
	if stage == "" {
		return
	}
	switch e.Event {
	case "stage_start", "stage_started", "stage_complete", "stage_completed", "stage_done", "stage_blocked":
	default:
		return
	}
	se := StageEvent{Stage: stage, Event: e.Event, Time: e.Time, Message: e.Message, Fields: e.Fields}
	if fieldOf(e.Fields, "tool") == "runwatch" {
		se.ActionID = fieldOf(e.Fields, "action_id")
	}
	ev.recent = append(ev.recent, se)
	if len(ev.recent) > 2*maxRecentStageEvents {
		// The oldest entries are folded into base a window at a time, not one by one: base is shared with
		// the evidence's copies and is cloned to be written, and recent is copied to drop its front; per
		// entry, both made a log of stage entries cost its length times the window.
		if ev.base == nil {
			ev.base = &StageEvidence{}
		} else {
			b := ev.base.clone()
			ev.base = &b
		}
		fold := len(ev.recent) - maxRecentStageEvents
		for _, old := range ev.recent[:fold] {
			if old.ActionID == "" || !ev.undone[old.ActionID] {
				ev.base.apply(old)
			}
		}
		ev.recent = append([]StageEvent(nil), ev.recent[fold:]...)
	}
	ev.apply(se)
}

// maxUndone bounds StageEvidence.Undone: an undo names the run's last action, so the actions it undid are
// recent, and a log of a million undo lines costs no more than this.
const maxUndone = 64

// noteUndone records id as undone, the newest last.
func (ev *StageEvidence) noteUndone(id string) {
	if id == "" || slices.Contains(ev.Undone, id) {
		return
	}
	if len(ev.Undone) >= maxUndone {
		ev.Undone = append(ev.Undone[:0:0], ev.Undone[len(ev.Undone)-maxUndone+1:]...)
	}
	ev.Undone = append(ev.Undone, id)
}

// cancel takes the stage entries of action id out of the evidence, as if they had never been written.
func (ev *StageEvidence) cancel(id string) {
	if id == "" || ev.undone[id] {
		return
	}
	found := false
	for _, se := range ev.recent {
		if se.ActionID == id {
			found = true
			break
		}
	}
	if !found {
		return
	}
	if ev.undone == nil {
		ev.undone = map[string]bool{}
	}
	ev.undone[id] = true
	fresh := StageEvidence{}
	if ev.base != nil {
		fresh = ev.base.clone()
	}
	for _, se := range ev.recent {
		if se.ActionID == "" || !ev.undone[se.ActionID] {
			fresh.apply(se)
		}
	}
	ev.Starts, ev.Completes, ev.Next, ev.Latest, ev.Spans = fresh.Starts, fresh.Completes, fresh.Next, fresh.Latest, fresh.Spans
}

// apply adds one stage entry to the derived evidence.
func (ev *StageEvidence) apply(se StageEvent) {
	if ev.Latest == nil {
		ev.Latest = map[string]StageEvent{}
	}
	if ev.Spans == nil {
		ev.Spans = map[string]model.StageSpan{}
	}
	k := strings.ToUpper(se.Stage)
	switch se.Event {
	case "stage_start", "stage_started":
		ev.Starts = appendFirst(ev.Starts, se.Stage)
		ev.Spans[k] = model.StageSpan{Start: se.Time}
	case "stage_complete", "stage_completed", "stage_done":
		ev.Completes = appendFirst(ev.Completes, se.Stage)
		for _, kv := range se.Fields {
			if (kv.Key == "next" || kv.Key == "next_stage") && kv.Value != "" && !strings.EqualFold(kv.Value, se.Stage) {
				ev.Next = append(ev.Next, [2]string{se.Stage, kv.Value})
				break
			}
		}
		if sp := ev.Spans[k]; !sp.Start.IsZero() && sp.End.IsZero() && !se.Time.Before(sp.Start) {
			sp.End = se.Time
			ev.Spans[k] = sp
		}
	}
	ev.Latest[k] = se
}

func fieldOf(fields []model.KV, key string) string {
	for _, kv := range fields {
		if kv.Key == key && kv.Value != "" {
			return kv.Value
		}
	}
	return ""
}

// stageScan is what ReadStageEvidence remembers of one log.
type stageScan struct {
	id      fileIdentity
	size    int64
	mtime   time.Time
	scanned int64
	ev      StageEvidence
}

type fileIdentity struct{ dev, ino uint64 }

func identity(fi fs.FileInfo) fileIdentity {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileIdentity{uint64(st.Dev), st.Ino}
	}
	return fileIdentity{}
}

// stageScanCache is bounded: past maxStageScans logs it starts over, which costs one full look per log. A
// log's evidence is ~3 KB; the cache saves rescanning the logs that grow, a handful to hundreds at a time,
// while a dashboard over 10,000 runs kept 4,096 of them, 12.7 MB, 8% of its heap (issue 35). It holds
// only logs past StageTailWindow: a shorter one costs less to scan again than to remember.
type stageScanCache struct {
	mu sync.Mutex
	m  map[string]stageScan
}

const maxStageScans = 1024

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

// maxEntryLines bounds how far a stage entry's continuation lines are followed.
const maxEntryLines = 64

// stageEntries calls fn, in file order, with each entry of b that may be a stage entry or an undo. Only the
// first word after each line's stamp is looked at (mayBeStageEntry): the thousands of other lines of a real
// log cost a search for their newline, nothing is allocated for them, and only the few entries whose first
// word may name a stage event are parsed. (A search for the words stage, start and complete anywhere in the
// log, before this, cost status a tenth of its CPU: those letters are everywhere.)
func stageEntries(b []byte, fn func(model.LogEntry)) {
	for ls := 0; ls < len(b); {
		next := len(b)
		if nl := bytes.IndexByte(b[ls:], '\n'); nl >= 0 {
			next = ls + nl + 1
		}
		if !mayBeStageEntry(b[ls:next]) {
			ls = next
			continue
		}
		// The entry runs to the next stamped line: its continuation lines may hold its fields (stage=).
		end := next
		for i := 1; i < maxEntryLines && end < len(b) && !hasStamp(b[end:]); i++ {
			nl := bytes.IndexByte(b[end:], '\n')
			if nl < 0 {
				end = len(b)
				break
			}
			end += nl + 1
		}
		data := b[ls:end]
		if data[len(data)-1] != '\n' {
			data = append(data[:len(data):len(data)], '\n')
		}
		if entries, _ := ParseEntries(data, 0); len(entries) > 0 && entries[0].HasTime {
			fn(entries[0])
		}
		ls = end
	}
}

// mayBeStageEntry reports whether line may start an entry that StageEvidence.add keeps: its first word after
// the stamp is a stage event (stage_start, Stage-Complete: eventOf's spellings) or runwatch_undo, or a stage id
// followed by the word of one (`S1 complete`, whose event eventOf derives). The stamp itself is not judged
// here: ParseEntries does that for the few lines that pass.
func mayBeStageEntry(line []byte) bool {
	if len(line) < 21 || line[0] != '[' {
		return false
	}
	end := bytes.IndexByte(line[:min(len(line), stampProbe)], ']')
	if end < 0 {
		return false
	}
	first, rest := nextWord(line[end+1:])
	if len(first) == 0 || !(isUpper(first[0]) || first[0] == 's' || first[0] == 'r') || len(first) > 16 {
		return false
	}
	var low [16]byte
	for i, c := range first {
		switch {
		case c == '-':
			c = '_'
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		low[i] = c
	}
	switch string(low[:len(first)]) {
	case "stage_start", "stage_started", "stage_complete", "stage_completed", "stage_done", "stage_blocked",
		"runwatch_undo":
		return true
	}
	if !isStageID(string(first)) {
		return false
	}
	second, _ := nextWord(rest)
	switch string(second) {
	case "start", "started", "complete", "completed", "done", "blocked":
		return true
	}
	return false
}

// nextWord splits the first blank-separated word off b, as tokenize does (a line's CR and newline end it too).
func nextWord(b []byte) (word, rest []byte) {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	n := 0
	for n < len(b) && b[n] != ' ' && b[n] != '\t' && b[n] != '\r' && b[n] != '\n' {
		n++
	}
	return b[:n], b[n:]
}

// StageTailWindow is how much of a log's end ReadStageTail reads: the writer stops right after the entry
// that says why (stage_blocked), so the latest word on a stage is at the end.
const StageTailWindow = 64 << 10

// ReadStageTail is ReadStageEvidence over the last StageTailWindow bytes only, for a run whose stage order
// the files settle without the log: only the latest word on each stage is wanted then.
func ReadStageTail(path string) (StageEvidence, bool) {
	f, fi, err := openRegularAt(path)
	if err != nil {
		return StageEvidence{}, false
	}
	defer f.Close()
	ev := StageEvidence{Latest: map[string]StageEvent{}, Spans: map[string]model.StageSpan{}}
	lo := max(0, fi.Size()-StageTailWindow)
	scanStages(f, lo, fi.Size(), lo > 0, &ev)
	return ev, true
}

// conventionEvents are events only the resumable convention's writers log (docs/FORMATS.md B.5).
var conventionEvents = map[string]bool{
	"run_bootstrap": true, "bootstrap": true, "lock_acquired": true, "lock_released": true, "stage_start": true,
	"stage_complete": true, "stage_blocked": true, "stage_artifact_integrity": true, "phase_commit": true,
	"phase_done": true, "run_complete": true, "finalize_complete": true, "stale_lock_replaced": true,
}

// headProbe is how much of a log LooksLikeRunLog reads.
const headProbe = 16 << 10

// LooksLikeRunLog reports whether the file at path is a run.log of the resumable convention: it starts with a
// `[timestamp] ` entry and, within its first 16 KiB, holds an event or a run_id= field that only that
// convention's writers log. It is how a run folder whose state.env did not travel with it is recognised.
func LooksLikeRunLog(path string) bool {
	f, _, err := openRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, headProbe)
	n, _ := readFull(f, buf, 0)
	b := bytes.TrimPrefix(buf[:n], []byte("\ufeff"))
	if !hasStamp(b) {
		return false
	}
	if n == headProbe {
		b = completeLines(b, false, true)
	} else if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	entries, _ := ParseEntries(b, 0)
	for _, e := range entries {
		if conventionEvents[e.Event] || strings.HasPrefix(e.Message, "run bootstrapped") {
			return true
		}
		for _, kv := range e.Fields {
			if kv.Key == "run_id" {
				return true
			}
		}
	}
	return false
}

// entryBackLimit bounds how far EntryBefore looks back for the stamped line of an entry.
const entryBackLimit = 64 << 10

// EntryBefore returns the entry whose lines end just before off: its stamped first line and the continuation
// lines up to off. It is how a continuation line appended later is given back to its entry when that entry
// was written before the reader started following the log. ok is false when no stamped line lies within
// 64 KiB before off.
func EntryBefore(path string, off int64) (model.LogEntry, bool) {
	f, _, err := openRegular(path)
	if err != nil || off <= 0 {
		return model.LogEntry{}, false
	}
	defer f.Close()
	lo := max(0, off-entryBackLimit)
	buf := make([]byte, off-lo)
	n, err := readFull(f, buf, lo)
	if err != nil && n < len(buf) {
		return model.LogEntry{}, false
	}
	b := buf[:n]
	if lo > 0 {
		b = completeLines(b, true, false)
		lo = off - int64(len(b))
	}
	for h := bytes.LastIndexByte(b[:max(0, len(b)-1)], '\n') + 1; ; {
		if hasStamp(b[h:]) {
			entries, _ := ParseEntries(b[h:], lo+int64(h))
			if len(entries) > 0 && entries[0].HasTime {
				return entries[0], true
			}
			return model.LogEntry{}, false
		}
		if h == 0 {
			return model.LogEntry{}, false
		}
		h = bytes.LastIndexByte(b[:h-1], '\n') + 1
	}
}
