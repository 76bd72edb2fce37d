package resumable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"runwatch/model"
	"runwatch/state/envfile"
	"runwatch/state/safefile"
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

// The folders of artifacts/ that Load reads, besides the listing: checkpoints, the two commit ledgers and the
// bootstrap summary. The rest of artifacts/ is evidence that only the listing (ResumableDetail.Artifacts)
// names.
const (
	checkpointsFolder = "checkpoints"
	commitsFolder     = "commits"
	evidenceFolder    = "evidence"
	bootstrapFolder   = "bootstrap"
)

// ReadsArtifactFolder reports whether Load reads anything in the folder name of a run's artifacts/ (other
// than to list it): what a watcher must watch there to see every change that reading it again would show.
func ReadsArtifactFolder(name string) bool {
	switch name {
	case checkpointsFolder, commitsFolder, evidenceFolder, bootstrapFolder:
		return true
	}
	return false
}

// artifactRoot is ARTIFACT_ROOT re-rooted at this run folder when needed (see relocate), else the
// run folder's artifacts/; isDir says it was already seen to be a folder. A <name>.state.env in a shared
// reports folder has no artifacts/ of its own.
func artifactRoot(rf runFiles, det *model.ResumableDetail) (root string, isDir bool) {
	if v, _ := det.Value("ARTIFACT_ROOT"); strings.TrimSpace(v) != "" {
		for _, c := range relocate(strings.TrimSpace(v), rf.dir, det) {
			if fi, err := os.Stat(c); err == nil && fi.IsDir() {
				return c, true
			}
		}
	}
	if rf.variant {
		return "", false
	}
	return model.ChildPath(rf.dir, "artifacts"), false
}

// loadArtifacts reads checkpoints, both commit-ledger shapes and the bootstrap summary's stage_schema before
// the stages are built: they are evidence of stage order and of which stages exist (docs/FORMATS.md C.1).
func loadArtifacts(run *model.Run, rf runFiles, det *model.ResumableDetail, keepListing bool) (stageSchema []string) {
	root, isDir := artifactRoot(rf, det)
	if root == "" {
		return nil
	}
	if !isDir {
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			return nil
		}
	}
	// The listing comes first: it has already read the folders the evidence lives in, so the checkpoints
	// are not listed twice and a file it saw no sign of is not looked for (most runs have no ledger).
	seen := listArtifacts(root, keepListing)
	det.Artifacts = seen.files
	det.CheckpointDir = model.ChildPath(root, checkpointsFolder)
	loadCheckpoints(run, det, det.CheckpointDir, seen)
	if ledger := model.ChildPath(model.ChildPath(root, commitsFolder), "commit-ledger.json"); !seen.absent(root, ledger) {
		loadLedger(run, det, ledger)
	}
	if ledger := model.ChildPath(model.ChildPath(root, evidenceFolder), "stage-commit-ledger.json"); !seen.absent(root, ledger) {
		loadStageLedger(run, det, ledger)
	}
	if summary := model.ChildPath(model.ChildPath(root, bootstrapFolder), "run-bootstrap-summary.json"); !seen.absent(root, summary) {
		return loadStageSchema(run, summary)
	}
	return nil
}

// stageSchemaRange is the bootstrap's "M0..M14".
var stageSchemaRange = regexp.MustCompile(`^([A-Za-z]{1,4})(\d{1,4})\s*\.\.\s*(?:[A-Za-z]{1,4})?(\d{1,4})$`)

// loadStageSchema reads stage_schema: a range like "M0..M14", a list, or a comma-separated string.
func loadStageSchema(run *model.Run, path string) []string {
	var doc map[string]json.RawMessage
	if !readJSONObject(run, path, maxCheckpointSize, &doc) {
		return nil
	}
	raw, ok := doc["stage_schema"]
	if !ok {
		return nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	text := jsonText(raw)
	if m := stageSchemaRange.FindStringSubmatch(strings.TrimSpace(text)); m != nil {
		lo, _ := strconv.Atoi(m[2])
		hi, _ := strconv.Atoi(m[3])
		var out []string
		for i := lo; i <= hi && len(out) < 1000; i++ {
			out = append(out, m[1]+strconv.Itoa(i))
		}
		return out
	}
	return strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' })
}

// jsonText reads a JSON scalar as text; other shapes give "".
func jsonText(raw json.RawMessage) string {
	// A string without escapes, in valid UTF-8, is its own bytes between the quotes (the document it came
	// from was valid JSON): most fields of every checkpoint, without a reflective decode.
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw[1:n-1], '\\') < 0 &&
		utf8.Valid(raw) {
		return string(raw[1 : n-1])
	}
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

// readJSONFields is readJSONObject into a map of raw values, of which it keeps only the values of keys (nil
// for a key the object lacks). A checkpoint is a flat object whose few fields are read: its keys are
// matched as they are spelled, with no map and no reflection, and only a document that is not an object
// or spells a key with an escape goes to encoding/json, which then says what is wrong with it, as before.
func readJSONFields(run *model.Run, path string, limit int64, keys []string, vals []json.RawMessage) bool {
	data, err := envfile.ReadRegular(path, limit)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err == nil && pickFields(data, keys, vals) {
		return true
	}
	var doc map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(data, &doc)
	}
	if err != nil {
		run.AddProblem(model.SeverityWarning, model.CodeFileUnparsable, path, fmt.Sprintf("%s: %v", path, err))
		return false
	}
	for i, k := range keys {
		vals[i] = doc[k]
	}
	return true
}

