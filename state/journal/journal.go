// Package journal records every applied action in $XDG_STATE_HOME/runwatch/journal.jsonl: who, when, which
// files, their old and new hashes, and the old bytes. It is the audit trail across runs and what undo uses.
//
// One JSON object per line, appended with O_APPEND in a single write under an exclusive flock, so concurrent
// runwatch processes never interleave. A SIGKILL during the write can still leave the start of a line
// without its end (the kernel writes a large line page by page): the next append, seeing the journal not
// end in a newline, starts on a fresh line and says so, so the torn line is kept as it is, alone on its line,
// and never glued to the entry after it. Readers take only whole lines that parse as an entry: a torn line
// is reported and skipped, never allowed to hide the entries around it, and an id inside it is never taken
// for a recorded entry (its intent is still pending, and recovery journals it whole).
//
// The journal is a write-ahead log: before an action changes the first file, its intent (the entry with old
// and new hashes and old bytes, plus the audit line it will append) is written whole to pending/<id>.json
// beside the journal and fsynced; once the files are changed and the audit line appended, the completed
// entry is appended to journal.jsonl and the intent removed. An intent still there with its owner dead is
// what a crash left half done: the next action on that run finishes it (state/action).
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
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"runwatch/state/atomicfile"
	"runwatch/state/safefile"
	"runwatch/userdir"
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
	// Displaced: Old is not what the person saw but what a writer that takes no lock put there between
	// runwatch's last check and its rename; undo restores it.
	Displaced bool `json:"displaced,omitempty"`
	// Temp and Claim are the owner-named temp and quarantine names the action uses beside Path, so a
	// recovery knows exactly which leftovers are this action's.
	Temp  string `json:"temp,omitempty"`
	Claim string `json:"claim,omitempty"`
	// PathRaw holds Path's bytes when they are not UTF-8 (see seal); Path then holds a readable stand-in.
	PathRaw []byte `json:"path_raw,omitempty"`
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
	// Recovered says that a later action finished this one after a crash, and what it found.
	Recovered string `json:"recovered,omitempty"`
	// Raced says that a writer that takes no lock landed between runwatch's last check and its rename: its
	// file was put back, and the same edit made on it (Files as written) or not applied (no Files).
	Raced string `json:"raced,omitempty"`
	// RunRaw and LogLineRaw hold Run's and LogLine's bytes when they are not UTF-8 (see seal).
	RunRaw     []byte `json:"run_raw,omitempty"`
	LogLineRaw []byte `json:"log_line_raw,omitempty"`
}

// Intent is an action about to change files, written before the first change (see the package comment).
type Intent struct {
	Entry
	// Root is the run root the files are below; LogPath/LogLine the audit line planned, and LogOffset the
	// log's size before it, so a recovery looks for the line (by action id) only in what came after.
	Root      string `json:"root"`
	LogPath   string `json:"log_path,omitempty"`
	Planned   string `json:"planned_log_line,omitempty"`
	LogOffset int64  `json:"log_offset"`
	// PID and PIDStart name the process applying it, on the host OwnerHost (atomicfile.HostTag): an intent
	// whose owner is alive is in flight, not left over.
	PID       int       `json:"pid"`
	PIDStart  time.Time `json:"pid_start,omitempty"`
	OwnerHost string    `json:"owner_host"`
	// RootRaw, LogPathRaw and PlannedRaw hold their fields' bytes when they are not UTF-8 (see seal).
	RootRaw    []byte `json:"root_raw,omitempty"`
	LogPathRaw []byte `json:"log_path_raw,omitempty"`
	PlannedRaw []byte `json:"planned_log_line_raw,omitempty"`
}

// A path may hold any bytes but NUL, and encoding/json writes a string's invalid UTF-8 as U+FFFD: a run
// folder named with a Latin-1 byte would be journaled as another name, so undo would find nothing and a
// crash's intent would never be matched to its run. seal keeps each such field whole in a _raw sidecar
// (base64, as []byte is) and leaves a readable stand-in in the field; unseal puts the bytes back. Journals
// written before the sidecars read as they always did.
func sealed(s string, raw *[]byte) string {
	*raw = nil
	if utf8.ValidString(s) {
		return s
	}
	*raw = []byte(s)
	return standIn(s)
}

