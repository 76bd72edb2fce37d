// Package status is the engine of `runwatch status`: it takes runs as they are read, judges them by the
// clock and the whole history once all are read, and writes them in the order asked for as the table, the
// wide table, the JSON document or JSON lines, holding a few bytes a run.
package status

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"runwatch/jsonindent"
	"runwatch/model"
	"runwatch/termsafe"
)

// Out takes the runs of one status command as they are read, in any order and from several
// goroutines, and writes them afterwards in the order asked for, holding one run at a time: each run is
// encoded as it arrives and its bytes go to a spill file; only what the order and the exit code need stays
// in memory: a statusRec, its id and its state file's path (statusRec says how many bytes). A status over
// 100,000 runs held every one of them until it printed (476 MiB; -o json 773 MiB).
//
// What the clock and the history decide of a run (its timing, orphaned or quiet: model.JudgeTime) waits
// until every run is read, so it rests on the whole history, as the dashboard's judgement does once it has
// read everything, whatever order the runs came in: the run is encoded with holes where its status,
// attention and timings go, and its model.TimeFacts (its stages' spans, a few hundred bytes, in their binary form) go to the spill
// beside it. Once all are read each run is judged again from its facts to sort it, and once more as it is
// written, filling its holes.
type Out struct {
	format  string // json, jsonl, table or wide
	now     time.Time
	rules   model.LivenessRules
	history *model.History
	holes   holeMarks
	slice   int    // table and wide: rows drawn at once
	where   string // the paths looked under, for the line that says none was found (LookedIn)
	nowhere bool   // LookedIn was told of no path: every root failed, and its error says so alone

	mu    sync.Mutex
	spill spill
	recs  []statusRec
	names strings.Builder // each run's state file path and id (statusRec.key, .id)
	err   error

	// The stages' hole marks, made as the write pass first needs each; its workers share them.
	marksMu    sync.Mutex
	stageMarks [][]byte
}

// writeScratch is one write-pass worker's buffers, reused run after run.
type writeScratch struct{ run, facts, out, ind []byte }

// statusRec is what stays in memory of a run once it is encoded: 72 bytes, and its state file's path and
// its id in Out.names (the id costs nothing when the path holds it, as a run's folder name is). It
// holds no pointer, so the collector has nothing in it to scan, however many runs there are.
type statusRec struct {
	off int64
	n   int
	// facts is the length of the run's TimeFacts, spilled just before its encoding (at off-facts); 0 for a
	// run judged already (one read over ssh).
	facts int
	// What runOrder needs: the rank, the time of the last change (time.Time.Unix and .Nanosecond: the same
	// instant without its *time.Location), the key and the id (where they are in names).
	rank          int
	updated       int64
	key, id       int
	keyLen, idLen uint32
	updatedNanos  int32
	failed        bool // an error status counts: HasErrors of a run that is not archived
}

// order is rec's runOrder; names is Out.names, which holds its key and id.
func (rec *statusRec) order(names string) runOrder {
	return runOrder{rank: rec.rank, updated: time.Unix(rec.updated, int64(rec.updatedNanos)),
		key: names[rec.key : rec.key+int(rec.keyLen)], id: names[rec.id : rec.id+int(rec.idLen)]}
}

func NewOut(format string, now time.Time, rules model.LivenessRules) *Out {
	return &Out{format: format, now: now, rules: rules, history: model.NewHistory(), holes: newHoleMarks(), slice: statusTableSlice}
}

// Add takes a run as read here (its judgement time-free, FinalizeRun): it teaches the history, and is
// judged by the clock and the history once every run is read. Safe for concurrent use.
func (o *Out) Add(r model.Run) {
	o.history.Keep(&r)
	facts, err := model.FactsOf(&r).AppendBinary(nil)
	if err != nil {
		o.fail(err)
		return
	}
	if o.format == "json" || o.format == "jsonl" {
		o.holes.cut(&r)
	}
	o.put(r, facts)
}

// SpillIn says where the runs wait until they are written: a temporary file in dir ("" is os.TempDir);
// readOnly makes none (an anonymous memory file, else memory), and warn is told once if the temporary folder
// fails and they move to memory.
func (o *Out) SpillIn(dir string, readOnly bool, warn io.Writer) {
	o.spill.dir, o.spill.readOnly, o.spill.warn = dir, readOnly, warn
}

// AddJudged takes a run judged already (read by another machine's runwatch), written as it came.
func (o *Out) AddJudged(r model.Run) { o.put(r, nil) }

