package model

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A run's stage links are written as the map they were (encoding/json's object, by key), read back to the
// same links, and looked up as NextStage looked up the map; packed they hold their text and a byte a key.
func TestStageLinksAsTheMap(t *testing.T) {
	hostile := "S1 \"q\" \\ <b>&</b> \n\x1b[31m \u2028 caf\u00e9 \xff"
	long := strings.Repeat("k", 300) // a length of two bytes
	for _, m := range []map[string]string{nil, {}, {"": ""}, {"S1": "S2", "S2": "", "M3": "S1"},
		{hostile: hostile, "s1": long, long: "x"}} {
		l := PackStageLinks(m)
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if len(m) > 0 && string(got) != string(want) {
			t.Errorf("%q: wrote %s, the map %s", m, got, want)
		}
		var back StageLinks
		var asMap map[string]string // what the map read back is: invalid UTF-8 comes back as U+FFFD
		if err := json.Unmarshal(want, &asMap); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &back); err != nil || back != PackStageLinks(asMap) {
			t.Errorf("%q: read back %q (%v)", m, back.Map(), err)
		}
		if (len(m) == 0) != (l == StageLinks{}) || !reflect.DeepEqual(l.Map(), map[string]string(nil)) && !reflect.DeepEqual(l.Map(), m) {
			t.Errorf("%q: packed to %q", m, l.Map())
		}
		d := &ResumableDetail{StageNext: l}
		for k, v := range m {
			if next, known := d.NextStage(k); !known || next != v {
				t.Errorf("%q: NextStage(%q) = %q, %v", m, k, next, known)
			}
		}
		if _, known := d.NextStage("nothing"); known {
			t.Errorf("%q: a stage not there has a successor", m)
		}
	}
	if l := PackStageLinks(map[string]string{"S1": "S2", "S2": "S3", "S3": ""}); len(l.packed) != 3*(1+2)+2*(1+2)+1 {
		t.Errorf("three links take %d bytes packed", len(l.packed))
	}
}
