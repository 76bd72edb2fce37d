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
	"io"
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

// backwardChunk is how much of the journal is read at a time from its end.
const backwardChunk = 64 << 10

// FindUndoable returns the newest entry for run that is not an undo and has not been undone, reading the
// journal backwards and decoding only the lines that name run. Undo is about the last few actions, while the
// journal keeps every run's old file bytes forever: reading it all would make each undo cost the journal's
// whole history. A line that does not decode is skipped, as Read skips it.
func FindUndoable(path, run string) (*Entry, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// The run as it appears in a line, JSON-quoted: lines of other runs are passed over undecoded.
	needle, err := json.Marshal(run)
	if err != nil {
		return nil, err
	}
	undone := map[string]bool{}
	var found *Entry
	visit := func(line []byte) bool {
		if !bytes.Contains(line, needle) {
			return true
		}
		var e Entry
		if json.Unmarshal(line, &e) != nil || e.Run != run {
			return true
		}
		if e.Undoes != "" {
			undone[e.Undoes] = true
			return true
		}
		if undone[e.ID] {
			return true
		}
		found = &e
		return false
	}
	end := st.Size()
	var partial []byte // the start of a line whose beginning lies in an earlier chunk
	for end > 0 {
		start := max(0, end-backwardChunk)
		buf := make([]byte, end-start, end-start+int64(len(partial)))
		if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read journal %s: %w", path, err)
		}
		buf = append(buf, partial...)
		lines := bytes.Split(buf, []byte("\n"))
		partial = nil
		if start > 0 {
			// The first piece may begin in the previous chunk: finish it next round.
			partial, lines = lines[0], lines[1:]
		}
		for i := len(lines) - 1; i >= 0; i-- {
			if len(bytes.TrimSpace(lines[i])) > 0 && !visit(lines[i]) {
				return found, nil
			}
		}
		end = start
	}
	return found, nil
}
