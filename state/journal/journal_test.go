package journal

import (
	"bytes"
	"fmt"
	"math/rand/v2"
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
	e, err := FindUndoable(path, "/r/state.env")
	if err != nil || e == nil || e.ID != "a" {
		t.Fatalf("FindUndoable = %+v, %v; want a (b was undone)", e, err)
	}
	if e, _ := FindUndoable(path, "/none"); e != nil {
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
			if err := Append(path, e); err != nil {
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
			got, err := FindUndoable(path, run)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (got != nil) || (ok && got.ID != want.ID) {
				t.Fatalf("round %d run %s: FindUndoable %+v, full read %+v", round, run, got, want)
			}
		}
	}
}