func (o *Out) fail(err error) {
	o.mu.Lock()
	o.err = errors.Join(o.err, err)
	o.mu.Unlock()
}

// spillFailed records the spill's failure once (it fails every run after it the same way). o.mu is held.
func (o *Out) spillFailed(err error) {
	if !errors.Is(o.err, err) {
		o.err = errors.Join(o.err, err)
	}
}

func (o *Out) put(r model.Run, facts []byte) {
	fillEmptyLists(&r)
	rec := statusRec{rank: r.Attention.Rank, updated: r.UpdatedAt.Unix(), updatedNanos: int32(r.UpdatedAt.Nanosecond()),
		failed: r.HasErrors() && !r.Archived}
	var b []byte
	var err error
	switch o.format {
	case "json", "jsonl":
		// Compact; indented (json) or ended by a newline (jsonl) as it is written, once its holes are filled.
		b, err = r.MarshalJSON()
	default:
		// Its table row, spilled as the encoding is: the table holds one slice of rows at a time.
		b = appendRow(nil, statusRow(r, o.now, o.format == "wide"))
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		o.err = errors.Join(o.err, err)
		return
	}
	if facts != nil {
		rec.facts = len(facts)
		if _, err = o.spill.append(facts); err != nil {
			o.spillFailed(err)
			return
		}
	}
	rec.n = len(b)
	if rec.off, err = o.spill.append(b); err != nil {
		o.spillFailed(err)
		return
	}
	key := r.Key()
	rec.key, rec.keyLen = o.names.Len(), uint32(len(key))
	o.names.WriteString(key)
	if i := strings.LastIndex(key, r.ID); i >= 0 {
		rec.id = rec.key + i
	} else {
		rec.id = o.names.Len()
		o.names.WriteString(r.ID)
	}
	rec.idLen = uint32(len(r.ID))
	o.recs = append(o.recs, rec)
}

// judge reads rec's facts back from the spill and judges the run by the clock and the whole history: a run
// holding its status, attention and timings (model.TimeFacts.Judge, model.TimingAt).
func (o *Out) judge(rec statusRec, buf []byte) (model.Run, []byte, error) {
	buf, err := o.spill.read(rec.off-int64(rec.facts), rec.facts, buf)
	if err != nil {
		return model.Run{}, buf, err
	}
	var f model.TimeFacts
	if err := f.UnmarshalBinary(buf); err != nil {
		return model.Run{}, buf, err
	}
	j := f.Judge(o.now, o.rules, o.history)
	model.TimingAt(&j, o.now)
	return j, buf, nil
}

// Close frees the spill file when Print is not called (it closes it itself).
func (o *Out) Close() { o.spill.close() }

// Print sorts the runs by `by` and writes the document; failed reports whether any run has an error.
func (o *Out) Print(w io.Writer, by string, head model.Snapshot, width int) (failed bool, err error) {
	defer o.spill.close()
	if o.err != nil {
		return false, o.err
	}
	// Each run's place in the order (its rank) and, for the table, its cells follow its judgement; the
	// table's column widths follow every row's cells.
	table, wide := o.format != "json" && o.format != "jsonl", o.format == "wide"
	if !table {
		return o.printJSON(w, by, head)
	}
	natural := newColumnWidths(wide)
	var buf, rowBuf []byte
	for i := range o.recs {
		r := &o.recs[i]
		failed = failed || r.failed
		var j model.Run
		if r.facts > 0 {
			if j, buf, err = o.judge(*r, buf); err != nil {
				return failed, err
			}
			r.rank = j.Attention.Rank
		}
		if rowBuf, err = o.spill.read(r.off, r.n, rowBuf); err != nil {
			return failed, err
		}
		row, err := readRow(rowBuf)
		if err != nil {
			return failed, err
		}
		if r.facts > 0 {
			// The judged row goes to the spill in place of the one read, which the write pass then reads.
			setJudgedCells(row, j, wide)
			rowBuf = appendRow(rowBuf[:0], row)
			r.n, r.facts = len(rowBuf), 0
			if r.off, err = o.spill.append(rowBuf); err != nil {
				return failed, err
			}
		}
		natural.widen(row)
	}
	o.sortBy(by)
	return failed, o.writeTable(w, natural, wide, width, o.slice)
}

func (o *Out) sortBy(by string) {
	names := o.names.String()
	sort.Slice(o.recs, func(i, j int) bool { return o.recs[i].order(names).less(by, o.recs[j].order(names)) })
}

