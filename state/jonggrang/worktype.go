package jonggrang

import (
	"bytes"
	"strings"
)

// WorkTypeOf says a feature's work_type from its manifest's top-level `work_type:` line without parsing the
// YAML, for a caller that wants only the features of one work type (runwatch brief learning a task's
// history) and would otherwise read every feature whole. ok is false whenever a line scan cannot be sure
// (no such line, two of them, a value that is not a plain word, a file it cannot read): the caller then
// reads the feature as usual, so a wrong guess can only cost a read, never leave one out.
func WorkTypeOf(manifestPath string) (workType string, ok bool) {
	data, _, err := readCapped(manifestPath, maxManifestBytes)
	if err != nil {
		return "", false
	}
	found := 0
	for line := range bytes.Lines(data) {
		rest, isKey := bytes.CutPrefix(line, []byte("work_type:"))
		if !isKey {
			continue
		}
		found++
		v := strings.TrimSpace(string(rest))
		if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		if v == "" || strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != "" {
			return "", false
		}
		workType = v
	}
	if found != 1 {
		return "", false
	}
	return workType, true
}
