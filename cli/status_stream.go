package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"runwatch/model"
	"runwatch/ui"
)

// statusOut takes the runs of one status command as they are read, in any order and from several
// goroutines, and writes them afterwards in the order asked for, holding one run at a time: each run is
// encoded as it arrives and its bytes go to a spill file; only what the order and the exit code need stays
// in memory (about a hundred bytes a run). A status over 100,000 runs held every one of them until it
// printed (476 MiB; -o json 773 MiB).
type statusOut struct {
	format string // json, jsonl, table or wide
	now    time.Time

	mu    sync.Mutex
	spill spill
	recs  []statusRec
	rows  [][]string // table and wide: each run's row, by statusRec.row (rows are what the widths need)
	err   error
}

// statusRec is what stays of a run once it is encoded.
type statusRec struct {
	order  runOrder
	off    int64
	n      int
	row    int
	failed bool // an error status counts: HasErrors of a run that is not archived
}

func newStatusOut(format string, now time.Time) *statusOut {
	return &statusOut{format: format, now: now}
}

// add encodes r and keeps its place. Safe for concurrent use.
func (o *statusOut) add(r model.Run) {
	fillEmptyLists(&r)
	rec := statusRec{order: orderOf(&r), failed: r.HasErrors() && !r.Archived}
	var b []byte
	var row []string
	var err error
	switch o.format {
	case "json":
		// As writeSnapshotJSON encodes a run: compact, then indented one level into the document.
		if b, err = r.MarshalJSON(); err == nil {
			b = terminalSafeJSON(appendIndentedJSON(make([]byte, 0, 2*len(b)), b, "    ", "  "))
		}
	case "jsonl":
		// What json.Encoder writes for the run, through terminalSafeJSONWriter.
		var buf bytes.Buffer
		err = json.NewEncoder(terminalSafeJSONWriter{&buf}).Encode(r)
		b = buf.Bytes()
	default:
		row = statusRow(r, o.now, o.format == "wide")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		o.err = errors.Join(o.err, err)
		return
	}
	if row != nil {
		rec.row = len(o.rows)
		o.rows = append(o.rows, row)
	} else {
		rec.n = len(b)
		if rec.off, err = o.spill.append(b); err != nil {
			o.err = errors.Join(o.err, err)
			return
		}
	}
	o.recs = append(o.recs, rec)
}

// write sorts the runs by `by` and writes the document; failed reports whether any run has an error.
func (o *statusOut) write(w io.Writer, by string, head model.Snapshot, width int) (failed bool, err error) {
	defer o.spill.close()
	if o.err != nil {
		return false, o.err
	}
	sort.Slice(o.recs, func(i, j int) bool { return o.recs[i].order.less(by, o.recs[j].order) })
	for _, r := range o.recs {
		failed = failed || r.failed
	}
	switch o.format {
	case "json":
		return failed, o.writeJSON(w, head)
	case "jsonl":
		bw := bufio.NewWriterSize(w, 256<<10)
		var buf []byte
		for _, r := range o.recs {
			if buf, err = o.spill.read(r.off, r.n, buf); err != nil {
				return failed, err
			}
			bw.Write(buf)
		}
		return failed, bw.Flush()
	}
	rows := make([][]string, len(o.recs))
	for i, r := range o.recs {
		rows[i] = o.rows[r.row]
	}
	renderStatusTable(w, rows, o.format == "wide", width)
	return failed, nil
}

// writeJSON writes the document as writeSnapshotJSON does, the runs read back from the spill in order.
func (o *statusOut) writeJSON(w io.Writer, head model.Snapshot) error {
	head.Runs = []model.Run{}
	if len(o.recs) == 0 {
		return writeSnapshotJSON(w, head)
	}
	doc, err := documentHead(head)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(terminalSafeJSON(doc))
	bw.WriteString("[\n")
	var buf []byte
	for i, r := range o.recs {
		if buf, err = o.spill.read(r.off, r.n, buf); err != nil {
			return err
		}
		bw.WriteString("    ")
		bw.Write(buf)
		if i < len(o.recs)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("  ]\n}\n")
	return bw.Flush()
}

// runOrder is what --sort compares: model.Judge's rank (attention: the dashboard's order), the time of the
// last change, the id and the state file.
type runOrder struct {
	rank    int
	updated time.Time
	id, key string
}

func orderOf(r *model.Run) runOrder {
	return runOrder{rank: r.Attention.Rank, updated: r.UpdatedAt, id: r.ID, key: r.Key()}
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
	f      *os.File
	tried  bool
	size   int64
	mem    []byte
	w      *bufio.Writer
	reader bool
}

func (s *spill) append(b []byte) (int64, error) {
	if !s.tried {
		s.tried = true
		if f, err := os.CreateTemp("", "runwatch-status-*"); err == nil {
			if os.Remove(f.Name()) == nil {
				s.f, s.w = f, bufio.NewWriterSize(f, 256<<10)
			} else {
				f.Close()
			}
		}
	}
	off := s.size
	s.size += int64(len(b))
	if s.f == nil {
		s.mem = append(s.mem, b...)
		return off, nil
	}
	_, err := s.w.Write(b)
	return off, err
}

// read returns the n bytes at off, in buf's storage when it is big enough.
func (s *spill) read(off int64, n int, buf []byte) ([]byte, error) {
	if s.f == nil {
		return s.mem[off : off+int64(n)], nil
	}
	if !s.reader {
		s.reader = true
		if err := s.w.Flush(); err != nil {
			return nil, err
		}
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	_, err := s.f.ReadAt(buf, off)
	return buf, err
}

func (s *spill) close() {
	if s.f != nil {
		s.f.Close()
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
	status := r.Status.Glyph() + " " + string(r.Status)
	if r.Archived {
		// History: its status word no longer matters (-o json keeps it).
		status = "⌂ archived"
	}
	stage := r.CurrentStage
	if s := r.Stage(r.CurrentStage); s != nil && s.Name != "" && s.Name != s.Key {
		stage += " " + s.Name
	}
	if stage == "" {
		stage = "-"
	}
	updated := "-"
	if !r.UpdatedAt.IsZero() {
		updated = model.HumanDuration(now.Sub(r.UpdatedAt))
	}
	reason := r.Attention.Reason
	progress := fmt.Sprintf("%d/%d", r.Progress.Done, r.Progress.Total)
	row := []string{r.ID, status, stage, progress, updated, reason}
	if wide {
		next := r.Attention.Command
		if next == "" {
			next = "-"
		}
		row = []string{r.ID, string(r.Kind), status, stage, progress, lockSummary(r.Locks), updated, reason, next,
			problemSummary(r.Problems), r.Dir}
	}
	for i := range row {
		row[i] = ui.Sanitize(row[i])
	}
	return row
}
