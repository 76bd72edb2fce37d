package envfile

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"runwatch/model"
)

// A watcher keeps every run's entries as long as it shows the run: they must not hold the file's text (its
// comments and quotes) along, and a key every run has is held once (issue 35).
func TestEntriesHoldNoneOfTheText(t *testing.T) {
	t.Parallel()
	f, err := Parse([]byte("# " + strings.Repeat("comment ", 100) + "\nS1_DONE=\"1\"\nexport NAME='a b'\nS1_DONE=0\n"))
	if err != nil {
		t.Fatal(err)
	}
	inText := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		for _, ln := range f.lines {
			start := uintptr(unsafe.Pointer(unsafe.StringData(ln.text)))
			if len(ln.text) > 0 && p >= start && p < start+uintptr(len(ln.text)) {
				return true
			}
		}
		return false
	}
	got := f.Entries()
	runtime.GC() // a word interned stays so across collections
	if len(got) != 2 || got[0].Key != "NAME" || got[0].Value != "a b" || got[1].Key != "S1_DONE" || got[1].Value != "0" {
		t.Fatalf("entries %q", got)
	}
	for _, kv := range got {
		if inText(kv.Key) || inText(kv.Value) {
			t.Errorf("%s=%s shares the file's text", kv.Key, kv.Value)
		}
		if unsafe.StringData(kv.Key) != unsafe.StringData(model.Intern(kv.Key)) {
			t.Errorf("key %s is not interned", kv.Key)
		}
	}
}
