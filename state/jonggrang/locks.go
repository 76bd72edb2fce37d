package jonggrang

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"runwatch/model"
)

// LockDir is where a project's agent locks live: <project>/.jonggrang/locks.
func LockDir(projectRoot string) string { return filepath.Join(projectRoot, ".jonggrang", "locks") }

// ParseLock reads the bytes of a .jonggrang/locks/<agent_id>.lock file (docs/FORMATS.md A.4:
// {"agent_id","files","acquired_at","pid"} written by JSON.stringify). It never fails: bytes that are not a
// lock object set ParseError, which judges the lock stale, as the convention's own cleanup does. The holder
// falls back to the agent id in the file name.
func ParseLock(path string, data []byte) model.Lock {
	l := model.Lock{Path: path, Kind: model.KindJonggrang, Holder: strings.TrimSuffix(filepath.Base(path), ".lock")}
	l.Raw = string(data)
	if len(l.Raw) > maxLockRawBytes {
		l.Raw = truncate(l.Raw, maxLockRawBytes)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		l.ParseError = "empty file"
		return l
	}
	if trimmed[0] != '{' {
		l.ParseError = "not a JSON object: " + startsWith(trimmed)
		return l
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		l.ParseError = "not a JSON object: " + jsonErrText(err, trimmed)
		return l
	}
	if obj == nil {
		l.ParseError = "not a JSON object: null"
		return l
	}
	if dec.More() {
		l.ParseError = "not a JSON object: text follows the object"
		return l
	}
	var odd []string
	if raw, ok := obj["agent_id"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			l.Holder = s
		} else if !isJSONNull(raw) {
			odd = append(odd, "agent_id is not text")
		}
	}
	if raw, ok := obj["files"]; ok && !isJSONNull(raw) {
		if err := json.Unmarshal(raw, &l.Files); err != nil {
			odd = append(odd, "files is not a list of paths")
		}
	}
	if raw, ok := obj["acquired_at"]; ok && !isJSONNull(raw) {
		if t, ok := jsonTime(raw); ok {
			l.AcquiredAt = &t
		} else {
			// The convention computes NaN for such a value and never expires the lock; say why it is unknown.
			odd = append(odd, "acquired_at "+truncate(string(raw), 60)+" is not a timestamp")
		}
	}
	if raw, ok := obj["pid"]; ok && !isJSONNull(raw) {
		l.PID = jsonPID(raw)
	}
	for _, k := range []string{"host", "hostname"} {
		if raw, ok := obj[k]; ok {
			_ = json.Unmarshal(raw, &l.Host)
		}
	}
	if raw, ok := obj["user"]; ok {
		_ = json.Unmarshal(raw, &l.User)
	}
	if len(odd) > 0 {
		// Not a parse error: the lock still names files and an owner. The notes go with the reasons.
		l.Reasons = odd
	}
	return l
}

// startsWith describes the start of a file that is not what it should be, without echoing binary bytes.
func startsWith(data []byte) string {
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return "binary content"
	}
	return "the file starts with " + strconv.Quote(truncate(string(data), 24))
}

func isJSONNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// jsonTime reads a timestamp written as an ISO string or an epoch number.
func jsonTime(raw json.RawMessage) (t time.Time, ok bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return parseTime(s)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return parseTime(n.String())
	}
	return t, false
}

// jsonPID reads a pid written as a number or a numeric string. Values that cannot be a pid (fractions,
// overflow, text) become -1 so the verdict says the pid is invalid instead of silently checking pid 0.
func jsonPID(raw json.RawMessage) int {
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return -1
		}
		n = json.Number(strings.TrimSpace(s))
	}
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(n.String(), 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt64/2 {
			return -1
		}
		v = int64(f)
	}
	// Out-of-range pids are kept as written, so the verdict can quote them ("pid 99999999999 is not a valid
	// process id"); only a value int cannot hold becomes -1.
	if int64(int(v)) != v {
		return -1
	}
	return int(v)
}

// jsonErrText makes a JSON error readable for a person and says when the bytes are not even text.
func jsonErrText(err error, data []byte) string {
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return "binary content"
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%v (at byte %d)", syn, syn.Offset)
	}
	return err.Error()
}

// lockFile is a lock read from disk, or why it could not be read.
type lockFile struct {
	lock    model.Lock
	readErr error
}

// agentIDs are the ids a lock can belong to: its agent_id and the agent id in its file name.
func (lf lockFile) agentIDs() []string {
	name := strings.TrimSuffix(filepath.Base(lf.lock.Path), ".lock")
	if lf.lock.Holder != "" && lf.lock.Holder != name {
		return []string{lf.lock.Holder, name}
	}
	return []string{name}
}

// readLocks reads every *.lock in the project's lock dir, in name order, without judging them: the caller
// decides which run each lock belongs to first.
func readLocks(projectRoot string) ([]lockFile, error) {
	dir := LockDir(projectRoot)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []lockFile
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, _, err := readCapped(path, maxLockBytes)
		if err != nil {
			out = append(out, lockFile{lock: model.Lock{Path: path, Kind: model.KindJonggrang,
				Holder: strings.TrimSuffix(e.Name(), ".lock")}, readErr: err})
			continue
		}
		out = append(out, lockFile{lock: ParseLock(path, data)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].lock.Path < out[j].lock.Path })
	return out, nil
}

// judge applies the lock rules (model.JudgeLock), keeping the parse notes ParseLock found as extra reasons.
func judge(l model.Lock, env model.Env) model.Lock {
	notes := l.Reasons
	model.JudgeLock(&l, env)
	l.Reasons = append(l.Reasons, notes...)
	return l
}