// printJSON is Print for json and jsonl. Judging, filling and indenting the runs was a tenth of status's CPU,
// on one core once the reading had ended and left the others idle, so both passes run on every core.
func (o *Out) printJSON(w io.Writer, by string, head model.Snapshot) (failed bool, err error) {
	if o.spill.flush(); o.spill.err != nil {
		return false, o.spill.err // the workers only read the spill from here on
	}
	scratch := make([]writeScratch, runtime.GOMAXPROCS(0))
	err = eachInParallel(len(o.recs), len(scratch), func(worker, i int) error {
		r := &o.recs[i]
		if r.facts == 0 {
			return nil
		}
		j, buf, err := o.judge(*r, scratch[worker].facts)
		scratch[worker].facts = buf
		r.rank = j.Attention.Rank
		return err
	})
	for _, r := range o.recs {
		failed = failed || r.failed
	}
	if err != nil {
		return failed, err
	}
	o.sortBy(by)
	if o.format == "json" {
		return failed, o.writeJSON(w, head, scratch)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	err = o.encodeInOrder(scratch, func(s *writeScratch, rec statusRec) ([]byte, error) {
		run, err := o.runJSON(rec, s)
		return termsafe.JSON(run), err
	}, func(_ int, run []byte) {
		bw.Write(run)
		bw.WriteByte('\n')
	})
	if err != nil {
		return failed, err
	}
	return failed, bw.Flush()
}

// eachInParallel calls f(worker, i) for every i below n on up to workers goroutines, worker being the
// goroutine's number, and returns the first error.
func eachInParallel(n, workers int, f func(worker, i int) error) error {
	workers = max(1, min(workers, n))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n && errs[w] == nil; i += workers {
				errs[w] = f(w, i)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// encodeBlock is how many runs each worker encodes before they are written: enough to keep the workers
// busy, few enough that the encodings held at once stay small.
const encodeBlock = 64

// encodeInOrder encodes o.recs, in their order, with enc on one worker a scratch, and hands each encoding to
// emit in that order with its index. What enc returns may be reused by its worker's next call.
func (o *Out) encodeInOrder(scratch []writeScratch, enc func(*writeScratch, statusRec) ([]byte, error), emit func(int, []byte)) error {
	outs := make([][]byte, encodeBlock*len(scratch))
	for start := 0; start < len(o.recs); start += len(outs) {
		block := o.recs[start:min(start+len(outs), len(o.recs))]
		err := eachInParallel(len(block), len(scratch), func(worker, i int) error {
			b, err := enc(&scratch[worker], block[i])
			outs[i] = append(outs[i][:0], b...)
			return err
		})
		if err != nil {
			return err
		}
		for i := range block {
			emit(start+i, outs[i])
		}
	}
	return nil
}

// LookedIn names the paths the runs were looked for under, which the table names when it finds none: "no
// runs found" in an empty folder did not say where it had looked.
// With no path (every root failed to answer) the table has no such line: the roots' errors say it all.
func (o *Out) LookedIn(paths []string) {
	o.nowhere = len(paths) == 0
	qs := make([]string, len(paths))
	for i, p := range paths {
		qs[i] = termsafe.Screen(p)
	}
	o.where = strings.Join(qs, ", ")
}

// writeTable writes the table of the runs, per rows at a time read back from the spill.
func (o *Out) writeTable(w io.Writer, natural columnWidths, wide bool, width, per int) error {
	if len(o.recs) == 0 {
		if o.nowhere {
			return nil
		}
		_, err := fmt.Fprintln(w, noRuns(o.where))
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	t := newStatusTable(wide, width, natural)
	rows := make([][]string, 0, per)
	var buf []byte
	for i, r := range o.recs {
		var err error
		if buf, err = o.spill.read(r.off, r.n, buf); err != nil {
			return err
		}
		row, err := readRow(buf)
		if err != nil {
			return err
		}
		if rows = append(rows, row); len(rows) == per || i == len(o.recs)-1 {
			t.write(bw, rows)
			rows = rows[:0]
		}
	}
	return bw.Flush()
}

// appendRow appends row's cells to b, each its length and its bytes: the cells must come back byte for
// byte (JSON would change what is not UTF-8), and the table reads them back a slice at a time.
func appendRow(b []byte, row []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(row)))
	for _, c := range row {
		b = binary.AppendUvarint(b, uint64(len(c)))
		b = append(b, c...)
	}
	return b
}

// readRow is the row appendRow encoded in b.
func readRow(b []byte) ([]string, error) {
	bad := errors.New("status: a table row in the spill file is damaged")
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, bad
	}
	b = b[k:]
	row := make([]string, n)
	for i := range row {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, bad
		}
		row[i] = string(b[k : k+int(l)])
		b = b[k+int(l):]
	}
	return row, nil
}