// standIn is what a field holding s says in the journal: s itself when it is UTF-8.
func standIn(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func unsealed(s string, raw []byte) string {
	if raw != nil {
		return string(raw)
	}
	return s
}

func (e Entry) seal() Entry {
	e.Run = sealed(e.Run, &e.RunRaw)
	e.LogLine = sealed(e.LogLine, &e.LogLineRaw)
	e.Files = append([]File(nil), e.Files...)
	for i := range e.Files {
		e.Files[i].Path = sealed(e.Files[i].Path, &e.Files[i].PathRaw)
	}
	return e
}

func (e *Entry) unseal() {
	e.Run, e.RunRaw = unsealed(e.Run, e.RunRaw), nil
	e.LogLine, e.LogLineRaw = unsealed(e.LogLine, e.LogLineRaw), nil
	for i := range e.Files {
		e.Files[i].Path, e.Files[i].PathRaw = unsealed(e.Files[i].Path, e.Files[i].PathRaw), nil
	}
}

func (in Intent) seal() Intent {
	in.Entry = in.Entry.seal()
	in.Root = sealed(in.Root, &in.RootRaw)
	in.LogPath = sealed(in.LogPath, &in.LogPathRaw)
	in.Planned = sealed(in.Planned, &in.PlannedRaw)
	return in
}

func (in *Intent) unseal() {
	in.Entry.unseal()
	in.Root, in.RootRaw = unsealed(in.Root, in.RootRaw), nil
	in.LogPath, in.LogPathRaw = unsealed(in.LogPath, in.LogPathRaw), nil
	in.Planned, in.PlannedRaw = unsealed(in.Planned, in.PlannedRaw), nil
}

// PendingDir is where intents wait: pending/ beside the journal.
func PendingDir(journalPath string) string {
	return filepath.Join(filepath.Dir(journalPath), "pending")
}

// WriteIntent makes in durable before the action changes anything: written whole to a temp name, fsynced,
// renamed to <id>.json, directory fsynced.
func WriteIntent(journalPath string, in Intent) error {
	data, err := json.Marshal(in.seal())
	if err != nil {
		return fmt.Errorf("journal intent: %w", err)
	}
	dir := PendingDir(journalPath)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("journal dir: %w", err)
	}
	tmp, err := os.OpenFile(filepath.Join(dir, pendingTempName(in.ID, in.OwnerHost, in.PID)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("journal intent: %w", err)
	}
	_, werr := tmp.Write(data)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write journal intent %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, in.ID+".json")); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("journal intent: %w", err)
	}
	return atomicfile.SyncDir(dir)
}

// pendingTempName names an intent being written by its owner, so a killed writer's temp can be told from a
// live one's: .<id>.<host>-<pid>.tmp.
func pendingTempName(id, host string, pid int) string {
	return "." + id + "." + host + "-" + strconv.Itoa(pid) + ".tmp"
}

