package model

import (
	"encoding/json"
	"time"
)

// Times keep the file's text in JSON (docs/FORMATS.md C.2): js-yaml writes toISOString values, always with three
// fractional digits ('…T04:50:15.120Z'), and Go's time encoding drops trailing zeros ('…15.12Z'), so output
// would no longer match the file a script compares it with. The model keeps time.Time for every rule and the
// text beside it; MarshalJSON writes the text where there is one.

// TimeText returns text when it is an RFC 3339 spelling of t, else "": only such text may stand for a time
// in JSON, and only when it says exactly the same instant.
func TimeText(t time.Time, text string) string {
	if text == "" || len(text) > 40 {
		return ""
	}
	p, err := time.Parse(time.RFC3339Nano, text)
	if err != nil || !p.Equal(t) {
		return ""
	}
	return text
}

// jsonTime is the JSON value of a time: the file's text when kept, the time otherwise, null when absent.
func jsonTime(t *time.Time, text string) any {
	if t == nil {
		return nil
	}
	if text != "" {
		return text
	}
	return *t
}

// MarshalJSON writes created_at as the file spells it.
func (d JonggrangDetail) MarshalJSON() ([]byte, error) {
	type plain JonggrangDetail
	return json.Marshal(struct {
		plain
		CreatedAt any `json:"created_at"`
	}{plain(d), jsonTime(d.CreatedAt, d.CreatedText)})
}

// MarshalJSON writes started_at and completed_at as the file spells them.
func (a Agent) MarshalJSON() ([]byte, error) {
	type plain Agent
	return json.Marshal(struct {
		plain
		StartedAt   any `json:"started_at"`
		CompletedAt any `json:"completed_at"`
	}{plain(a), jsonTime(a.StartedAt, a.StartedText), jsonTime(a.CompletedAt, a.CompletedText)})
}

// MarshalJSON writes created_at as the file spells it.
func (f OutputFile) MarshalJSON() ([]byte, error) {
	type plain OutputFile
	return json.Marshal(struct {
		plain
		CreatedAt any `json:"created_at"`
	}{plain(f), jsonTime(f.CreatedAt, f.CreatedText)})
}

// unlessJSONSpells is text, or "" when appendJSONTime would write t as text without it.
func unlessJSONSpells(t *time.Time, text string) string {
	if t == nil || text == "" {
		return text
	}
	var buf [48]byte
	if b, err := appendJSONTime(buf[:0], t, ""); err == nil && len(b) == len(text)+2 && string(b[1:len(b)-1]) == text {
		return ""
	}
	return text
}

// ParseJSONTime reads a time as the writers here write it (a quoted RFC 3339 string, as time.Time's
// UnmarshalJSON reads it), with the text to keep beside it: the string itself when it is not how JSON would
// spell the time anyway (a manifest's "…26.760Z", which Go writes "…26.76Z"), so a run read from a host's
// lines is written out again with the file's spelling, as the host's own status writes it.
func ParseJSONTime(quoted []byte) (time.Time, string, error) {
	var t time.Time
	if err := t.UnmarshalJSON(quoted); err != nil {
		return t, "", err
	}
	if len(quoted) < 2 || quoted[0] != '"' {
		return t, "", nil
	}
	var buf [48]byte
	if b, err := appendJSONTime(buf[:0], &t, ""); err == nil && string(b) == string(quoted) {
		return t, "", nil // most times: no text to keep, and none made
	}
	return t, TimeText(t, string(quoted[1:len(quoted)-1])), nil
}

// jsonTimeIn is a time field as decoding reads it back: the time, and its text (ParseJSONTime).
type jsonTimeIn struct {
	t    *time.Time
	text string
}

func (x *jsonTimeIn) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		x.t, x.text = nil, ""
		return nil
	}
	t, text, err := ParseJSONTime(b)
	if err != nil {
		return err
	}
	x.t, x.text = &t, text
	return nil
}

// UnmarshalJSON reads created_at with its text (ParseJSONTime).
func (d *JonggrangDetail) UnmarshalJSON(b []byte) error {
	type plain JonggrangDetail
	var in struct {
		plain
		CreatedAt jsonTimeIn `json:"created_at"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*d = JonggrangDetail(in.plain)
	d.CreatedAt, d.CreatedText = in.CreatedAt.t, in.CreatedAt.text
	return nil
}

// UnmarshalJSON reads started_at and completed_at with their texts (ParseJSONTime).
func (a *Agent) UnmarshalJSON(b []byte) error {
	type plain Agent
	var in struct {
		plain
		StartedAt   jsonTimeIn `json:"started_at"`
		CompletedAt jsonTimeIn `json:"completed_at"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*a = Agent(in.plain)
	a.StartedAt, a.StartedText = in.StartedAt.t, in.StartedAt.text
	a.CompletedAt, a.CompletedText = in.CompletedAt.t, in.CompletedAt.text
	return nil
}

// UnmarshalJSON reads created_at with its text (ParseJSONTime).
func (f *OutputFile) UnmarshalJSON(b []byte) error {
	type plain OutputFile
	var in struct {
		plain
		CreatedAt jsonTimeIn `json:"created_at"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*f = OutputFile(in.plain)
	f.CreatedAt, f.CreatedText = in.CreatedAt.t, in.CreatedAt.text
	return nil
}