// runJSON is rec's run, compact, its holes filled by its judgement. What it returns is valid until the next
// call with s: it is held in s's buffers.
func (o *Out) runJSON(rec statusRec, s *writeScratch) ([]byte, error) {
	b, err := o.spill.read(rec.off, rec.n, s.run)
	if cap(b) > cap(s.run) && o.spill.f != nil {
		s.run = b
	}
	if err != nil || rec.facts == 0 {
		return b, err
	}
	var j model.Run
	if j, s.facts, err = o.judge(rec, s.facts); err != nil {
		return nil, err
	}
	s.out, err = o.fill(s.out[:0], b, j)
	return s.out, err
}

// writeJSON writes the document as WriteSnapshotJSON does, the runs read back from the spill in order.
func (o *Out) writeJSON(w io.Writer, head model.Snapshot, scratch []writeScratch) error {
	head.Runs = []model.Run{}
	if len(o.recs) == 0 {
		return WriteSnapshotJSON(w, head)
	}
	doc, err := documentHead(head)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(termsafe.JSON(doc))
	bw.WriteString("[\n")
	err = o.encodeInOrder(scratch, func(s *writeScratch, rec statusRec) ([]byte, error) {
		run, err := o.runJSON(rec, s)
		if err != nil {
			return nil, err
		}
		// As WriteSnapshotJSON encodes a run: compact, then indented one level into the document.
		s.ind = jsonindent.Append(s.ind[:0], run, "    ", "  ")
		return termsafe.JSON(s.ind), nil
	}, func(i int, run []byte) {
		bw.WriteString("    ")
		bw.Write(run)
		if i < len(o.recs)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	})
	if err != nil {
		return err
	}
	bw.WriteString("  ]\n}\n")
	return bw.Flush()
}

// holeMarks are the values a run is encoded with where what the clock and the history decide goes, each
// unlike anything a run file can spell: strings carry a random nonce (a file cannot know it), and a
// stage's mark has a negative count of runs, which no judgement gives.
type holeMarks struct {
	status, attention, timing []byte // `"status":…`, `"attention":…`, `,"timing":…` as encoded
	nonce                     string
}

func newHoleMarks() holeMarks {
	var n [8]byte
	_, _ = rand.Read(n[:]) // crypto/rand.Read never fails (it panics on a broken system)
	h := holeMarks{nonce: "\x00runwatch-hole-" + hex.EncodeToString(n[:])}
	at := h.attentionMark()
	h.status = h.statusMark().AppendJSON([]byte(`"status":`))
	h.attention = at.AppendJSON([]byte(`"attention":`))
	h.timing, _ = h.timingMark().AppendJSON([]byte(`,"timing":`)) // no time in it: it always encodes
	return h
}

func (h holeMarks) statusMark() model.RunStatus { return model.RunStatus(h.nonce + "-status") }
func (h holeMarks) attentionMark() model.Attention {
	return model.Attention{Code: h.nonce + "-attention"}
}
func (h holeMarks) timingMark() *model.RunTiming {
	return &model.RunTiming{Task: h.nonce + "-timing", Runs: -1}
}

// stageMark is `,"timing":…` as the mark of stage i's timing encodes.
func (o *Out) stageMark(i int) []byte {
	o.marksMu.Lock()
	defer o.marksMu.Unlock()
	for len(o.stageMarks) <= i {
		mark := &model.StageTiming{Runs: -1 - len(o.stageMarks)}
		b, _ := mark.AppendJSON([]byte(`,"timing":`)) // no time in it: it always encodes
		o.stageMarks = append(o.stageMarks, b)
	}
	return o.stageMarks[i]
}

// cut sets the marks into r where its judgement by the clock and the history goes.
func (h holeMarks) cut(r *model.Run) {
	r.Status, r.Attention, r.Timing = h.statusMark(), h.attentionMark(), h.timingMark()
	for i := range r.Stages {
		r.Stages[i].Timing = &model.StageTiming{Runs: -1 - i}
	}
}

