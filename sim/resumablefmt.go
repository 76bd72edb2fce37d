package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// writeEnvFile writes a state.env-style file as the resumable helpers do (state_tool.py, envfiles.py): keys
// sorted, one KEY="value" per line with only \ and " escaped, written to <file>.tmp and renamed into place
// (os.replace). Like envfiles.py it skips the `bash -n` check, and like every helper it does not fsync.
func writeEnvFile(path string, kv map[string]string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, EnvFileBytes(kv), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// EnvFileBytes is what the resumable helpers write for kv: keys sorted, one KEY="value" per line with only \
// and " escaped.
func EnvFileBytes(kv map[string]string) []byte {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for _, k := range keys {
		v := strings.ReplaceAll(kv[k], `\`, `\\`)
		v = strings.ReplaceAll(v, `"`, `\"`)
		fmt.Fprintf(&b, "%s=\"%s\"\n", k, v)
	}
	return b.Bytes()
}

// readEnvFile reads back a state.env as the convention's own readers do (ParseEnvFile). The simulator
// re-reads its runs before every invocation so that changes a person made in between (ticks, steps) are
// kept, as the real tools keep them.
func readEnvFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	kv, err := ParseEnvFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return kv, nil
}

// ParseEnvFile reads a state.env as the convention's own readers do (envfiles.py, state_tool.py): blank
// lines, comments and lines without '=' are skipped, the key and value are trimmed, one pair of double quotes
// is stripped and \" and \\ are unescaped, a later duplicate wins.
func ParseEnvFile(data []byte) (map[string]string, error) {
	kv := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
			v = strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(v)
		}
		kv[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return kv, nil
}

// logStamp is the run.log timestamp: UTC, second precision, Python strftime("%Y-%m-%dT%H:%M:%SZ").
func logStamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// logEntry renders one run.log entry: "[ts] message" and its continuation lines, each indented two spaces.
func logEntry(at time.Time, message string, continuation ...string) string {
	var b strings.Builder
	b.WriteString("[")
	b.WriteString(logStamp(at))
	b.WriteString("] ")
	b.WriteString(message)
	b.WriteByte('\n')
	for _, c := range continuation {
		b.WriteString("  ")
		b.WriteString(c)
		b.WriteByte('\n')
	}
	return b.String()
}

// appendFile appends data in one write with O_APPEND, as the writers append to run.log and progress.txt.
func appendFile(path string, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(data)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}