// CleanPendingTemps removes the intents that were being written when their owner died (never renamed into
// place, so their action never changed anything). dead says whether host/pid is gone.
func CleanPendingTemps(journalPath string, dead func(host string, pid int) bool) {
	dir := PendingDir(journalPath)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tmp") {
			continue
		}
		owner := strings.TrimSuffix(name, ".tmp")
		owner = owner[strings.LastIndexByte(owner, '.')+1:]
		host, pidText, ok := strings.Cut(owner, "-")
		pid, err := strconv.Atoi(pidText)
		if ok && err == nil && dead(host, pid) {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

// RemoveIntent drops the intent once its completed entry is in the journal. Not fsynced: an intent that
// reappears after a crash is found in the journal by its id and dropped again.
func RemoveIntent(journalPath, id string) error {
	err := os.Remove(filepath.Join(PendingDir(journalPath), id+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// SetAside moves an intent that cannot be finished to pending/unfinished/, where it is kept for a person
// to read and no longer counts as an action in progress (install counts pending/*.json). It returns the
// new path.
func SetAside(journalPath, id string) (string, error) {
	dir := filepath.Join(PendingDir(journalPath), "unfinished")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	to := filepath.Join(dir, id+".json")
	if err := os.Rename(filepath.Join(PendingDir(journalPath), id+".json"), to); err != nil {
		return "", err
	}
	return to, atomicfile.SyncDir(PendingDir(journalPath))
}

// Pending returns the intents waiting for run (every run when run is ""), oldest first. An intent file that
// does not decode is reported by name.
func Pending(journalPath, run string) ([]Intent, []string, error) {
	dir := PendingDir(journalPath)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var out []Intent
	var bad []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") || !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			bad = append(bad, name+": "+err.Error())
			continue
		}
		var in Intent
		if err := json.Unmarshal(data, &in); err != nil || in.ID+".json" != name {
			bad = append(bad, name+": not an intent")
			continue
		}
		in.unseal()
		if run == "" || in.Run == run {
			out = append(out, in)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, bad, nil
}

// Has reports whether the journal holds a whole entry with id, reading backwards from the end: what a
// recovery asks of recent intents. A line that only mentions the id (one a crash tore) is not an entry.
func Has(path, id string) (bool, error) {
	needle, _ := json.Marshal(id)
	found := false
	err := scanBackwards(path, func(line []byte) bool {
		if !bytes.Contains(line, needle) {
			return true
		}
		if e, ok, _ := parseLine(line); ok && e.ID == id {
			found = true
			return false
		}
		return true
	})
	return found, err
}

// BeganAppend reports whether the journal holds a line, not a whole entry, that begins the entry of id: an
// append of it that a crash cut short. It records nothing (the entry is not in the journal); it tells a
// recovery that the action got as far as its journal append, the step after every change it makes.
func BeganAppend(path, id string) (bool, error) {
	quoted, _ := json.Marshal(id)
	prefix := append(append([]byte{}, entryStart...), quoted...)
	found := false
	err := scanBackwards(path, func(line []byte) bool {
		if !bytes.HasPrefix(line, prefix) {
			return true
		}
		if _, ok, torn := parseLine(line); !ok || torn {
			found = true
			return false
		}
		return true
	})
	return found, err
}

// entryStart is how every entry's JSON begins (ID is Entry's first field).
var entryStart = []byte(`{"id":`)

// parseLine decodes one journal line into an entry, if it is one whole. A journal written before appends
// started on a fresh line may hold a torn entry with a whole one glued after it: the whole one, which starts
// at the line's last entryStart, is taken (torn reports that the line held more than it).
func parseLine(line []byte) (e Entry, ok, torn bool) {
	if json.Unmarshal(line, &e) == nil && e.ID != "" {
		e.unseal()
		return e, true, false
	}
	if i := bytes.LastIndex(line, entryStart); i > 0 {
		var glued Entry
		if json.Unmarshal(line[i:], &glued) == nil && glued.ID != "" {
			glued.unseal()
			return glued, true, true
		}
	}
	return Entry{}, false, true
}

// DefaultPath is $XDG_STATE_HOME/runwatch/journal.jsonl, falling back to ~/.local/state, in the environment
// getenv reads.
func DefaultPath(getenv func(string) string) (string, error) {
	return defaultPath(getenv, func() (string, error) { return userdir.Home(getenv) })
}

// defaultPath is DefaultPath with the environment and the home directory given, so tests run in parallel.
func defaultPath(getenv func(string) string, userHome func() (string, error)) (string, error) {
	base := getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := userHome()
		if err != nil {
			return "", fmt.Errorf("no XDG_STATE_HOME and no home directory for the journal: %w", err)
		}
		base = filepath.Join(home, ".local", "state")
	}
	return PathIn(base), nil
}

// PathIn is the journal's path with XDG_STATE_HOME set to stateHome: the demo keeps its journal there, in its
// workspace, so the CLI reaches it by that variable.
func PathIn(stateHome string) string { return filepath.Join(stateHome, "runwatch", "journal.jsonl") }

// DefaultLockWait is how long an action waits for the journal's lock unless told otherwise. Appends take
// milliseconds; a holder that keeps it longer is not runwatch at work (a `flock journal.jsonl sleep 600`, a
// stuck backup).
const DefaultLockWait = 15 * time.Second

// Lock is the journal open and exclusively locked: appenders take turns, so the end one of them reads is the
// end it appends to, and an action that holds it from before its first change to its journal entry cannot
// be left half way by someone else holding it. A killed holder's lock goes with its descriptor.
type Lock struct {
	f    *os.File
	path string
	// BeforeAppend, for the crash harness and tests only, is called with the journal open and locked, just
	// before an entry's line is written, so a test can tear the append (write part of it, then SIGKILL
	// itself) or fail it.
	BeforeAppend func(f *os.File, line []byte)
}

// BusyError is a journal lock not had within the wait. Holders names who holds it, when the system says.
type BusyError struct {
	Path    string
	Waited  time.Duration
	Holders string
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("the journal %s is locked by %s, still after %s; wait for it to finish, or end it", e.Path, e.Holders, e.Waited)
}

// Acquire opens the journal (creating it, private: it holds old file contents) and takes its lock, waiting
// at most wait, then failing with a *BusyError that names the holder.
func Acquire(path string, wait time.Duration) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("journal %s is not a regular file", path)
	}
	deadline := time.Now().Add(wait)
	pause := 5 * time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &Lock{f: f, path: path}, nil
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return nil, fmt.Errorf("lock journal %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			holders := lockHolders(f)
			f.Close()
			return nil, &BusyError{Path: path, Waited: wait, Holders: holders}
		}
		time.Sleep(pause)
		pause = min(2*pause, 200*time.Millisecond)
	}
}