// fill appends to out the run's encoding b with its marks replaced by judgement j: in the order the
// encoding has them (status, each stage's timing, attention, the run's timing), a timing that holds nothing
// left out.
func (o *Out) fill(out, b []byte, j model.Run) ([]byte, error) {
	h := o.holes
	rest := b
	// put replaces mark with what enc appends, or with nothing when omit: with the encoding the run's own
	// bytes have (model's AppendJSON), so a mark is found exactly as it was written.
	put := func(mark []byte, what string, enc func([]byte) ([]byte, error), omit bool) error {
		i := bytes.Index(rest, mark)
		if i < 0 {
			return fmt.Errorf("status: %s of run %s not found in its encoding", what, j.ID)
		}
		out = append(out, rest[:i]...)
		rest = rest[i+len(mark):]
		if omit {
			return nil
		}
		var err error
		out, err = enc(out)
		return err
	}
	if err := put(h.status, "status", func(b []byte) ([]byte, error) {
		return j.Status.AppendJSON(append(b, `"status":`...)), nil
	}, false); err != nil {
		return nil, err
	}
	for i := range j.Stages {
		t := j.Stages[i].Timing
		if err := put(o.stageMark(i), "timing", func(b []byte) ([]byte, error) {
			return t.AppendJSON(append(b, `,"timing":`...))
		}, t.IsZero()); err != nil {
			return nil, err
		}
	}
	if err := put(h.attention, "attention", func(b []byte) ([]byte, error) {
		return j.Attention.AppendJSON(append(b, `"attention":`...)), nil
	}, false); err != nil {
		return nil, err
	}
	if err := put(h.timing, "timing", func(b []byte) ([]byte, error) {
		return j.Timing.AppendJSON(append(b, `,"timing":`...))
	}, j.Timing.IsZero()); err != nil {
		return nil, err
	}
	return append(out, rest...), nil
}

// runOrder is what --sort compares: model.Judge's rank (attention: the dashboard's order), the time of the
// last change, the id and the state file.
type runOrder struct {
	rank    int
	updated time.Time
	id, key string
}

// less orders a before b for --sort by: a run moves only when what it is sorted by does; ties go by id,
// then state file, so the order is total.
func (a runOrder) less(by string, b runOrder) bool {
	switch by {
	case "attention":
		if a.rank != b.rank {
			return a.rank < b.rank
		}
	case "updated":
		if !a.updated.Equal(b.updated) {
			return a.updated.After(b.updated)
		}
	case "path":
		return a.key < b.key
	}
	if a.id != b.id {
		return a.id < b.id
	}
	return a.key < b.key
}

// spill holds encoded runs until they are written in order: a temporary file, removed as soon as it is
// made so nothing is left behind even if status is killed; in memory where no file can be made.
type spill struct {
	// dir is the temporary folder ("" is os.TempDir).
	dir string
	// readOnly: no temp file is made (read-only writes nothing): an anonymous memory file where the system
	// has one (memfd, Linux), else memory.
	readOnly bool
	// warn is told once when the spill moves to memory (the temp folder is full, or failed).
	warn io.Writer

	f       *os.File
	tried   bool
	size    int64
	flushed int64  // of size, what the file holds; the rest waits in buf
	buf     []byte // written to the file at flushed when it is full
	mem     []byte // everything, when there is no file
	err     error  // the file failed and what it held could not be read back
}

const spillBuffer = 256 << 10

func (s *spill) open() {
	if s.readOnly {
		s.f = memoryFile("runwatch-status")
		return
	}
	if f, err := os.CreateTemp(s.dir, "runwatch-status-*"); err == nil {
		if os.Remove(f.Name()) == nil {
			s.f = f
		} else {
			f.Close()
		}
	}
}

func (s *spill) append(b []byte) (int64, error) {
	if !s.tried {
		s.tried = true
		s.open()
	}
	if s.err != nil {
		return 0, s.err
	}
	off := s.size
	s.size += int64(len(b))
	if s.f == nil {
		s.mem = append(s.mem, b...)
		return off, nil
	}
	s.buf = append(s.buf, b...)
	if len(s.buf) >= spillBuffer {
		s.flush()
	}
	return off, s.err
}

