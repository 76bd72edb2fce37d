package resumable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"runwatch/model"
	"runwatch/state/envfile"
)

// maxLockSize caps what is read of a lock file. A real lock is one line of about 150 bytes.
const maxLockSize = 64 << 10

// LockCandidates lists, best first, where the lock of the run whose state file is statePath may be, given
// the state file's keys: the reader uses the first that exists, and a writer taking the lock should use the
// first whose folder exists. With LOCK_FILE unset they are the convention's defaults (run.lock, or
// <name>.state.lock / <name>.lock beside a <name>.state.env). The paths come from file content, so a caller
// that writes or removes must still confine them to where it may write.
func LockCandidates(statePath string, keys model.KVs) []string {
	return lockCandidates(filesFor(statePath), &model.ResumableDetail{Keys: keys})
}

// lockCandidates is LockCandidates for a run whose files and state Load has already made.
func lockCandidates(rf runFiles, det *model.ResumableDetail) []string {
	lf, _ := det.Value("LOCK_FILE")
	if strings.TrimSpace(lf) == "" {
		return append([]string(nil), rf.defaultLocks...)
	}
	return relocate(strings.TrimSpace(lf), rf.dir, det)
}

// relocate lists where a path written in the state file may be found here, best first.
//
// LOCK_FILE and ARTIFACT_ROOT are written as absolute paths on the machine that ran the task. When the
// reports folder was copied, synced or mounted elsewhere (or the path is relative, which no writer defines a
// base for), that path does not exist here, yet the file usually sits at the same place inside the run
// folder. So after the path as written (a relative one taken against the run folder), the same path is
// re-rooted at this run folder: behind a component equal to the run folder's name, behind CONTROL_RUN_ROOT or
// RUN_ROOT when the path lies under them, and finally its bare file name in the run folder. Callers use the
// first candidate that exists.
func relocate(p, dir string, det *model.ResumableDetail) []string {
	var out []string
	add := func(c string) {
		c = filepath.Clean(c)
		for _, q := range out {
			if q == c {
				return
			}
		}
		out = append(out, c)
	}
	if !filepath.IsAbs(p) {
		add(filepath.Join(dir, p))
		add(filepath.Join(dir, filepath.Base(p)))
		return out
	}
	add(p)
	parts := strings.Split(filepath.ToSlash(filepath.Clean(p)), "/")
	runName := filepath.Base(dir)
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] == runName {
			add(filepath.Join(append([]string{dir}, parts[i+1:]...)...))
			break
		}
	}
	for _, root := range []string{"CONTROL_RUN_ROOT", "RUN_ROOT"} {
		r, _ := det.Value(root)
		if r = filepath.Clean(r); filepath.IsAbs(r) {
			if rel, err := filepath.Rel(r, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				add(filepath.Join(dir, rel))
			}
		}
	}
	add(filepath.Join(dir, filepath.Base(p)))
	return out
}

// loadLock finds, parses and judges the run's lock. No lock file means nobody holds the run.
func loadLock(run *model.Run, rf runFiles, env model.Env) {
	det := run.Resumable
	path := ""
	for _, c := range lockCandidates(rf, det) {
		if _, err := os.Lstat(c); err == nil {
			path = c
			break
		}
	}
	if path == "" {
		return
	}
	data, err := envfile.ReadRegular(path, maxLockSize)
	var nr *envfile.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// A writer creating the lock exclusively fails on a dangling link, so the run is stuck on it.
			target, _ := os.Readlink(path)
			run.AddProblem(model.SeverityWarning, model.CodeLockUnreadable, path,
				fmt.Sprintf("lock %s is a symlink to %q, which does not exist", path, target))
		}
		return // otherwise released between the Lstat and the read
	case errors.Is(err, envfile.ErrTooLarge):
		l := model.Lock{Path: path, Kind: model.KindResumable, ParseError: err.Error()}
		judge(run, &l, env, "")
		return
	case errors.As(err, &nr):
		run.AddProblem(model.SeverityWarning, model.CodeLockUnreadable, path,
			fmt.Sprintf("lock %s is %v; it cannot be judged", path, err))
		return
	case err != nil:
		run.AddProblem(model.SeverityWarning, model.CodeLockUnreadable, path,
			fmt.Sprintf("lock %s cannot be read: %v", path, err))
		return
	}
	l, badTime := parseLock(path, data)
	judge(run, &l, env, badTime)
}

