package resumable

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"runwatch/model"
	"runwatch/state/envfile"
)

// Bounds on what Load reads of artifacts/: a run's evidence can be large, and the listing is a summary.
const (
	maxCheckpoints    = 200
	maxCheckpointSize = 256 << 10
	maxLedgerSize     = 1 << 20
	maxLedgerRows     = 2000
	maxArtifacts      = 500
	maxArtifactDepth  = 6
	maxDirEntries     = 5000
)

// artifactRoot is ARTIFACT_ROOT re-rooted at this run folder when needed (see relocate), else the
// run folder's artifacts/. A <name>.state.env in a shared reports folder has no artifacts/ of its own.
func artifactRoot(rf runFiles, det *model.ResumableDetail) string {
	if v, _ := det.Value("ARTIFACT_ROOT"); strings.TrimSpace(v) != "" {
		for _, c := range relocate(strings.TrimSpace(v), rf.dir, det) {
			if fi, err := os.Stat(c); err == nil && fi.IsDir() {
				return c
			}
		}
	}
	if rf.variant {
		return ""
	}
	return filepath.Join(rf.dir, "artifacts")
}

func loadArtifacts(run *model.Run, rf runFiles, det *model.ResumableDetail) {
	root := artifactRoot(rf, det)
	if root == "" {
		return
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return
	}
	loadCheckpoints(run, det, filepath.Join(root, "checkpoints"))
	loadLedger(run, det, filepath.Join(root, "commits", "commit-ledger.json"))
	det.Artifacts = listArtifacts(root)
}

// jsonText reads a JSON scalar as text; other shapes give "".
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

func readJSONObject(run *model.Run, path string, limit int64, v any) bool {
	data, err := envfile.ReadRegular(path, limit)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	if err != nil {
		run.AddProblem(model.SeverityWarning, model.CodeFileUnparsable, path, fmt.Sprintf("%s: %v", path, err))
		return false
	}
	return true
}

func loadCheckpoints(run *model.Run, det *model.ResumableDetail, dir string) {
	names, _ := readDirNames(dir, maxDirEntries)
	for _, name := range names {
		if !strings.HasSuffix(name, ".done.json") {
			continue
		}
		if len(det.Checkpoints) == maxCheckpoints {
			break
		}
		var doc map[string]json.RawMessage
		if !readJSONObject(run, filepath.Join(dir, name), maxCheckpointSize, &doc) {
			continue
		}
		cp := model.Checkpoint{File: filepath.Join(dir, name), Stage: jsonText(doc["stage"]), Status: jsonText(doc["status"])}
		if cp.Stage == "" {
			cp.Stage = strings.TrimSuffix(name, ".done.json")
		}
		if t, ok := parseTime(jsonText(doc["timestamp_utc"])); ok {
			cp.Timestamp = &t
		}
		det.Checkpoints = append(det.Checkpoints, cp)
		// state.env holds no times; a stage's checkpoint is the only record of when it completed.
		if st := findStage(run, cp.Stage); st != nil && st.Status == model.StageCompleted && cp.Timestamp != nil {
			st.CompletedAt = cp.Timestamp
		}
	}
}

func loadLedger(run *model.Run, det *model.ResumableDetail, path string) {
	var doc struct {
		Entries []map[string]json.RawMessage `json:"entries"`
	}
	if !readJSONObject(run, path, maxLedgerSize, &doc) {
		return
	}
	for i, e := range doc.Entries {
		if i == maxLedgerRows {
			break
		}
		row := model.LedgerRow{Checkpoint: jsonText(e["stage_checkpoint"]), SHA: jsonText(e["commit_sha"]),
			Subject: jsonText(e["subject"])}
		if t, ok := parseTime(jsonText(e["timestamp_utc"])); ok {
			row.Timestamp = &t
		}
		det.Ledger = append(det.Ledger, row)
	}
}

// readDirNames returns at most limit names of dir, sorted, and whether the directory held more.
func readDirNames(dir string, limit int) ([]string, bool) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	names, _ := f.Readdirnames(limit + 1)
	more := len(names) > limit
	if more {
		names = names[:limit]
	}
	sort.Strings(names)
	return names, more
}

// readDirEntries is readDirNames with each entry's type, which the directory listing itself carries (d_type):
// a listing of thousands of artifacts then costs a few getdents calls instead of one lstat per file.
func readDirEntries(dir string, limit int) ([]fs.DirEntry, bool) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	entries, _ := f.ReadDir(limit + 1)
	more := len(entries) > limit
	if more {
		entries = entries[:limit]
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, more
}

// listArtifacts lists files under root (relative, slash-separated), breadth-bounded and depth-bounded, without
// following symlinks. A listing that hit a bound ends with a line saying so.
func listArtifacts(root string) []string {
	var out []string
	capped := false
	var walk func(dir, rel string, depth int)
	walk = func(dir, rel string, depth int) {
		entries, more := readDirEntries(dir, maxDirEntries)
		capped = capped || more
		for _, e := range entries {
			if len(out) >= maxArtifacts {
				capped = true
				return
			}
			name := e.Name()
			r := name
			if rel != "" {
				r = rel + "/" + name
			}
			if e.IsDir() {
				if depth < maxArtifactDepth {
					walk(filepath.Join(dir, name), r, depth+1)
				} else {
					capped = true
				}
				continue
			}
			out = append(out, r)
		}
	}
	walk(root, "", 1)
	if capped {
		out = append(out, fmt.Sprintf("… (listing stopped at %d files or %d levels)", maxArtifacts, maxArtifactDepth))
	}
	return out
}