// flush writes buf to the file. A write that fails (the temp folder is full: ENOSPC, EDQUOT) moves
// everything to memory, once, and says so once: the status is still whole, it costs memory instead.
func (s *spill) flush() {
	if s.f == nil || len(s.buf) == 0 {
		return
	}
	_, err := s.f.WriteAt(s.buf, s.flushed)
	if err == nil {
		s.flushed += int64(len(s.buf))
		s.buf = s.buf[:0]
		return
	}
	mem := make([]byte, s.flushed, s.size+spillBuffer)
	if _, rerr := s.f.ReadAt(mem, 0); rerr != nil && !errors.Is(rerr, io.EOF) {
		s.err = fmt.Errorf("the temporary file that holds the runs while they are sorted failed (%v) and could not be read back (%v)", err, rerr)
		return
	}
	s.mem = append(mem, s.buf...)
	s.buf = nil
	s.f.Close()
	s.f = nil
	if s.warn != nil {
		dir := s.dir
		if dir == "" {
			dir = os.TempDir()
		}
		fmt.Fprintf(s.warn, "runwatch status: the temporary folder %s cannot take the runs while they are sorted (%v); "+
			"they are kept in memory instead (free some space there, or set TMPDIR to a folder with room)\n", dir, err)
	}
}

// read returns the n bytes at off, in buf's storage when it is big enough.
func (s *spill) read(off int64, n int, buf []byte) ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.f != nil && off+int64(n) > s.flushed {
		s.flush()
	}
	if s.err != nil {
		return nil, s.err
	}
	if s.f == nil {
		return s.mem[off : off+int64(n)], nil
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	_, err := s.f.ReadAt(buf, off)
	return buf, err
}

// close frees the file; it may be called again.
func (s *spill) close() {
	if s.f != nil {
		s.f.Close()
		s.f, s.buf = nil, nil
	}
}

// fillEmptyLists gives JSON consumers [] rather than null for empty lists.
func fillEmptyLists(r *model.Run) {
	if r.Stages == nil {
		r.Stages = []model.Stage{}
	}
	for j := range r.Stages {
		if r.Stages[j].Checklist == nil {
			r.Stages[j].Checklist = []model.ChecklistItem{}
		}
	}
	if r.Flags == nil {
		r.Flags = []model.Flag{}
	}
	if r.Locks == nil {
		r.Locks = []model.Lock{}
	}
	for j := range r.Locks {
		if r.Locks[j].Reasons == nil {
			r.Locks[j].Reasons = []string{}
		}
	}
	if r.Problems == nil {
		r.Problems = []model.Problem{}
	}
	if r.Gates == nil {
		r.Gates = []model.Gate{}
	}
}

// statusRow is r's line of the table, every field from a run file sanitised.
func statusRow(r model.Run, now time.Time, wide bool) []string {
	shown := r.ShownStage()
	stage := shown
	if s := r.Stage(shown); s != nil && s.Name != "" && s.Name != s.Key {
		stage += " " + s.Name
	}
	if stage == "" {
		stage = "-"
	}
	updated := "-"
	if !r.UpdatedAt.IsZero() {
		updated = model.HumanDuration(now.Sub(r.UpdatedAt))
	}
	progress := fmt.Sprintf("%d/%d", r.Progress.Done, r.Progress.Total)
	key := shown
	if s := r.Stage(shown); s != nil && s.Name != "" && s.Name != s.Key {
		key = s.Name // a number alone told no one which phase it was
	}
	if key == "" {
		key = "-"
	}
	row := []string{r.ID, "", stage, progress, updated, "", key, ""}
	if wide {
		row = []string{r.ID, string(r.Kind), "", stage, progress, lockSummary(r.Locks), updated, "", "",
			problemSummary(r.Problems), r.Dir}
	}
	for i := range row {
		row[i] = termsafe.Screen(row[i])
	}
	if r.Archived {
		// History: its status word no longer matters (-o json keeps it).
		row[1+boolInt(wide)] = "⌂ archived"
		if !wide {
			row[cellStatusShort] = "⌂ archived"
		}
	}
	setJudgedCells(row, r, wide)
	return row
}

// setJudgedCells sets the cells of a table row that the run's judgement decides (status, reason, and the
// command that settles it), from j: the run, or its judgement by the clock and the history.
func setJudgedCells(row []string, j model.Run, wide bool) {
	status, reason, next := 1, 5, -1
	if wide {
		status, reason, next = 2, 7, 8
	}
	if row[status] != "⌂ archived" {
		row[status] = termsafe.Screen(j.Status.Glyph() + " " + string(j.Status))
		if !wide {
			row[cellStatusShort] = termsafe.Screen(j.Status.Glyph() + " " + j.Status.Short())
		}
	}
	row[reason] = termsafe.Screen(j.Attention.Reason)
	if next >= 0 {
		cmd := j.Attention.Command
		if cmd == "" {
			cmd = "-"
		}
		row[next] = termsafe.Screen(cmd)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
