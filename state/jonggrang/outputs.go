package jonggrang

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"runwatch/model"
	"runwatch/plural"
)

// outputName matches phase output files: a phase number, a dash, anything, .json (07-lead-plan.json). Agents
// choose the names and the numbering changed between versions, so the phase comes from inside the file.
var outputName = regexp.MustCompile(`^(\d{1,3}(?:\.\d+)?)-.+\.json$`)

// maxOutputFiles bounds how many phase output files one feature shows.
const maxOutputFiles = 500

// summaryItems bounds the per-role lists drawn into summary lines.
const summaryItems = 5

// outputHeader is the header every phase output file starts with (docs/FORMATS.md A.3).
type outputHeader struct {
	Phase     json.RawMessage `json:"phase"`
	Role      string          `json:"role"`
	TaskID    string          `json:"task_id"`
	AgentID   string          `json:"agent_id"`
	Timestamp json.RawMessage `json:"timestamp"`
	Status    string          `json:"status"`
	Error     json.RawMessage `json:"error"`
	Output    json.RawMessage `json:"output"`
}

func readPhaseOutputs(dir string, probs *problemSink) []model.PhaseOutput {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []model.PhaseOutput
	for _, e := range entries {
		if !outputName.MatchString(e.Name()) || e.IsDir() {
			continue
		}
		if out == nil {
			out = make([]model.PhaseOutput, 0, min(outputsIn(entries), maxOutputFiles))
		}
		if len(out) == maxOutputFiles {
			probs.add(model.SeverityInfo, model.CodeFileUnparsable, dir, "%s: more than %d phase output files; the rest are not shown", dir, maxOutputFiles)
			break
		}
		path := filepath.Join(dir, e.Name())
		data, _, err := readCapped(path, maxJSONBytes)
		if err != nil {
			probs.add(model.SeverityWarning, model.CodeFileUnparsable, path, "%s: cannot read: %v", path, err)
			continue
		}
		if po, ok := parseOutputFile(e.Name(), path, data, probs); ok {
			out = append(out, po)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Phase != out[j].Phase {
			return model.NumericLess(out[i].Phase, out[j].Phase)
		}
		return out[i].File < out[j].File
	})
	return orNil(out)
}

// outputsIn counts the phase output files among entries, for a list of the size it will be.
func outputsIn(entries []os.DirEntry) int {
	n := 0
	for _, e := range entries {
		if outputName.MatchString(e.Name()) && !e.IsDir() {
			n++
		}
	}
	return n
}

