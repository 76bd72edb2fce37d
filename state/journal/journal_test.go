package journal

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if p, _ := DefaultPath(); p != "/x/state/runwatch/journal.jsonl" {
		t.Fatalf("got %s", p)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if p, _ := DefaultPath(); p != "/home/u/.local/state/runwatch/journal.jsonl" {
		t.Fatalf("got %s", p)
	}
}

func TestAppendReadAndUndoOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runwatch", "journal.jsonl")
	when := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	old := []byte("S2_DONE=\"0\"\n\x00binary")
	for _, e := range []Entry{
		{ID: "a", When: when, Run: "/r/state.env", Action: "check", Files: []File{{Path: "/r/checklist.state.env", OldExists: true, NewExists: true, Old: old}}},
		{ID: "b", When: when, Run: "/r/state.env", Action: "step"},
		{ID: "x", When: when, Run: "/other/state.env", Action: "step"},
		{ID: "c", When: when, Run: "/r/state.env", Action: "undo", Undoes: "b"},
	} {
		if err := Append(path, e); err != nil {
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
	e, ok := LastUndoable(entries, "/r/state.env")
	if !ok || e.ID != "a" {
		t.Fatalf("LastUndoable = %+v, want a (b was undone)", e)
	}
	if _, ok := LastUndoable(entries, "/none"); ok {
		t.Fatal("found an entry for an unknown run")
	}
	if entries, _, err := Read(filepath.Join(t.TempDir(), "missing")); err != nil || entries != nil {
		t.Fatal("missing journal should be empty")
	}
}
