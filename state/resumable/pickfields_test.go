package resumable

import (
	"bytes"
	"encoding/json"
	"testing"
)

// pickFields reads a checkpoint's fields without encoding/json: for every document it accepts, it must give
// what Unmarshal into a map of raw values gives, and it must accept the checkpoints the writers write.
func FuzzPickFields(f *testing.F) {
	for _, s := range []string{
		`{"run_id": "20261101T080700Z", "stage": "S1", "status": "complete", "timestamp_utc": "2026-11-01T08:12:52Z"}`,
		`{"stage":"S1","stage":"S2","status":null,"timestamp_utc":12.5e3}`,
		` { "stage" : { "a" : [ 1 , "}" , { } ] } , "status" : [ ] , "x" : "\"stage\":1" } `,
		`{"st\u0061ge": "S9"}`, `{"stage": "a\"b\\"}`, `[]`, `null`, `{}`, `{"stage": true}`, `{"stage":"S1"`,
		"{\"stage\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		vals := make([]json.RawMessage, len(checkpointKeys))
		if !pickFields(data, checkpointKeys, vals) {
			return
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%q: picked, but Unmarshal fails: %v", data, err)
		}
		for i, k := range checkpointKeys {
			if !bytes.Equal(vals[i], doc[k]) || (vals[i] == nil) != (doc[k] == nil) {
				t.Fatalf("%q: %s is %q, Unmarshal has %q", data, k, vals[i], doc[k])
			}
		}
	})
}

func TestPickFieldsReadsWhatTheWritersWrite(t *testing.T) {
	vals := make([]json.RawMessage, len(checkpointKeys))
	doc := `{"run_id": "20261101T080700Z", "stage": "S1", "status": "complete", "timestamp_utc": "2026-11-01T08:12:52Z"}`
	if !pickFields([]byte(doc), checkpointKeys, vals) {
		t.Fatal("a writer's checkpoint went to encoding/json")
	}
	if string(vals[0]) != `"S1"` || string(vals[1]) != `"complete"` || string(vals[2]) != `"2026-11-01T08:12:52Z"` {
		t.Errorf("picked %q", vals)
	}
}