// parseOutputFile reads one phase output file's bytes. name is the file name, which supplies the phase when
// the header has none; path names the file in problems.
func parseOutputFile(name, path string, data []byte, probs *problemSink) (model.PhaseOutput, bool) {
	var h outputHeader
	if err := json.Unmarshal(data, &h); err != nil {
		probs.add(model.SeverityWarning, model.CodeFileUnparsable, path, "%s: not a phase output JSON object: %s", path, jsonErrText(err, data))
		return model.PhaseOutput{}, false
	}
	namePhase := ""
	if m := outputName.FindStringSubmatch(name); m != nil {
		namePhase = m[1]
	}
	po := model.PhaseOutput{File: name, Role: model.Intern(h.Role), TaskID: model.Intern(h.TaskID), AgentID: h.AgentID, Status: model.Intern(h.Status)}
	po.Phase = model.Intern(jsonNumberText(h.Phase))
	if po.Phase == "" && namePhase != "" {
		f, _ := strconv.ParseFloat(namePhase, 64)
		po.Phase = model.Intern(canonicalNumber(namePhase, f))
	}
	if t, ok := jsonTime(h.Timestamp); ok {
		po.Timestamp = &t
	}
	po.Error = jsonText(h.Error)
	p := payload{}
	if len(bytes.TrimSpace(h.Output)) > 0 && !isJSONNull(h.Output) {
		if err := json.Unmarshal(h.Output, &p); err != nil {
			probs.add(model.SeverityWarning, model.CodeFileUnparsable, path, "%s: output is not a JSON object", path)
		}
	}
	if po.Error == "" {
		po.Error = jsonText(p["error"])
	}
	switch strings.ToLower(h.Role) {
	case "lead":
		summarizeLead(&po, p)
	case "developer", "designer":
		summarizeDeveloper(&po, p)
	case "reviewer":
		summarizeReviewer(&po, p)
	case "tester", "test-lead":
		summarizeTester(&po, p)
	}
	if len(po.Summary) == 0 && len(p) > 0 {
		keys := make([]string, 0, len(p))
		for k := range p {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		po.Summary = append(po.Summary, "fields: "+strings.Join(limit(keys, 10), ", "))
	}
	return po, true
}

// payload is a role's free-form output object; each summarizer reads the fields it knows, leniently.
type payload map[string]json.RawMessage

func summarizeLead(po *model.PhaseOutput, p payload) {
	var tasks []map[string]json.RawMessage
	_ = json.Unmarshal(p["tasks"], &tasks)
	if len(tasks) > 0 {
		po.Summary = append(po.Summary, plural.Count(len(tasks), "task", "tasks")+" planned")
	}
	for i, t := range tasks {
		if i == summaryItems {
			po.Summary = append(po.Summary, fmt.Sprintf("… %d more", len(tasks)-i))
			break
		}
		line := strings.TrimSpace(jsonText(t["id"]) + ": " + jsonText(t["title"]))
		if files := textList(t["files"]); len(files) > 0 {
			line += " (" + strings.Join(limit(files, 3), ", ") + ")"
			po.FilesTouched = append(po.FilesTouched, files...)
		}
		if deps := textList(t["blocked_by"]); len(deps) > 0 {
			line += " after " + strings.Join(limit(deps, 3), ", ")
		}
		po.Summary = append(po.Summary, line)
	}
	if wt := jsonText(p["work_type"]); wt != "" {
		po.Summary = append(po.Summary, "work type "+wt)
	}
	if n := len(textList(p["risk_factors"])); n > 0 {
		po.Summary = append(po.Summary, plural.Count(n, "risk factor", "risk factors"))
	}
}

func summarizeDeveloper(po *model.PhaseOutput, p payload) {
	modified, created := textList(p["files_modified"]), textList(p["files_created"])
	if len(modified) > 0 {
		po.Summary = append(po.Summary, "modified: "+strings.Join(limit(modified, summaryItems), ", "))
	}
	if len(created) > 0 {
		po.Summary = append(po.Summary, "created: "+strings.Join(limit(created, summaryItems), ", "))
	}
	po.FilesTouched = append(append(po.FilesTouched, modified...), created...)
	if s := jsonText(p["summary"]); s != "" {
		po.Summary = append(po.Summary, truncate(s, 300))
	}
	if po.TaskID == "" {
		po.TaskID = jsonText(p["task_id"])
	}
}

func summarizeReviewer(po *model.PhaseOutput, p payload) {
	var approved bool
	if json.Unmarshal(p["approved"], &approved) == nil && len(p["approved"]) > 0 {
		po.Approved = &approved
	}
	po.RequiredFix = textList(p["required_fixes"])
	verdict := "verdict not recorded"
	if po.Approved != nil {
		verdict = map[bool]string{true: "approved", false: "changes requested"}[approved]
	}
	if score := jsonNumberText(p["score"]); score != "" {
		verdict += " (score " + score + ")"
	}
	po.Summary = append(po.Summary, verdict)
	if n := len(textList(p["violations"])); n > 0 {
		po.Summary = append(po.Summary, plural.Count(n, "violation", "violations"))
	}
	if n := len(textList(p["warnings"])); n > 0 {
		po.Summary = append(po.Summary, plural.Count(n, "warning", "warnings"))
	}
	if len(po.RequiredFix) > 0 {
		po.Summary = append(po.Summary, fmt.Sprintf("%d required fix(es): %s", len(po.RequiredFix), strings.Join(limit(po.RequiredFix, 3), "; ")))
	}
}

func summarizeTester(po *model.PhaseOutput, p payload) {
	var passedAll bool
	if json.Unmarshal(p["tests_passed"], &passedAll) == nil && len(p["tests_passed"]) > 0 {
		po.TestsPassed = &passedAll
	}
	po.FailedTests = textList(p["failed_tests"])
	total, passed, failed := jsonNumberText(p["total"]), jsonNumberText(p["passed"]), jsonNumberText(p["failed"])
	if total != "" || passed != "" || failed != "" {
		line := fmt.Sprintf("tests: %s passed, %s failed of %s", orQ(passed), orQ(failed), orQ(total))
		if cov := jsonNumberText(p["coverage"]); cov != "" {
			line += ", coverage " + cov
		}
		po.Summary = append(po.Summary, line)
	} else if po.TestsPassed != nil {
		po.Summary = append(po.Summary, map[bool]string{true: "tests passed", false: "tests failed"}[passedAll])
	}
	if len(po.FailedTests) > 0 {
		po.Summary = append(po.Summary, "failing: "+strings.Join(limit(po.FailedTests, summaryItems), ", "))
	}
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func limit(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), fmt.Sprintf("… %d more", len(s)-n))
}

