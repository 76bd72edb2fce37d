package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaultPath(t *testing.T) {
	t.Parallel()
	home := func() (string, error) { return "/home/u", nil }
	for _, tc := range []struct{ xdg, want string }{
		{"/x/state", "/x/state/runwatch/journal.jsonl"},
		{"", "/home/u/.local/state/runwatch/journal.jsonl"},
		{"relative/state", "/home/u/.local/state/runwatch/journal.jsonl"}, // the spec wants it absolute
	} {
		getenv := func(k string) string { return map[string]string{"XDG_STATE_HOME": tc.xdg}[k] }
		if p, err := defaultPath(getenv, home); p != tc.want || err != nil {
			t.Errorf("XDG_STATE_HOME=%q: got %s, %v; want %s", tc.xdg, p, err, tc.want)
		}
	}
	noHome := func() (string, error) { return "", errors.New("$HOME is not defined") }
	if p, err := defaultPath(func(string) string { return "" }, noHome); err == nil || !strings.Contains(err.Error(), "no home directory") {
		t.Errorf("no XDG_STATE_HOME and no home: got %s, %v", p, err)
	}
}

func TestAppendReadAndUndoOrder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runwatch", "journal.jsonl")
	when := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	old := []byte("S2_DONE=\"0\"\n\x00binary")
	for _, e := range []Entry{
		{ID: "a", When: when, Run: "/r/state.env", Action: "check", Files: []File{{Path: "/r/checklist.state.env", OldExists: true, NewExists: true, Old: old}}},
		{ID: "b", When: when, Run: "/r/state.env", Action: "step"},
		{ID: "x", When: when, Run: "/other/state.env", Action: "step"},
		{ID: "c", When: when, Run: "/r/state.env", Action: "undo", Undoes: "b"},
	} {
		if _, err := appendLocked(path, e); err != nil {
			t.Fatal(err)
		}
	}
	// A torn last line (a crash mid-append) is reported, not fatal.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"id":"torn","wh`)
	f.Close()

	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("journal mode %v, want 0600", fi.Mode().Perm())
	}
	entries, bad, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 || len(bad) != 1 || bad[0].Line != 5 {
		t.Fatalf("entries %d bad %+v", len(entries), bad)
	}
	if string(entries[0].Files[0].Old) != string(old) || !entries[0].When.Equal(when) {
		t.Fatalf("round trip lost data: %+v", entries[0])
	}
	e, _, err := FindUndoable(path, "/r/state.env")
	if err != nil || e == nil || e.ID != "a" {
		t.Fatalf("FindUndoable = %+v, %v; want a (b was undone)", e, err)
	}
	if e, _, _ := FindUndoable(path, "/none"); e != nil {
		t.Fatal("found an entry for an unknown run")
	}
	if entries, _, err := Read(filepath.Join(t.TempDir(), "missing")); err != nil || entries != nil {
		t.Fatal("missing journal should be empty")
	}
}

// lastUndoable is the plain reading of undo's rule over every entry in order: FindUndoable must agree with it.
func lastUndoable(entries []Entry, run string) (*Entry, bool) {
	undone := map[string]bool{}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Run != run {
			continue
		}
		if e.Undoes != "" {
			undone[e.Undoes] = true
			continue
		}
		if !undone[e.ID] {
			return &entries[i], true
		}
	}
	return nil, false
}

// TestFindUndoableAgreesWithAFullRead: journals with lines far longer than the backward read chunk, lines
// falling across chunk boundaries, several runs, undos of undos and a torn last line.
func TestFindUndoableAgreesWithAFullRead(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	runs := []string{"/r/a/state.env", "/r/b/state.env", "/r/\"quoted\"/state.env"}
	for round := 0; round < 40; round++ {
		path := filepath.Join(t.TempDir(), "journal.jsonl")
		var ids []string
		for i := 0; i < 1+rng.IntN(60); i++ {
			e := Entry{ID: fmt.Sprintf("e%d", i), Run: runs[rng.IntN(len(runs))], Action: "check"}
			if len(ids) > 0 && rng.IntN(3) == 0 {
				e.Action, e.Undoes = "undo", ids[rng.IntN(len(ids))]
			}
			// Old bytes from nothing to 3x the backward chunk, so lines straddle chunk boundaries.
			e.Files = []File{{Path: e.Run, Old: bytes.Repeat([]byte{byte('a' + i%26)}, rng.IntN(3*backwardChunk))}}
			if _, err := appendLocked(path, e); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, e.ID)
		}
		if round%5 == 0 {
			f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString(`{"id":"torn","run":"/r/a/state.env","wh`)
			f.Close()
		}
		entries, _, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range runs {
			want, ok := lastUndoable(entries, run)
			got, _, err := FindUndoable(path, run)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (got != nil) || (ok && got.ID != want.ID) {
				t.Fatalf("round %d run %s: FindUndoable %+v, full read %+v", round, run, got, want)
			}
		}
	}
}