func judge(run *model.Run, l *model.Lock, env model.Env, badTime string) {
	model.JudgeLock(l, env)
	if badTime != "" {
		l.Reasons = append(l.Reasons, fmt.Sprintf("timestamp %q is not a time runwatch understands", badTime))
	}
	switch l.Verdict {
	case model.VerdictStale:
		run.AddProblem(model.SeverityWarning, model.CodeLockStale, l.Path,
			fmt.Sprintf("lock %s is stale: %s", l.Path, strings.Join(l.Reasons, "; ")))
	case model.VerdictUnknown:
		run.AddProblem(model.SeverityWarning, model.CodeLockUnknown, l.Path,
			fmt.Sprintf("lock %s: %s", l.Path, strings.Join(l.Reasons, "; ")))
	}
	run.Locks = append(run.Locks, *l)
}

// lockTimeKeys are the timestamp field names seen in the wild, best first.
var lockTimeKeys = []string{"acquired_at_utc", "acquired_at", "created_at", "timestamp"}

// parseLock understands the JSON lock of the mining tool, the env-style lock of shell-driven runs, and the
// PID/HOST/CREATED_AT variant of the fls plans. Keys are case-insensitive. badTime is a timestamp value that
// was present but not understood.
func parseLock(path string, data []byte) (l model.Lock, badTime string) {
	l = model.Lock{Path: path, Kind: model.KindResumable, Raw: string(data)}
	fields, perr := lockFields(bytes.TrimSpace(data))
	if perr != "" {
		l.ParseError = perr
		return l, ""
	}
	if s, ok := fields["pid"]; ok && strings.TrimSpace(s) != "" {
		pid, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			l.ParseError = fmt.Sprintf("pid %q is not an integer", s)
			return l, ""
		}
		l.PID = int(pid)
	}
	l.Host, l.User, l.RunID = fields["host"], fields["user"], fields["run_id"]
	for _, k := range lockTimeKeys {
		if s, ok := fields[k]; ok && strings.TrimSpace(s) != "" {
			if t, ok := parseTime(s); ok {
				l.AcquiredAt = &t
			} else {
				badTime = s
			}
			break
		}
	}
	switch {
	case l.User != "" && l.Host != "":
		l.Holder = l.User + "@" + l.Host
	case l.User != "":
		l.Holder = l.User
	case l.Host != "":
		l.Holder = l.Host
	default:
		l.Holder = l.RunID
	}
	return l, badTime
}

// lockFields returns the lock's scalar fields under lower-case keys, or why the content is not a lock.
func lockFields(data []byte) (map[string]string, string) {
	fields := map[string]string{}
	if len(data) == 0 {
		return nil, "the lock file is empty"
	}
	if data[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return nil, "not valid JSON: " + err.Error()
		}
		for k, v := range m {
			switch v := v.(type) {
			case string:
				fields[strings.ToLower(k)] = v
			case json.Number:
				fields[strings.ToLower(k)] = v.String()
			}
		}
		return fields, ""
	}
	if bytes.IndexByte(data, '\n') < 0 && bytes.Count(data, []byte("=")) > 1 {
		// The env-style lock as run.log echoes it: every field on one line.
		data = splitPairs(data)
	}
	f, _ := envfile.Parse(data)
	for _, kv := range f.Entries() {
		fields[strings.ToLower(kv.Key)] = kv.Value
	}
	if len(fields) == 0 {
		return nil, "neither JSON nor KEY=value lines"
	}
	return fields, ""
}

// splitPairs puts each blank-separated KEY=value of a line on its own line, keeping double-quoted values
// (blanks and \" included) whole.
func splitPairs(line []byte) []byte {
	out := make([]byte, 0, len(line)+8)
	quoted, escaped := false, false
	for _, c := range line {
		switch {
		case escaped:
			escaped = false
		case quoted && c == '\\':
			escaped = true
		case c == '"':
			quoted = !quoted
		case !quoted && (c == ' ' || c == '\t'):
			c = '\n'
		}
		out = append(out, c)
	}
	return out
}

// parseTime accepts ISO-8601 (with or without zone, assumed UTC), the compact run-id style 20260215T143525Z,
// and Unix seconds or milliseconds.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05Z07:00",
		"2006-01-02 15:04:05", "20060102T150405Z"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		if n > 1e12 {
			return time.UnixMilli(n).UTC(), true
		}
		return time.Unix(n, 0).UTC(), true
	}
	return time.Time{}, false
}