// jsonText renders a JSON value for a person: strings as they are, other scalars as written, objects by a
// descriptive field (agents write fixes and failures as strings or as small objects).
func jsonText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isJSONNull(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return truncate(s, 1<<10)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		for _, k := range []string{"description", "message", "title", "name", "path", "file", "test", "issue", "fix", "id"} {
			if v := jsonText(obj[k]); v != "" {
				return v
			}
		}
	}
	return truncate(string(raw), 200)
}

func jsonNumberText(raw json.RawMessage) string {
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if f, err := strconv.ParseFloat(n.String(), 64); err == nil {
			return canonicalNumber(n.String(), f)
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		s = strings.TrimSpace(s)
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return canonicalNumber(s, f)
		}
		return truncate(s, 20)
	}
	return ""
}

// textList reads a list of strings or small objects; a lone string is a list of one.
func textList(raw json.RawMessage) []string {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		if s := jsonText(raw); s != "" && bytes.HasPrefix(bytes.TrimSpace(raw), []byte{'"'}) {
			return []string{s}
		}
		return nil
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		if s := jsonText(it); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// tasksFile is jonggrang-tasks.json: {"tasks":[...]}; a bare list is accepted too.
func readTasks(dir string, probs *problemSink) []model.Task {
	path := filepath.Join(dir, "jonggrang-tasks.json")
	var raw json.RawMessage
	if !readJSONFile(path, &raw, probs) {
		return nil
	}
	var list []map[string]json.RawMessage
	var wrapped struct {
		Tasks []map[string]json.RawMessage `json:"tasks"`
	}
	if json.Unmarshal(raw, &wrapped) == nil && wrapped.Tasks != nil {
		list = wrapped.Tasks
	} else if json.Unmarshal(raw, &list) != nil {
		probs.add(model.SeverityWarning, model.CodeFileUnparsable, path, "%s: expected {\"tasks\": [...]}", path)
		return nil
	}
	out := make([]model.Task, 0, len(list))
	for _, t := range list {
		out = append(out, model.Task{ID: jsonText(t["id"]), Title: jsonText(t["title"]), Status: model.Intern(jsonText(t["status"]))})
	}
	return out
}

// interruptedMarker starts the block the CLI appends to progress.txt when a run was cut off.
const interruptedMarker = "## Interrupted run ("

// readProgress returns the last lines of progress.txt and the times of the interrupted-run blocks found in
// the tail window. The file is append-only and can grow without bound, so only its end is read.
func readProgress(dir string, probs *problemSink) (tail []string, interruptions []time.Time) {
	path := filepath.Join(dir, "progress.txt")
	data, cut, err := readTail(path, maxProgressWindow)
	if err != nil {
		if !os.IsNotExist(err) {
			probs.add(model.SeverityWarning, model.CodeFileUnparsable, path, "%s: cannot read: %v", path, err)
		}
		return nil, nil
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if cut && len(lines) > 1 {
		lines = lines[1:] // the first line of a window that starts mid-file is partial
	}
	for _, l := range lines {
		if i := strings.Index(l, interruptedMarker); i >= 0 {
			rest := l[i+len(interruptedMarker):]
			if j := strings.IndexByte(rest, ')'); j > 0 {
				if t, ok := parseTime(rest[:j]); ok {
					interruptions = append(interruptions, t)
				}
			}
		}
	}
	if len(lines) > progressTailLines {
		lines = lines[len(lines)-progressTailLines:]
	}
	// The tail is cut from a copy of its own lines: cut from the window, each line kept all 64 KiB of it
	// alive for as long as the run is shown (issue 35).
	kept := strings.Split(strings.Join(lines, "\n"), "\n")
	tail = make([]string, 0, len(kept))
	for _, l := range kept {
		tail = append(tail, truncate(l, maxProgressLine))
	}
	if len(tail) == 1 && tail[0] == "" {
		tail = nil
	}
	return tail, interruptions
}
