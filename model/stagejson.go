package model

import (
	"encoding/json"
	"strconv"
	"time"
)

// A run of status --json holds five to forty stages. Encoded by reflection, each was a json.Marshal of a
// copy of the stage wrapped for its times, whose bytes the run's encoder then checked and compacted again:
// a tenth of status's CPU over 1,200 runs went to encoding runs (issue 35). Stage is written field by field
// here, in the order and with the omissions its tags give (TestStageJSONAsReflection holds it to them);
// what is rare (a stage's output files, a string that needs escaping) goes through encoding/json.

// MarshalJSON writes the stage as its json tags say, with started_at and completed_at as the file spells
// them (jsonTime), after the other fields, where the reflection-built encoding put them.
func (s Stage) MarshalJSON() ([]byte, error) {
	return s.appendJSON(make([]byte, 0, 512))
}

func (s *Stage) appendJSON(b []byte) ([]byte, error) {
	var err error
	b = append(b, `{"key":`...)
	b = appendJSONString(b, s.Key)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, s.Name)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, string(s.Status))
	b = append(b, `,"error":`...)
	b = appendJSONString(b, s.Error)
	b = appendJSONStringOmit(b, `,"skip_reason":`, s.SkipReason)
	b = append(b, `,"checklist":`...)
	if s.Checklist == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range s.Checklist {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"key":`...)
			b = appendJSONString(b, c.Key)
			b = append(b, `,"done":`...)
			b = strconv.AppendBool(b, c.Done)
			b = appendJSONStringOmit(b, `,"raw":`, c.Raw)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendJSONStringOmit(b, `,"raw_status":`, s.RawStatus)
	b = appendJSONStringOmit(b, `,"done_key":`, s.DoneKey)
	b = appendJSONStringOmit(b, `,"checklist_done_key":`, s.ChecklistDoneKey)
	if s.ChecklistDone != nil {
		b = append(b, `,"checklist_done":`...)
		b = strconv.AppendBool(b, *s.ChecklistDone)
	}
	if len(s.OutputFiles) > 0 {
		out, err := json.Marshal(s.OutputFiles)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"output_files":`...), out...)
	}
	if s.OrderUnknown {
		b = append(b, `,"order_unknown":true`...)
	}
	if c := s.Checkpoint; c != nil {
		b = append(b, `,"checkpoint":{"file":`...)
		b = appendJSONString(b, c.File)
		b = append(b, `,"stage":`...)
		b = appendJSONString(b, c.Stage)
		b = append(b, `,"status":`...)
		b = appendJSONString(b, c.Status)
		b = append(b, `,"timestamp":`...)
		if b, err = appendJSONTime(b, c.Timestamp, ""); err != nil {
			return nil, err
		}
		b = append(b, '}')
	}
	if len(s.Warnings) > 0 {
		b = append(b, `,"warnings":[`...)
		for i, w := range s.Warnings {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, w)
		}
		b = append(b, ']')
	}
	if t := s.Timing; !t.IsZero() {
		b = append(b, `,"timing":`...)
		if b, err = t.appendJSON(b); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"started_at":`...)
	if b, err = appendJSONTime(b, s.StartedAt, s.StartedText); err != nil {
		return nil, err
	}
	b = append(b, `,"completed_at":`...)
	if b, err = appendJSONTime(b, s.CompletedAt, s.CompletedText); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendJSON writes the timing as its json tags say: every field left out when it holds nothing.
func (t *StageTiming) appendJSON(b []byte) ([]byte, error) {
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