// Release gives the lock up.
func (l *Lock) Release() error { return l.f.Close() }

// Append adds e as one line to the journal l holds. repaired says, when not empty, that the journal ended in
// a line a crash cut short; e was written on a fresh line after it.
func (l *Lock) Append(e Entry) (repaired string, err error) {
	path, f := l.path, l.f
	line, err := json.Marshal(e.seal())
	if err != nil {
		return "", fmt.Errorf("journal entry: %w", err)
	}
	line = append(line, '\n')
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("journal %s: %w", path, err)
	}
	if st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err != nil {
			return "", fmt.Errorf("read journal %s: %w", path, err)
		}
		if last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
			repaired = fmt.Sprintf("the journal %s ended in a line cut short by a crash (at byte %d); it is kept as it is, "+
				"skipped by every reader, and this entry starts on the next line", path, st.Size())
		}
	}
	if l.BeforeAppend != nil {
		l.BeforeAppend(f, line)
	}
	if _, err := f.Write(line); err != nil {
		return repaired, fmt.Errorf("append to journal %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return repaired, fmt.Errorf("fsync journal %s: %w", path, err)
	}
	return repaired, nil
}

// errTorn is the problem of a line that is not one whole entry.
var errTorn = errors.New("not a whole journal entry (cut short by a crash?)")

// BadLine is a journal line that could not be read.
type BadLine struct {
	Line int
	Err  error
}

// Read returns every entry in order, and the lines it had to skip. A missing journal is empty.
func Read(path string) ([]Entry, []BadLine, error) {
	f, _, err := safefile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("journal %s: %w", path, err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("read journal %s: %w", path, err)
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
		e, ok, torn := parseLine(sc.Bytes())
		if torn {
			bad = append(bad, BadLine{Line: n, Err: errTorn})
		}
		if ok {
			entries = append(entries, e)
		}
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
// whole history. A line that is not a whole entry is skipped, as Read skips it, and counted in torn (the
// lines passed that name run, or may have: a torn line can end before its run).
func FindUndoable(path, run string) (found *Entry, torn int, err error) {
	// The run as it appears in a line, JSON-quoted: lines of other runs are passed over undecoded. A run
	// that is not UTF-8 appears as its stand-in, shared by other such names: the decoded bytes decide.
	needle, err := json.Marshal(standIn(run))
	if err != nil {
		return nil, 0, err
	}
	undone := map[string]bool{}
	err = scanBackwards(path, func(line []byte) bool {
		whole := bytes.HasSuffix(bytes.TrimSpace(line), []byte("}"))
		if whole && !bytes.Contains(line, needle) {
			return true
		}
		e, ok, cut := parseLine(line)
		if cut {
			torn++
		}
		if !ok || e.Run != run {
			return true
		}
		if e.Undoes != "" {
			undone[e.Undoes] = true
			return true
		}
		if undone[e.ID] || len(e.Files) == 0 && (e.Recovered != "" || e.Raced != "") {
			return true
		}
		found = &e
		return false
	})
	return found, torn, err
}

// scanBackwards calls visit with each non-blank line from the last to the first, until visit returns false.
// A missing journal has no lines.
func scanBackwards(path string, visit func([]byte) bool) error {
	f, _, err := safefile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("journal %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	end := st.Size()
	var partial []byte // the start of a line whose beginning lies in an earlier chunk
	for end > 0 {
		start := max(0, end-backwardChunk)
		buf := make([]byte, end-start, end-start+int64(len(partial)))
		if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read journal %s: %w", path, err)
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
				return nil
			}
		}
		end = start
	}
	return nil
}