// pickFields sets vals[i] to the raw value of keys[i] in data, valid JSON whose top level is an object, as
// json.Unmarshal into a map[string]json.RawMessage gives it (the last of a key written twice). It reports
// false, having set nothing it need keep, for invalid JSON, another top level, or a key with an escape.
func pickFields(data []byte, keys []string, vals []json.RawMessage) bool {
	clear(vals)
	if !json.Valid(data) {
		return false
	}
	i := skipJSONSpace(data, 0)
	if i == len(data) || data[i] != '{' {
		return false
	}
	for i = skipJSONSpace(data, i+1); i < len(data) && data[i] != '}'; {
		end := jsonValueEnd(data, i) // the key: valid JSON puts a string here
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipJSONSpace(data, skipJSONSpace(data, end)+1) // past the colon
		end = jsonValueEnd(data, i)
		for k, want := range keys {
			if string(key) == want {
				vals[k] = data[i:end]
			}
		}
		if i = skipJSONSpace(data, end); i < len(data) && data[i] == ',' {
			i = skipJSONSpace(data, i+1)
		}
	}
	return true
}

func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// jsonValueEnd is the end of the value of valid JSON that starts at data[i].
func jsonValueEnd(data []byte, i int) int {
	depth := 0
	for ; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
			if depth < 0 {
				return i // a literal's end at its object's close
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// checkpointKeys are the fields of a checkpoint that Load reads.
var checkpointKeys = []string{"stage", "status", "timestamp_utc"}

func loadCheckpoints(run *model.Run, det *model.ResumableDetail, dir string, seen artifactListing) {
	names, ok := seen.names(dir)
	if !ok {
		names, _ = readDirNames(dir, maxDirEntries)
	}
	// Made at its length (the stages point into it, so it is not copied shorter later).
	n := 0
	for _, name := range names {
		if strings.HasSuffix(name, ".done.json") {
			n++
		}
	}
	// Their times too, one array, not an object each (issue 35; the stages' CompletedAt point into it).
	var stamps []time.Time
	if n > 0 {
		det.Checkpoints = make([]model.Checkpoint, 0, min(n, maxCheckpoints))
		stamps = make([]time.Time, 0, min(n, maxCheckpoints))
	}
	for _, name := range names {
		if !strings.HasSuffix(name, ".done.json") {
			continue
		}
		if len(det.Checkpoints) == maxCheckpoints {
			break
		}
		var doc [3]json.RawMessage // checkpointKeys
		if !readJSONFields(run, model.ChildPath(dir, name), maxCheckpointSize, checkpointKeys, doc[:]) {
			continue
		}
		// Its folder is the run's one string, and its name, a stage's key and a status recur across runs
		// (model.Intern).
		cp := model.CheckpointIn(dir, model.Intern(name))
		cp.Stage, cp.Status = model.Intern(jsonText(doc[0])), model.Intern(jsonText(doc[1]))
		if cp.Stage == "" {
			cp.Stage = model.Intern(strings.TrimSuffix(name, ".done.json"))
		}
		if t, ok := parseTime(jsonText(doc[2])); ok {
			stamps = append(stamps, t) // within its capacity: one a checkpoint at most
			cp.Timestamp = &stamps[len(stamps)-1]
		}
		det.Checkpoints = append(det.Checkpoints, cp)
	}
}

// ledgerLabel is record_phase_commit.py's stage_checkpoint: a sequence number, then one or more stage ids
// (C01-M2, C03-M4-M5).
var ledgerLabel = regexp.MustCompile(`^[Cc][0-9]+$`)

// LedgerStages returns the stage ids a ledger label names: the ids after the sequence number of C02-M3 or
// C03-M4-M5, else the label itself (a plain stage id such as S1).
func LedgerStages(label string) []string {
	label = strings.TrimSpace(label)
	parts := strings.Split(label, "-")
	if len(parts) > 1 && ledgerLabel.MatchString(parts[0]) {
		var out []string
		for _, p := range parts[1:] {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	if label == "" {
		return []string{}
	}
	return []string{label}
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
			Subject: jsonText(e["subject"]), File: path}
		row.Stages = LedgerStages(row.Checkpoint)
		if t, ok := parseTime(jsonText(e["timestamp_utc"])); ok {
			row.Timestamp = &t
		}
		det.Ledger = append(det.Ledger, row)
	}
}

// loadStageLedger reads the quality-remediation shape: {"schema_version":1, "stages": {"EQ0": {commit_shas[],
// changed_files[], metrics_delta{}, tests_run[], timestamp_utc}}}. Each commit becomes one row; a stage with
// no commit_shas still gets a row, since its entry says the stage was recorded.
func loadStageLedger(run *model.Run, det *model.ResumableDetail, path string) {
	var doc struct {
		Stages map[string]struct {
			SHAs      []json.RawMessage `json:"commit_shas"`
			Timestamp json.RawMessage   `json:"timestamp_utc"`
		} `json:"stages"`
	}
	if !readJSONObject(run, path, maxLedgerSize, &doc) {
		return
	}
	keys := make([]string, 0, len(doc.Stages))
	for k := range doc.Stages {
		keys = append(keys, k)
	}
	model.SortNatural(keys)
	for _, k := range keys {
		st := doc.Stages[k]
		var ts *time.Time
		if t, ok := parseTime(jsonText(st.Timestamp)); ok {
			ts = &t
		}
		shas := st.SHAs
		if len(shas) == 0 {
			shas = []json.RawMessage{nil}
		}
		for _, sha := range shas {
			if len(det.Ledger) >= maxLedgerRows {
				return
			}
			det.Ledger = append(det.Ledger, model.LedgerRow{Checkpoint: k, SHA: jsonText(sha), Timestamp: ts,
				Stages: []string{k}, File: path})
		}
	}
}

// readDirNames returns at most limit names of dir, sorted, and whether the directory held more.
func readDirNames(dir string, limit int) ([]string, bool) {
	entries, more, _ := readDirEntries(dir, limit)
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	return names, more
}

// readDirEntries is readDirNames with each entry's type, which the directory listing itself carries (d_type):
// a listing of thousands of artifacts then costs a few getdents calls instead of one lstat per file.
// whole is false when the folder could not be listed to its end (or at all), so nothing is known absent.
func readDirEntries(dir string, limit int) (entries []safefile.DirEntry, more, whole bool) {
	entries, err := safefile.ReadDir(dir, limit+1)
	more = len(entries) > limit
	if more {
		entries = entries[:limit]
	}
	safefile.SortByName(entries)
	return entries, more, err == nil
}

// artifactListing is what listArtifacts read: the files, and each folder's entries as listed.
type artifactListing struct {
	files []string
	dirs  map[string]listedDir
}

type listedDir struct {
	entries []safefile.DirEntry // sorted by name
	more    bool                // the folder held more than was listed
}

// names is dir's entry names as listed, sorted, if the listing read dir.
func (l artifactListing) names(dir string) ([]string, bool) {
	d, ok := l.dirs[dir]
	if !ok {
		return nil, false
	}
	names := make([]string, len(d.entries))
	for i, e := range d.entries {
		names[i] = e.Name
	}
	return names, true
}

// absent reports whether the listing proves path (a file below root) does not exist: some folder on the way
// down from root was listed whole and did not hold the next name. A folder not listed, or listed in part,
// proves nothing, and a name seen as a symlink is followed by whoever looks for the file.
func (l artifactListing) absent(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil || !filepath.IsLocal(rel) {
		return false
	}
	dir := root
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		d, ok := l.dirs[dir]
		if !ok || d.more {
			return false
		}
		i, found := sort.Find(len(d.entries), func(i int) int { return strings.Compare(name, d.entries[i].Name) })
		if !found {
			return true
		}
		if !d.entries[i].IsDir() {
			return false
		}
		dir = filepath.Join(dir, name)
	}
	return false
}

// listArtifacts lists files under root (relative, slash-separated), breadth-bounded and depth-bounded, without
// following symlinks. A listing that hit a bound ends with a line saying so. Without keepFiles only the
// folders' entries are kept.
func listArtifacts(root string, keepFiles bool) artifactListing {
	var out []string
	dirs := map[string]listedDir{}
	capped := false
	var walk func(dir, rel string, depth int)
	walk = func(dir, rel string, depth int) {
		entries, more, whole := readDirEntries(dir, maxDirEntries)
		dirs[dir] = listedDir{entries: entries, more: more || !whole}
		capped = capped || more
		for _, e := range entries {
			if len(out) >= maxArtifacts {
				capped = true
				return
			}
			name := e.Name
			r := name
			if rel != "" {
				r = rel + "/" + name
			}
			if e.IsDir() {
				if depth < maxArtifactDepth {
					walk(model.ChildPath(dir, name), r, depth+1)
				} else {
					capped = true
				}
				continue
			}
			out = append(out, r)
		}
	}
	walk(root, "", 1)
	if !keepFiles {
		return artifactListing{dirs: dirs}
	}
	if capped {
		out = append(out, fmt.Sprintf("… (listing stopped at %d files or %d levels)", maxArtifacts, maxArtifactDepth))
	}
	return artifactListing{files: model.PackStrings(out), dirs: dirs}
}
