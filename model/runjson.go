package model

import (
	"encoding/json"
	"strconv"
	"time"
)

// status --json writes every run it reads, and a run holds five to forty stages. Encoded by reflection, a
// run was a json.Marshal of a copy of it wrapped for its time, each stage another of a wrapped copy, and the
// stages' bytes were checked and compacted again by the run's encoder: a tenth of status's CPU over 1,200
// runs (issue 35). Run and Stage are written field by field here, in the order and with the omissions their
// tags give (TestRunJSONAsReflection, TestStageJSONAsReflection hold them to it); the parts a run holds one
// of (its locks, attention, timing, details) and what is rare (output files, a string that needs escaping)
// go through encoding/json.

// MarshalJSON writes the run as its json tags say, with updated_at as the file spells it (jsonTime), last,
// where the reflection-built encoding put it.
func (r Run) MarshalJSON() ([]byte, error) {
	return r.appendJSON(make([]byte, 0, 8<<10), nil)
}

// AppendJSON appends the run's JSON (MarshalJSON's bytes) to b: for a writer that puts the run inside a
// line of its own, which encoding/json would check and compact again after MarshalJSON (a tenth of a
// host's CPU over the first 1,000 runs of `runwatch events`, issue 35).
func (r *Run) AppendJSON(b []byte) ([]byte, error) { return r.appendJSON(b, nil) }

// AppendWireJSON appends the run in the compact form a linked `runwatch events` writes for the runwatch that
// asked for it (remote.CompactEnv): each stage leaves out an empty error and checklist, its timing leaves
// out the start and end its started_at and completed_at already say (an empty checklist, not a missing one),
// and the four usual durations are one array "usual" of [median, p90, low, high]; a stage's checkpoint that
// is one of the resumable detail's is its index there ("checkpoint_of"); and a path in the run's folder is
// written without it, under its key and "@" ("state_path@": "state.env"). Stages were 46% of a host's bytes
// a run, their timing a third of that, the run's folder repeated 0.6 KB (issue 35); the dashboard's decoder
// restores the run as AppendJSON's bytes give it.
func (r *Run) AppendWireJSON(b []byte) ([]byte, error) {
	w := &wireForm{dir: r.Dir + "/"}
	if r.Resumable != nil {
		w.checkpoints = r.Resumable.Checkpoints
	}
	return r.appendJSON(b, w)
}

// wireForm is what AppendWireJSON's writers need of the run; nil writes the full form.
type wireForm struct {
	dir         string // the run's folder and a slash
	checkpoints []Checkpoint
}

// path writes "key":p, or "key@" and p without its folder when that is the run's.
func (w *wireForm) path(b []byte, key, p string) []byte {
	b = append(append(b, '"'), key...)
	if w != nil && len(w.dir) > 1 && len(p) > len(w.dir) && p[:len(w.dir)] == w.dir {
		return appendJSONString(append(b, `@":`...), p[len(w.dir):])
	}
	return appendJSONString(append(b, `":`...), p)
}

// checkpointOf is the index of c among the detail's checkpoints, -1 for none.
func (w *wireForm) checkpointOf(c *Checkpoint) int {
	if w == nil {
		return -1
	}
	for i := range w.checkpoints {
		if cp := &w.checkpoints[i]; cp == c || (cp.sameFile(c) && cp.Stage == c.Stage && cp.Status == c.Status &&
			sameTime(cp.Timestamp, c.Timestamp)) {
			return i
		}
	}
	return -1
}

