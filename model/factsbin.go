package model

import (
	"encoding/binary"
	"errors"
	"time"
)

// TimeFacts travel from status's read of a run to its judgement through a spill file, written once and read
// twice a run (to sort, then to write). As JSON that was a reflection-driven encoding and two decodings a
// run: 7% of status's CPU over 1,200 runs (issue 35). This is the same information in a flat binary form:
// what the JSON held and nothing more (Attention's exported fields; a time's instant and its offset, so it
// prints as it did), so a judgement from either is the same.

// AppendBinary appends the facts' binary form to b.
func (f TimeFacts) AppendBinary(b []byte) ([]byte, error) {
	b = appendString(b, f.ID)
	b = appendString(b, f.Task)
	b = appendString(b, string(f.Status))
	b = appendAttention(b, f.Attention)
	b = appendString(b, f.CurrentStage)
	b = binary.AppendUvarint(b, uint64(len(f.Stages)))
	for _, s := range f.Stages {
		b = appendString(b, s.Key)
		b = appendTime(b, s.Started)
		b = appendTime(b, s.Ended)
		b = appendBool(b, s.Done)
		b = appendBool(b, s.Skipped)
	}
	b = binary.AppendVarint(b, int64(f.Current))
	b = appendTime(b, f.ActiveAt)
	b = appendString(b, f.Watch)
	b = appendString(b, f.Label)
	b = appendString(b, f.Who)
	return appendBool(b, f.Counted), nil
}

// UnmarshalBinary reads facts AppendBinary wrote.
func (f *TimeFacts) UnmarshalBinary(data []byte) error {
	d := factsDecoder{b: data}
	*f = TimeFacts{ID: d.string(), Task: d.string(), Status: RunStatus(d.string()), Attention: d.attention(),
		CurrentStage: d.string()}
	if n := d.uvarint(); n > 0 && n <= uint64(len(d.b)) {
		f.Stages = make([]StageFact, n)
		for i := range f.Stages {
			f.Stages[i] = StageFact{Key: d.string(), Started: d.time(), Ended: d.time(), Done: d.bool(), Skipped: d.bool()}
		}
	} else if n > 0 {
		d.err = errBadFacts
	}
	f.Current = int(d.varint())
	f.ActiveAt = d.time()
	f.Watch, f.Label, f.Who = d.string(), d.string(), d.string()
	f.Counted = d.bool()
	if d.err == nil && len(d.b) > 0 {
		d.err = errBadFacts
	}
	return d.err
}

var errBadFacts = errors.New("model: time facts cut short or malformed")

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendAttention(b []byte, a Attention) []byte {
	b = appendBool(b, a.NeedsYou)
	b = binary.AppendVarint(b, int64(a.Rank))
	b = appendString(b, a.Code)
	b = appendString(b, a.Reason)
	b = appendString(b, string(a.Action))
	return appendString(b, a.Command)
}

// appendTime writes whether t is set, then its instant and its zone's offset.
func appendTime(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, 0)
	}
	_, off := t.Zone()
	b = append(b, 1)
	b = binary.AppendVarint(b, t.Unix())
	b = binary.AppendUvarint(b, uint64(t.Nanosecond()))
	return binary.AppendVarint(b, int64(off))
}

type factsDecoder struct {
	b   []byte
	err error
}

func (d *factsDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *factsDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *factsDecoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *factsDecoder) bool() bool {
	if len(d.b) == 0 {
		d.fail()
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

func (d *factsDecoder) attention() Attention {
	return Attention{NeedsYou: d.bool(), Rank: int(d.varint()), Code: d.string(), Reason: d.string(),
		Action: Action(d.string()), Command: d.string()}
}

// time reads what appendTime wrote: in UTC when its offset was 0, as the JSON spelling "…Z" reads, else in
// a zone of that offset.
func (d *factsDecoder) time() *time.Time {
	if !d.bool() {
		return nil
	}
	sec, nsec, off := d.varint(), d.uvarint(), d.varint()
	if d.err != nil || nsec >= 1e9 {
		d.fail()
		return nil
	}
	t := time.Unix(sec, int64(nsec)).UTC()
	if off != 0 {
		t = t.In(time.FixedZone("", int(off)))
	}
	return &t
}

func (d *factsDecoder) fail() {
	if d.err == nil {
		d.err = errBadFacts
	}
	d.b = nil
}