// A crash mid-append leaves the start of an entry without its end. The next entry starts on a fresh line
// (and says so), the torn line is reported and skipped by every reader, and the id inside it is not taken
// for a recorded entry; an older journal's torn line with a whole entry glued after it still yields that
// entry.
func TestTornAppendNeverHidesOrFakesAnEntry(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	when := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	a := Entry{ID: "a", When: when, Run: "/r/state.env", Action: "check", Files: []File{{Path: "/r/c", OldExists: true, NewExists: true}}}
	if repaired, err := appendLocked(path, a); err != nil || repaired != "" {
		t.Fatalf("first append: %q, %v", repaired, err)
	}
	torn := []byte(`{"id":"b","when":"2026-11-30T01:00:00Z","who":"","host":"","action":"step","run":"/r/state.env","run_id":"","sum`)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(torn)
	f.Close()
	if has, _ := Has(path, "b"); has {
		t.Fatal("Has took the id inside a torn line for a recorded entry")
	}
	c := Entry{ID: "c", When: when, Run: "/r/state.env", Action: "step", Files: []File{{Path: "/r/s", OldExists: true, NewExists: true}}}
	repaired, err := appendLocked(path, c)
	if err != nil || !strings.Contains(repaired, "cut short by a crash") {
		t.Fatalf("append after a torn line: %q, %v", repaired, err)
	}
	data, _ := os.ReadFile(path)
	if lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"); len(lines) != 3 || lines[1] != string(torn) {
		t.Fatalf("want the torn line alone on its line between a and c:\n%s", data)
	}
	entries, bad, err := Read(path)
	if err != nil || len(entries) != 2 || entries[1].ID != "c" || len(bad) != 1 || bad[0].Line != 2 {
		t.Fatalf("Read: %d entries, bad %+v, %v", len(entries), bad, err)
	}
	if has, _ := Has(path, "c"); !has {
		t.Fatal("the entry after the torn line is lost")
	}
	e, tornSeen, err := FindUndoable(path, "/r/state.env")
	if err != nil || e == nil || e.ID != "c" || tornSeen != 0 {
		t.Fatalf("FindUndoable = %+v, torn %d, %v", e, tornSeen, err)
	}
	// undo walks past the torn line to a, and counts it
	u := Entry{ID: "u", When: when, Run: "/r/state.env", Action: "undo", Undoes: "c"}
	if _, err := appendLocked(path, u); err != nil {
		t.Fatal(err)
	}
	if e, tornSeen, _ = FindUndoable(path, "/r/state.env"); e == nil || e.ID != "a" || tornSeen != 1 {
		t.Fatalf("FindUndoable past the torn line = %+v, torn %d", e, tornSeen)
	}

	// a journal from before this fix: the next entry glued onto the torn line
	old := filepath.Join(t.TempDir(), "journal.jsonl")
	whole, _ := json.Marshal(c)
	os.WriteFile(old, append(append(append([]byte{}, torn...), whole...), '\n'), 0o600)
	entries, bad, _ = Read(old)
	if len(entries) != 1 || entries[0].ID != "c" || len(bad) != 1 {
		t.Fatalf("glued line: entries %+v, bad %+v", entries, bad)
	}
	if has, _ := Has(old, "c"); !has {
		t.Fatal("the whole entry glued after a torn line is not found")
	}
	if has, _ := Has(old, "b"); has {
		t.Fatal("the torn entry of a glued line is taken for recorded")
	}
}

// appendLocked adds e as one line the way an action does: lock, append, release.
func appendLocked(path string, e Entry) (string, error) {
	l, err := Acquire(path, DefaultLockWait)
	if err != nil {
		return "", err
	}
	defer l.Release()
	return l.Append(e)
}