func (r *Run) appendJSON(b []byte, w *wireForm) ([]byte, error) {
	var err error
	b = append(b, `{"id":`...)
	b = appendJSONString(b, r.ID)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, string(r.Kind))
	b = append(b, `,"dir":`...)
	b = appendJSONString(b, r.Dir)
	b = append(b, `,"title":`...)
	b = appendJSONString(b, r.Title)
	b = append(b, `,"status":`...)
	b = r.Status.AppendJSON(b)
	b = append(b, `,"raw_status":`...)
	b = appendJSONString(b, r.RawStatus)
	b = append(b, `,"current_stage":`...)
	b = appendJSONString(b, r.CurrentStage)
	b = append(b, `,"progress":{"done":`...)
	b = strconv.AppendInt(b, int64(r.Progress.Done), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(r.Progress.Total), 10)
	b = append(b, `},"stages":`...)
	if r.Stages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Stages {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = r.Stages[i].appendJSON(b, w); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	if b, err = r.appendJSONLists(b, w); err != nil {
		return nil, err
	}
	b = w.path(append(b, ','), "state_path", r.StatePath)
	b = appendJSONStringOmit(b, `,"project_root":`, r.ProjectRoot)
	if r.Archived {
		b = append(b, `,"archived":true`...)
	}
	b = append(b, `,"gates":`...)
	b = appendJSONList(b, r.Gates, func(b []byte, g Gate) []byte {
		b = append(b, `{"name":`...)
		b = appendJSONString(b, g.Name)
		b = append(b, `,"status":`...)
		b = appendJSONString(b, g.Status)
		b = append(b, `,"blocked":`...)
		b = strconv.AppendBool(b, g.Blocked)
		b = append(b, `,"detail":`...)
		return append(appendJSONString(b, g.Detail), '}')
	})
	if len(r.CrashSigns) > 0 {
		if b, err = appendJSONValue(b, `,"crash_signs":`, r.CrashSigns); err != nil {
			return nil, err
		}
	}
	if r.Remote != nil {
		if b, err = appendJSONValue(b, `,"remote":`, r.Remote); err != nil {
			return nil, err
		}
	}
	if r.AgentPane != nil {
		if b, err = appendJSONValue(b, `,"agent_pane":`, r.AgentPane); err != nil {
			return nil, err
		}
	}
	b = r.Attention.AppendJSON(append(b, `,"attention":`...))
	if r.ActiveAt != nil {
		b = append(b, `,"active_at":`...)
		if b, err = appendJSONTime(b, r.ActiveAt, ""); err != nil {
			return nil, err
		}
	}
	if !r.Timing.IsZero() {
		if b, err = r.Timing.AppendJSON(append(b, `,"timing":`...)); err != nil {
			return nil, err
		}
	}
	if r.Jonggrang != nil {
		if b, err = appendJSONValue(b, `,"jonggrang":`, r.Jonggrang); err != nil {
			return nil, err
		}
	}
	if r.Resumable != nil {
		b = append(b, `,"resumable":`...)
		if b, err = r.Resumable.appendJSON(b, w); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"updated_at":`...)
	if b, err = appendJSONTime(b, &r.UpdatedAt, r.UpdatedText); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendJSONLists writes the run's flags, locks, problems and log, as its tags say.
func (r *Run) appendJSONLists(b []byte, w *wireForm) ([]byte, error) {
	var err error
	b = append(b, `,"flags":`...)
	b = appendJSONList(b, r.Flags, func(b []byte, f Flag) []byte {
		b = append(b, `{"group":`...)
		b = appendJSONString(b, f.Group)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, f.Name)
		b = append(b, `,"value":`...)
		b = strconv.AppendBool(b, f.Value)
		return append(appendJSONStringOmit(b, `,"raw":`, f.Raw), '}')
	})
	if b, err = appendJSONValue(b, `,"locks":`, r.Locks); err != nil {
		return nil, err
	}
	b = append(b, `,"problems":`...)
	b = appendJSONList(b, r.Problems, func(b []byte, p Problem) []byte {
		b = append(b, `{"severity":`...)
		b = appendJSONString(b, string(p.Severity))
		b = append(b, `,"code":`...)
		b = appendJSONString(b, p.Code)
		b = append(b, `,"message":`...)
		b = appendJSONString(b, p.Message)
		return append(appendJSONStringOmit(b, `,"path":`, p.Path), '}')
	})
	if l := r.Log; l == nil {
		b = append(b, `,"log":null`...)
	} else {
		b = w.path(append(b, `,"log":{`...), "path", l.Path)
		b = append(b, `,"size_bytes":`...)
		b = strconv.AppendInt(b, l.SizeBytes, 10)
		if len(l.Undone) > 0 {
			b = append(b, `,"undone":`...)
			b = appendJSONList(b, l.Undone, appendJSONString)
		}
		b = append(b, '}')
	}
	return b, nil
}

func (d *ResumableDetail) appendJSON(b []byte, w *wireForm) ([]byte, error) {
	var err error
	kvs := func(b []byte, kv KV) []byte {
		b = append(b, `{"key":`...)
		b = appendJSONString(b, kv.Key)
		b = append(b, `,"value":`...)
		return append(appendJSONString(b, kv.Value), '}')
	}
	b = append(b, `{"run_id":`...)
	b = appendJSONString(b, d.RunID)
	b = append(b, `,"task_name":`...)
	b = appendJSONString(b, d.TaskName)
	b = w.path(append(b, ','), "checklist_path", d.ChecklistPath)
	b = w.path(append(b, ','), "lock_file", d.LockFile)
	b = append(b, `,"keys":`...)
	b = appendJSONList(b, d.Keys.List(), kvs)
	b = append(b, `,"checklist_keys":`...)
	b = appendJSONList(b, d.ChecklistKeys.List(), kvs)
	b = appendJSONStringOmit(b, `,"resume_hint":`, d.ResumeHint)
	b = appendJSONStringOmit(b, `,"resume_target":`, d.ResumeTarget)
	b = appendJSONStringOmit(b, `,"last_completed":`, d.LastCompleted)
	if len(d.Checkpoints) > 0 {
		b = append(b, `,"checkpoints":[`...)
		for i := range d.Checkpoints {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = d.Checkpoints[i].appendJSON(b, w); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	if len(d.Ledger) > 0 {
		if b, err = appendJSONValue(b, `,"ledger":`, d.Ledger); err != nil {
			return nil, err
		}
	}
	if len(d.Artifacts) > 0 {
		b = append(b, `,"artifacts":`...)
		b = appendJSONList(b, d.Artifacts, appendJSONString)
	}
	b = append(b, `,"stage_order_source":`...)
	b = appendJSONString(b, d.StageOrderSource)
	b = appendJSONStringOmit(b, `,"plan_path":`, d.PlanPath)
	b = appendJSONStringOmit(b, `,"plan_note":`, d.PlanNote)
	if d.StageOrderUncertain {
		b = append(b, `,"stage_order_uncertain":true`...)
	}
	if len(d.StageOrderEvidence) > 0 {
		b = append(b, `,"stage_order_evidence":`...)
		b = appendJSONList(b, d.StageOrderEvidence, appendJSONString)
	}
	if d.StageNext.packed != "" {
		b = d.StageNext.appendJSON(append(b, `,"stage_next":`...))
	}
	if d.ReopensWithoutCheckpoint {
		b = append(b, `,"reopens_without_checkpoint":true`...)
	}
	if d.CheckpointDir != "" {
		b = w.path(append(b, ','), "checkpoint_dir", d.CheckpointDir)
	}
	b = appendJSONStringOmit(b, `,"last_error":`, d.LastError)
	if d.Blocked != nil {
		if b, err = appendJSONValue(b, `,"blocked":`, d.Blocked); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// MarshalJSON writes the checkpoint as the document does.
func (c Checkpoint) MarshalJSON() ([]byte, error) { return c.appendJSON(nil, nil) }

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Checkpoint) UnmarshalJSON(b []byte) error {
	var in struct {
		File      string     `json:"file"`
		Stage     string     `json:"stage"`
		Status    string     `json:"status"`
		Timestamp *time.Time `json:"timestamp"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*c = Checkpoint{dir: in.File, Stage: in.Stage, Status: in.Status, Timestamp: in.Timestamp}
	return nil
}

func (c *Checkpoint) appendJSON(b []byte, w *wireForm) ([]byte, error) {
	b = w.path(append(b, '{'), "file", c.File())
	b = append(b, `,"stage":`...)
	b = appendJSONString(b, c.Stage)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, c.Status)
	b = append(b, `,"timestamp":`...)
	b, err := appendJSONTime(b, c.Timestamp, "")
	return append(b, '}'), err
}

// appendJSONList writes list as encoding/json writes a slice: null when nil, each element by one.
func appendJSONList[T any](b []byte, list []T, one func([]byte, T) []byte) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = one(b, v)
	}
	return append(b, ']')
}

// appendJSONValue writes key and v as encoding/json encodes v.
func appendJSONValue(b []byte, key string, v any) ([]byte, error) {
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(append(b, key...), out...), nil
}

// MarshalJSON writes the stage as its json tags say, with started_at and completed_at as the file spells
// them (jsonTime), after the other fields, where the reflection-built encoding put them.
func (s Stage) MarshalJSON() ([]byte, error) {
	return s.appendJSON(make([]byte, 0, 512), nil)
}

func (s *Stage) appendJSON(b []byte, w *wireForm) ([]byte, error) {
	compact := w != nil
	var err error
	rare := &noRare
	if s.rare != nil {
		rare = s.rare
	}
	b = append(b, `{"key":`...)
	b = appendJSONString(b, s.Key)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, s.Name)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, string(s.Status))
	if !compact || rare.Error != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, rare.Error)
	}
	b = appendJSONStringOmit(b, `,"skip_reason":`, rare.SkipReason)
	if !compact || s.Checklist == nil || len(s.Checklist) > 0 {
		b = append(b, `,"checklist":`...)
		b = appendJSONList(b, s.Checklist, appendChecklistItem)
	}
	b = appendJSONStringOmit(b, `,"raw_status":`, rare.RawStatus)
	b = appendJSONStringOmit(b, `,"done_key":`, s.DoneKey)
	b = appendJSONStringOmit(b, `,"checklist_done_key":`, s.ChecklistDoneKey)
	if s.ChecklistDone != nil {
		b = append(b, `,"checklist_done":`...)
		b = strconv.AppendBool(b, *s.ChecklistDone)
	}
	if len(rare.OutputFiles) > 0 {
		out, err := json.Marshal(rare.OutputFiles)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"output_files":`...), out...)
	}
	if rare.OrderUnknown {
		b = append(b, `,"order_unknown":true`...)
	}
	if c := s.Checkpoint; c != nil {
		if i := w.checkpointOf(c); i >= 0 {
			b = strconv.AppendInt(append(b, `,"checkpoint_of":`...), int64(i), 10)
		} else if b, err = c.appendJSON(append(b, `,"checkpoint":`...), w); err != nil {
			return nil, err
		}
	}
	if len(rare.Warnings) > 0 {
		b = append(b, `,"warnings":`...)
		b = appendJSONList(b, rare.Warnings, appendJSONString)
	}
	if t := s.Timing; !t.IsZero() {
		b = append(b, `,"timing":`...)
		if compact {
			b, err = t.appendWireJSON(b, s)
		} else {
			b, err = t.AppendJSON(b)
		}
		if err != nil {
			return nil, err
		}
	}
	b = append(b, `,"started_at":`...)
	if b, err = appendJSONTime(b, s.StartedAt, rare.StartedText); err != nil {
		return nil, err
	}
	b = append(b, `,"completed_at":`...)
	if b, err = appendJSONTime(b, s.CompletedAt, rare.CompletedText); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// noRare is what a stage without rarely set fields reads as.
var noRare StageRare

// UnmarshalJSON reads what MarshalJSON writes (as encoding/json would read the stage's tags), its rarely set
// fields into a StageRare only when one is set, and its times with their texts (ParseJSONTime).
func (s *Stage) UnmarshalJSON(b []byte) error {
	type plain Stage // without this method
	var in struct {
		plain
		StageRare
		StartedAt   jsonTimeIn `json:"started_at"`
		CompletedAt jsonTimeIn `json:"completed_at"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*s = Stage(in.plain)
	s.StartedAt, s.CompletedAt = in.StartedAt.t, in.CompletedAt.t
	in.StageRare.StartedText, in.StageRare.CompletedText = in.StartedAt.text, in.CompletedAt.text
	s.SetRare(in.StageRare)
	return nil
}

// UnmarshalJSON reads what MarshalJSON writes, updated_at with its text (ParseJSONTime).
func (r *Run) UnmarshalJSON(b []byte) error {
	type plain Run // without this method
	var in struct {
		*plain
		UpdatedAt jsonTimeIn `json:"updated_at"`
	}
	in.plain = (*plain)(r)
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	if in.UpdatedAt.t != nil {
		r.UpdatedAt, r.UpdatedText = *in.UpdatedAt.t, in.UpdatedAt.text
	}
	return nil
}

func appendChecklistItem(b []byte, c ChecklistItem) []byte {
	b = append(b, `{"key":`...)
	b = appendJSONString(b, c.Key)
	b = append(b, `,"done":`...)
	b = strconv.AppendBool(b, c.Done)
	return append(appendJSONStringOmit(b, `,"raw":`, c.Raw), '}')
}

// appendWireJSON writes the timing of stage s in AppendWireJSON's form: its start and end left out where
// they are the stage's started_at and completed_at (as JudgeTime makes them; null where the stage has one and
// the timing none), the usual durations as one array when all four are known.
func (t *StageTiming) appendWireJSON(b []byte, s *Stage) ([]byte, error) {
	c := *t
	var nulls []string
	for _, f := range [...]struct {
		key        string
		mine       **time.Time
		stageTimes *time.Time
	}{{`"started":null`, &c.Started, s.StartedAt}, {`"ended":null`, &c.Ended, s.CompletedAt}} {
		switch {
		case sameTime(*f.mine, f.stageTimes):
			*f.mine = nil
		case *f.mine == nil:
			nulls = append(nulls, f.key)
		}
	}
	usual := [...]*int64{c.UsualMedianSeconds, c.UsualP90Seconds, c.UsualLowSeconds, c.UsualHighSeconds}
	all := usual[0] != nil && usual[1] != nil && usual[2] != nil && usual[3] != nil
	if all {
		c.UsualMedianSeconds, c.UsualP90Seconds, c.UsualLowSeconds, c.UsualHighSeconds = nil, nil, nil, nil
	}
	start := len(b)
	b, err := c.AppendJSON(b)
	if err != nil {
		return nil, err
	}
	b = b[:len(b)-1]
	sep := func() {
		if len(b) > start+1 {
			b = append(b, ',')
		}
	}
	for _, n := range nulls {
		sep()
		b = append(b, n...)
	}
	if all {
		sep()
		b = append(b, `"usual":[`...)
		for i, v := range usual {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, *v, 10)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// sameTime says whether a and b are both nil or the same instant.
func sameTime(a, b *time.Time) bool {
	return a == b || (a != nil && b != nil && a.Equal(*b))
}

// AppendJSON appends the status as a JSON string: the one encoding of it, which status also looks for
// in a run's bytes to fill (status.Out).
func (s RunStatus) AppendJSON(b []byte) []byte { return appendJSONString(b, string(s)) }

// AppendJSON appends the attention as its json tags say: the one encoding of it, which status also
// looks for in a run's bytes to fill (status.Out).
func (a *Attention) AppendJSON(b []byte) []byte {
	b = append(b, `{"needs_you":`...)
	b = strconv.AppendBool(b, a.NeedsYou)
	b = append(b, `,"rank":`...)
	b = strconv.AppendInt(b, int64(a.Rank), 10)
	b = append(b, `,"code":`...)
	b = appendJSONString(b, a.Code)
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, a.Reason)
	b = appendJSONStringOmit(b, `,"action":`, string(a.Action))
	return append(appendJSONStringOmit(b, `,"command":`, a.Command), '}')
}

// AppendJSON appends the run's timing as its json tags say: a field that holds nothing left out.
func (t *RunTiming) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"task":`...)
	b = appendJSONString(b, t.Task)
	if t.Started != nil {
		var err error
		if b, err = appendJSONTime(append(b, `,"started":`...), t.Started, ""); err != nil {
			return nil, err
		}
	}
	if t.RemainingSeconds != nil {
		b = strconv.AppendInt(append(b, `,"remaining_after_current_seconds":`...), *t.RemainingSeconds, 10)
	}
	if t.Runs != 0 {
		b = strconv.AppendInt(append(b, `,"runs":`...), int64(t.Runs), 10)
	}
	if t.ElapsedSeconds != nil {
		b = strconv.AppendInt(append(b, `,"elapsed_seconds":`...), *t.ElapsedSeconds, 10)
	}
	if t.ETASeconds != nil {
		b = strconv.AppendInt(append(b, `,"eta_seconds":`...), *t.ETASeconds, 10)
	}
	return append(b, '}'), nil
}

// AppendJSON appends the stage's timing as its json tags say: every field left out when it holds nothing.
func (t *StageTiming) AppendJSON(b []byte) ([]byte, error) {
	start := len(b)
	b = append(b, '{')
	sep := func() {
		if len(b) > start+1 {
			b = append(b, ',')
		}
	}
	var err error
	for _, f := range [...]struct {
		key string
		t   *time.Time
	}{{`"started":`, t.Started}, {`"ended":`, t.Ended}} {
		if f.t != nil {
			sep()
			b = append(b, f.key...)
			if b, err = appendJSONTime(b, f.t, ""); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range [...]struct {
		key string
		v   *int64
	}{{`"usual_median_seconds":`, t.UsualMedianSeconds}, {`"usual_p90_seconds":`, t.UsualP90Seconds},
		{`"usual_low_seconds":`, t.UsualLowSeconds}, {`"usual_high_seconds":`, t.UsualHighSeconds}} {
		if f.v != nil {
			sep()
			b = strconv.AppendInt(append(b, f.key...), *f.v, 10)
		}
	}
	if t.Runs != 0 {
		sep()
		b = strconv.AppendInt(append(b, `"runs":`...), int64(t.Runs), 10)
	}
	if t.ElapsedSeconds != nil {
		sep()
		b = strconv.AppendInt(append(b, `"elapsed_seconds":`...), *t.ElapsedSeconds, 10)
	}
	return append(b, '}'), nil
}

// appendJSONTime writes jsonTime(t, text): null, the file's text, or the time as encoding/json writes it.
func appendJSONTime(b []byte, t *time.Time, text string) ([]byte, error) {
	switch {
	case t == nil:
		return append(b, "null"...), nil
	case text != "":
		return appendJSONString(b, text), nil
	}
	if y := t.Year(); y < 0 || y > 9999 {
		v, err := t.MarshalJSON() // its error: such a year has no RFC 3339 spelling
		return append(b, v...), err
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano) // what MarshalJSON writes, without allocating
	return append(b, '"'), nil
}

func appendJSONStringOmit(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, key...), s)
}

// appendJSONString writes s as encoding/json does: quoted as it is when every byte is printable ASCII that
// needs no escape (json.Marshal also escapes <, > and &), else by encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
