package envfile

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"runwatch/model"
)

// seedFuzz adds every env file of the fixtures plus a few hand-made edge cases.
func seedFuzz(f *testing.F) {
	for _, pattern := range []string{"../../testdata/opencode/*/*.env", "../../testdata/opencode/*/*/*.env",
		"../../testdata/opencode/*/*/*/*.env"} {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	for _, s := range []string{
		"", "A=1", "A=\"x\\\"y\"\r\n", "export A='b' # c\n", "\xEF\xBB\xBFA=1\rB=2", "A=\"unterminated\n",
		"A=x\x00\n", "A=\"\\n\\t\\r\\\\\"\n", "# only\n\n", "=1\n", "A B=1\n",
	} {
		f.Add([]byte(s))
	}
}

// FuzzParse: Parse never panics and always gives the input back byte for byte.
func FuzzParse(f *testing.F) {
	seedFuzz(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if file == nil {
			t.Fatal("Parse returned a nil File")
		}
		if len(data) > MaxSize {
			return
		}
		if got := file.Bytes(); !bytes.Equal(got, data) {
			t.Fatalf("Bytes() = %q, want %q", got, data)
		}
		if (err != nil) != (len(file.Errors()) > 0) {
			t.Fatalf("err = %v but Errors() = %v", err, file.Errors())
		}
		for _, e := range file.Entries() {
			if v, ok := file.Get(e.Key); !ok || v != e.Value {
				t.Fatalf("Entries has %s=%q but Get gives %q, %v", e.Key, e.Value, v, ok)
			}
		}
	})
}

// FuzzSetRoundTrip: after Set(k, v) the file reads back with k == v and every other entry unchanged, and
// the same lines are malformed as before.
func FuzzSetRoundTrip(f *testing.F) {
	seedFuzz(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, _ := Parse(data)
		before := file.Entries()
		errsBefore := len(file.Errors())
		// Derive key and value from the input so one corpus drives both.
		key, value := "NEW_KEY", string(data)
		if len(before) > 0 {
			key = before[len(data)%len(before)].Key
		}
		if err := file.TrySet(key, value); err != nil {
			if ValidKey(key) && bytes.IndexByte(data, 0) < 0 {
				t.Fatalf("TrySet(%q, %q) refused: %v", key, value, err)
			}
			return
		}
		if _, existed := indexOf(before, key); existed {
			assertOneLineChanged(t, data, file.Bytes())
		}
		again, _ := Parse(file.Bytes())
		if got, ok := again.Get(key); !ok || got != value {
			t.Fatalf("after Set(%q, %q) the file reads %q, %v:\n%q", key, value, got, ok, file.Bytes())
		}
		if n := len(again.Errors()); n != errsBefore {
			t.Fatalf("Set changed the malformed line count from %d to %d", errsBefore, n)
		}
		want := map[string]string{}
		for _, e := range before {
			want[e.Key] = e.Value
		}
		want[key] = value
		got := map[string]string{}
		for _, e := range again.Entries() {
			got[e.Key] = e.Value
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("entries after Set = %q, want %q", got, want)
		}
	})
}

func indexOf(kvs []model.KV, key string) (int, bool) {
	for i, kv := range kvs {
		if kv.Key == key {
			return i, true
		}
	}
	return 0, false
}

// assertOneLineChanged checks that an in-place edit touched exactly one line (a BOM and every other line's
// bytes, endings included, stay).
func assertOneLineChanged(t *testing.T, before, after []byte) {
	t.Helper()
	a, b := splitRaw(before), splitRaw(after)
	if len(a) != len(b) {
		t.Fatalf("edit changed the line count from %d to %d:\n%q\n%q", len(a), len(b), before, after)
	}
	changed := 0
	for i := range a {
		if a[i] != b[i] {
			changed++
		}
	}
	if changed > 1 {
		t.Fatalf("edit changed %d lines:\n%q\n%q", changed, before, after)
	}
}

func splitRaw(data []byte) []string {
	var out []string
	for s := string(data); s != ""; {
		text, ending, rest := cutLine(s)
		out = append(out, text+ending)
		s = rest
	}
	return out
}
