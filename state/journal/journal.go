// Package journal records every applied action in $XDG_STATE_HOME/runwatch/journal.jsonl: who, when, which
// files, their old and new hashes, and the old bytes. It is the audit trail across runs and what undo uses.
//
// One JSON object per line, appended with O_APPEND in a single write, so concurrent runwatch processes
// interleave whole lines. A line that does not parse (a crash mid-append) is reported and skipped, never
// allowed to hide the entries around it.
package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// File is one file an action changed.
type File struct {
	Path string `json:"path"`
	// OldExists/NewExists say whether the file existed before and after (an unlock removes a lock file).
	OldExists bool   `json:"old_exists"`
	NewExists bool   `json:"new_exists"`
	OldSHA256 string `json:"old_sha256,omitempty"`
	NewSHA256 string `json:"new_sha256,omitempty"`
	// Old is the file's previous content; encoding/json writes []byte as base64.
	Old []byte `json:"old_b64,omitempty"`
	// Mode is the file's permission bits before the action, restored by undo.
	Mode fs.FileMode `json:"mode,omitempty"`
}

// Entry is one applied action.
type Entry struct {
	ID     string    `json:"id"`
	When   time.Time `json:"when"`
	Who    string    `json:"who"`
	Host   string    `json:"host"`
	Action string    `json:"action"`
	// Run is the run's StatePath (run identity everywhere in runwatch); RunID is the human id.
	Run     string `json:"run"`
	RunID   string `json:"run_id"`
	Summary string `json:"summary"`
	Files   []File `json:"files"`
	// LogLine is what was appended to the run's log (not undoable: logs are append-only).
	LogLine string `json:"log_line,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Undoes is the ID of the entry an undo reverted.
	Undoes string `json:"undoes,omitempty"`
}

// DefaultPath is $XDG_STATE_HOME/runwatch/journal.jsonl, falling back to ~/.local/state.
func DefaultPath() (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no XDG_STATE_HOME and no home directory for the journal: %w", err)
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "runwatch", "journal.jsonl"), nil
}

// Append adds e as one line. The journal is private (0600): it holds old file contents.
func Append(path string, e Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("journal entry: %w", err)
	}
	line = append(line, '\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("journal dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open journal: %w", err)
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("append to journal %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync journal %s: %w", path, err)
	}
	return f.Close()
}

// BadLine is a journal line that could not be read.
type BadLine struct {
	Line int
	Err  error
}

// Read returns every entry in order, and the lines it had to skip. A missing journal is empty.
func Read(path string) ([]Entry, []BadLine, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var entries []Entry
	var bad []BadLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	n := 0
	for sc.Scan() {
		n++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			bad = append(bad, BadLine{Line: n, Err: err})
			continue
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		return entries, bad, fmt.Errorf("read journal %s: %w", path, err)
	}
	return entries, bad, nil
}

// LastUndoable returns the newest entry for run that is not an undo and has not been undone: undo walks
// back through a run's actions one at a time.
func LastUndoable(entries []Entry, run string) (*Entry, bool) {
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
