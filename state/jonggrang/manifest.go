package jonggrang

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"runwatch/model"
)

// nodeBudget bounds how many YAML nodes one manifest read may visit. Decoding into yaml.Node does not
// expand aliases, but following them while reading does: a few aliases to a large list, repeated, would
// otherwise cost time quadratic in the file size. A real manifest visits a few thousand nodes.
const nodeBudget = 1_000_000

// manifest is what MANIFEST.yaml says, read field by field from a yaml.Node tree.
type manifest struct {
	FeatureID    string
	Description  string
	WorkType     string
	PipelineMode string
	HasUI        bool
	Status       string
	CreatedAt    *time.Time
	UpdatedAt    *time.Time
	// CreatedText and UpdatedText are those times as written (model.TimeText).
	CreatedText, UpdatedText string
	// CurrentPhase is the phase number as written ("" when null or absent).
	CurrentPhase string
	ActivePhases []string
	// PhasesPresent is false when the manifest has no phases field at all.
	PhasesPresent bool
	Phases        []model.Stage
	Agents        []model.Agent
	Validation    []model.Flag
	ContextUsage  *float64
	// AgentsPresent and ValidationPresent say whether those keys are in the file at all: the writer always
	// writes both, so their absence marks a torn read (see TornReasons).
	AgentsPresent     bool
	ValidationPresent bool

	notes []note
}

// note is something the reader found wrong with a field; it becomes a problem on the run.
type note struct {
	sev  model.Severity
	code string
	msg  string
}

// syntaxError is a manifest that YAML itself rejects (what a torn write looks like).
type syntaxError struct{ err error }

func (e *syntaxError) Error() string { return e.err.Error() }

// knownRunStatus are the run status values the convention writes or reads (docs/FORMATS.md A.2).
var knownRunStatus = map[string]bool{"running": true, "completed": true, "failed": true, "in_progress": true, "paused": true}

// knownPhaseStatus maps phase status words to the model. in_progress is the run-level word for running.
var knownPhaseStatus = map[string]model.StageStatus{
	"pending": model.StagePending, "running": model.StageRunning, "completed": model.StageCompleted,
	"failed": model.StageFailed, "skipped": model.StageSkipped,
}

// manifestParses counts parseManifest calls, for the test that a feature's read takes its sibling parse.
var manifestParses atomic.Int64

// parseManifest reads MANIFEST.yaml bytes. It returns a *syntaxError when the bytes are not YAML; every
// other oddity (wrong types, unknown values, extra documents) is a note on the returned manifest.
func parseManifest(data []byte) (*manifest, error) {
	manifestParses.Add(1)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &syntaxError{errors.New("the file holds no YAML document (empty)")}
		}
		return nil, &syntaxError{err}
	}
	r := &nodeReader{budget: nodeBudget}
	m := &manifest{}
	// js-yaml load (the convention's reader) rejects a stream of several documents, so the writer would
	// treat this manifest as absent; we still show the first document.
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		r.errorf("the file holds several YAML documents (another starts at line %d); the convention's reader rejects it, only the first is shown", extra.Line)
	case !errors.Is(err, io.EOF):
		r.errorf("after the first YAML document: %v", err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	root = r.resolve(root)
	if root == nil || root.Kind != yaml.MappingNode {
		r.errorf("the top level is %s, not a mapping of fields", kindName(root))
		m.notes = r.notes
		return m, nil
	}
	r.readTop(m, root)
	if r.exhausted {
		// First, past the note cap: this explains every oddity after it.
		r.notes = append([]note{{model.SeverityError, model.CodeManifestInvalid,
			fmt.Sprintf("the document is too complex to read (more than %d nodes visited, aliases included); fields after that point are missing", nodeBudget)}}, r.notes...)
	}
	r.keepError()
	m.notes = r.notes
	return m, nil
}

// nodeReader walks a manifest's node tree with a visit budget, collecting notes.
type nodeReader struct {
	budget    int
	exhausted bool
	notes     []note
	hadError  bool
	// said holds the notes already made: an alias repeats the node it points at, and with it every mistake
	// in that node, which is one mistake to report.
	said map[note]bool
	// texts holds the ids, paths and times' texts read so far: a manifest spells an agent's id, a file's
	// path or a time several times (the agent, the files it wrote, the locks it holds), and the run keeps one
	// copy of each (issue 35).
	texts map[string]string
}

// once is s, spelled as the manifest spelled it first.
func (r *nodeReader) once(s string) string {
	if s == "" {
		return ""
	}
	if t, ok := r.texts[s]; ok {
		return t
	}
	if r.texts == nil {
		r.texts = map[string]string{}
	}
	r.texts[s] = s
	return s
}

// maxNotes bounds the problems one manifest can raise: a hostile file repeating one mistake (or aliasing
// it) should produce a readable list, not thousands of lines.
const maxNotes = 50

func (r *nodeReader) add(n note) {
	if r.said[n] {
		return
	}
	if r.said == nil {
		r.said = map[note]bool{}
	}
	r.said[n] = true
	switch {
	case len(r.notes) < maxNotes:
		r.notes = append(r.notes, n)
	case len(r.notes) == maxNotes:
		r.notes = append(r.notes, note{model.SeverityWarning, model.CodeManifestInvalid,
			fmt.Sprintf("more than %d problems in this manifest; the rest are not listed", maxNotes)})
	}
	if n.sev == model.SeverityError {
		// An error must survive the cap: it decides whether the run is blocked.
		r.hadError = true
	}
}

func (r *nodeReader) errorf(format string, args ...any) {
	r.add(note{model.SeverityError, model.CodeManifestInvalid, fmt.Sprintf(format, args...)})
}

func (r *nodeReader) warnf(format string, args ...any) {
	if r.exhausted {
		return // fields cut short by the budget, already explained
	}
	r.add(note{model.SeverityWarning, model.CodeManifestInvalid, fmt.Sprintf(format, args...)})
}

// keepError makes sure an error dropped by the note cap is still reported.
func (r *nodeReader) keepError() {
	if !r.hadError {
		return
	}
	for _, n := range r.notes {
		if n.sev == model.SeverityError {
			return
		}
	}
	r.notes = append(r.notes, note{model.SeverityError, model.CodeManifestInvalid, "the manifest has errors beyond the listed problems"})
}

// visit charges one node against the budget; false once it is spent.
func (r *nodeReader) visit() bool {
	if r.budget <= 0 {
		r.exhausted = true
		return false
	}
	r.budget--
	return true
}

// resolve follows aliases (an anchor cannot contain itself, so this ends) and charges the budget.
func (r *nodeReader) resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		if !r.visit() {
			return nil
		}
		n = n.Alias
	}
	if n == nil || !r.visit() {
		return nil
	}
	return n
}

// pair is one key/value of a mapping node.
type pair struct {
	key  string
	line int
	val  *yaml.Node
}

// pairs lists a mapping's entries. Keys that are not scalars are reported and skipped.
func (r *nodeReader) pairs(n *yaml.Node, where string) []pair {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]pair, 0, len(n.Content)/2)
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := r.resolve(n.Content[i])
		if k == nil {
			return out
		}
		if k.Kind != yaml.ScalarNode {
			r.warnf("%s: line %d: a key is a %s, not a name; entry ignored", where, k.Line, kindName(k))
			continue
		}
		// js-yaml refuses the whole file for a duplicate key at any depth, so the convention's own reader
		// would see no manifest at all: that is an error here too, wherever it is.
		if first, dup := seen[k.Value]; dup {
			r.errorf("%s: %q is defined twice (lines %d and %d); the convention's reader rejects duplicate keys",
				where, truncate(k.Value, 60), first, k.Line)
		} else {
			seen[k.Value] = k.Line
		}
		out = append(out, pair{key: k.Value, line: k.Line, val: n.Content[i+1]})
	}
	return out
}

// items lists a sequence's entries.
func (r *nodeReader) items(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]*yaml.Node, 0, len(n.Content))
	for _, c := range n.Content {
		c = r.resolve(c)
		if c == nil {
			break
		}
		out = append(out, c)
	}
	return out
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func kindName(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		return "scalar"
	case yaml.DocumentNode:
		return "document"
	}
	return "alias"
}

// str reads a scalar as text; null gives "". Other kinds are reported.
func (r *nodeReader) str(n *yaml.Node, field string) string {
	n = r.resolve(n)
	if isNull(n) {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		r.warnf("%s: line %d: expected text, found a %s", field, n.Line, kindName(n))
		return ""
	}
	return n.Value
}

func (r *nodeReader) boolean(n *yaml.Node, field string) (value, ok bool) {
	n = r.resolve(n)
	if isNull(n) {
		return false, false
	}
	if n.Kind == yaml.ScalarNode {
		switch strings.ToLower(n.Value) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	r.warnf("%s: line %d: expected true or false, found %s", field, n.Line, describe(n))
	return false, false
}

// number reads a numeric scalar as its canonical decimal text ("8", "6.5") and value.
func (r *nodeReader) number(n *yaml.Node, field string) (string, float64, bool) {
	n = r.resolve(n)
	if isNull(n) {
		return "", 0, false
	}
	if n.Kind == yaml.ScalarNode {
		if f, err := strconv.ParseFloat(strings.TrimSpace(n.Value), 64); err == nil {
			return canonicalNumber(n.Value, f), f, true
		}
	}
	r.warnf("%s: line %d: expected a number, found %s", field, n.Line, describe(n))
	return "", 0, false
}

// canonicalNumber spells a phase number the way js-yaml writes keys ('8', '6.5'), so current_phase: 8.0
// and key '8' meet.
func canonicalNumber(text string, f float64) string {
	if f == float64(int64(f)) && f > -1e15 && f < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	if strings.ContainsAny(text, "eE") || len(text) > 32 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strings.TrimSpace(text)
}

// timestamp reads a quoted ISO string, an unquoted YAML timestamp, an epoch number, or null.
func (r *nodeReader) timestamp(n *yaml.Node, field string) *time.Time {
	n = r.resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		if t, ok := parseTime(n.Value); ok {
			return &t
		}
	}
	r.warnf("%s: line %d: %s is not a timestamp", field, n.Line, describe(n))
	return nil
}

// timestampText is timestamp with the text as written, when that text can stand for the time in JSON.
func (r *nodeReader) timestampText(n *yaml.Node, field string) (*time.Time, string) {
	t := r.timestamp(n, field)
	if t == nil {
		return nil, ""
	}
	if n = r.resolve(n); n == nil {
		return t, ""
	}
	return t, r.once(model.TimeText(*t, strings.TrimSpace(n.Value)))
}

// expect resolves n and returns it when it is of the wanted kind. Null gives nil quietly (the writers use
// null for "none"); any other kind gives nil and a warning naming the field.
func (r *nodeReader) expect(n *yaml.Node, kind yaml.Kind, field, what string) *yaml.Node {
	n = r.resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != kind {
		r.warnf("%s: line %d: expected %s, found %s", field, n.Line, what, describe(n))
		return nil
	}
	return n
}

func (r *nodeReader) strings(n *yaml.Node, field string) []string {
	if n = r.expect(n, yaml.SequenceNode, field, "a list"); n == nil {
		return nil
	}
	var out []string
	for _, it := range r.items(n) {
		if s := r.once(r.str(it, field)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// orNil is s, or nil when it is empty: a list made with room for what a field holds, none of it usable,
// reads as no list (null in JSON), as one appended to from nil did.
func orNil[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}

// describe names a node for a message without copying much of an untrusted file into it.
func describe(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	if n.Kind == yaml.ScalarNode {
		return strconv.Quote(truncate(n.Value, 60))
	}
	return "a " + kindName(n)
}

func (r *nodeReader) readTop(m *manifest, root *yaml.Node) {
	for _, p := range r.pairs(root, "MANIFEST") {
		switch p.key {
		case "feature_id":
			m.FeatureID = r.str(p.val, p.key)
		case "description":
			m.Description = r.str(p.val, p.key)
		case "work_type":
			m.WorkType = model.Intern(r.str(p.val, p.key))
		case "pipeline_mode":
			m.PipelineMode = model.Intern(r.str(p.val, p.key))
		case "has_ui":
			m.HasUI, _ = r.boolean(p.val, p.key)
		case "status":
			m.Status = model.Intern(r.str(p.val, p.key))
		case "created_at":
			m.CreatedAt, m.CreatedText = r.timestampText(p.val, p.key)
		case "updated_at":
			m.UpdatedAt, m.UpdatedText = r.timestampText(p.val, p.key)
		case "current_phase":
			m.CurrentPhase, _, _ = r.number(p.val, p.key)
		case "active_phases":
			m.ActivePhases = r.activePhases(p.val)
		case "phases":
			m.PhasesPresent = true
			m.Phases = r.phases(p.val)
		case "agents":
			m.AgentsPresent = true
			m.Agents = r.agents(p.val)
		case "validation":
			m.ValidationPresent = true
			m.Validation = r.validation(p.val)
		case "context_usage":
			if _, f, ok := r.number(p.val, p.key); ok {
				m.ContextUsage = &f
			}
		}
	}
	if m.Status == "" {
		r.warnf("the manifest has no status")
	}
}

func (r *nodeReader) activePhases(n *yaml.Node) []string {
	if n = r.expect(n, yaml.SequenceNode, "active_phases", "a list of phase numbers"); n == nil {
		return nil
	}
	items := r.items(n)
	out := make([]string, 0, len(items))
	for _, it := range items {
		if s, _, ok := r.number(it, "active_phases"); ok {
			out = append(out, model.Intern(s))
		}
	}
	return orNil(out)
}

// phases reads the phases map ('<num>' → entry) and returns its stages in numeric order. js-yaml writes
// integer-like keys first, so '6.5' comes after '17' in the file.
func (r *nodeReader) phases(n *yaml.Node) []model.Stage {
	n = r.resolve(n)
	switch {
	case isNull(n):
		return nil
	case n.Kind == yaml.SequenceNode:
		return r.phaseList(n)
	case n.Kind != yaml.MappingNode:
		r.errorf("phases: line %d: expected a mapping of phase number to phase, found %s", n.Line, describe(n))
		return nil
	}
	byKey := map[string]model.Stage{}
	var keys []string
	for _, p := range r.pairs(n, "phases") {
		key := strings.TrimSpace(p.key)
		if _, err := strconv.ParseFloat(key, 64); err != nil {
			r.warnf("phases: line %d: key %q is not a phase number", p.line, truncate(key, 60))
		}
		if _, dup := byKey[key]; !dup { // pairs reported the duplicate; the later entry wins, as in the file
			keys = append(keys, key)
		}
		byKey[key] = r.phase(key, p.val)
	}
	model.SortNumericKeys(keys)
	out := make([]model.Stage, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

// phaseList reads phases written as a list, which the convention never does (its code indexes a map), so
// it is an error; the entries are still shown, keyed by their own number field or their position.
func (r *nodeReader) phaseList(n *yaml.Node) []model.Stage {
	r.errorf("phases: line %d: phases is a list; the convention writes a mapping keyed by phase number ('1', '6.5')", n.Line)
	var keys []string
	byKey := map[string]model.Stage{}
	for i, it := range r.items(n) {
		key := strconv.Itoa(i + 1)
		for _, p := range r.pairs(it, "phases") {
			if p.key == "number" || p.key == "phase" || p.key == "id" || p.key == "key" {
				if s, _, ok := r.number(p.val, "phases[]."+p.key); ok {
					key = s
				}
			}
		}
		if _, dup := byKey[key]; !dup {
			keys = append(keys, key)
		}
		byKey[key] = r.phase(key, it)
	}
	model.SortNumericKeys(keys)
	out := make([]model.Stage, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

func (r *nodeReader) phase(key string, n *yaml.Node) model.Stage {
	st := model.Stage{Key: model.Intern(key), Status: model.StagePending}
	where := fmt.Sprintf("phases.'%s'", truncate(key, 20))
	n = r.resolve(n)
	if isNull(n) {
		r.warnf("%s is empty", where)
		return st
	}
	if n.Kind != yaml.MappingNode {
		r.warnf("%s: line %d: expected a phase entry, found %s", where, n.Line, describe(n))
		return st
	}
	statusSeen := false
	var rare model.StageRare
	for _, p := range r.pairs(n, where) {
		field := where + "." + p.key
		switch p.key {
		case "name":
			st.Name = model.Intern(r.str(p.val, field))
		case "status":
			statusSeen = true
			raw := r.str(p.val, field)
			rare.RawStatus = raw
			if s, ok := knownPhaseStatus[strings.ToLower(strings.TrimSpace(raw))]; ok {
				st.Status = s
			} else if strings.EqualFold(strings.TrimSpace(raw), "in_progress") {
				st.Status = model.StageRunning
			} else {
				r.add(note{model.SeverityWarning, model.CodeUnknownStatus,
					fmt.Sprintf("%s: line %d: unknown phase status %s; shown as pending", where, p.line, strconv.Quote(truncate(raw, 60)))})
			}
		case "started_at":
			st.StartedAt, rare.StartedText = r.timestampText(p.val, field)
		case "completed_at":
			st.CompletedAt, rare.CompletedText = r.timestampText(p.val, field)
		case "output":
			rare.Error = r.outputError(p.val, field)
		case "output_files":
			rare.OutputFiles = r.outputFiles(p.val, field)
		case "skip_reason":
			rare.SkipReason = r.str(p.val, field)
		}
	}
	if !statusSeen {
		r.warnf("%s has no status; shown as pending", where)
	}
	if rare.RawStatus != "" && knownPhaseStatus[rare.RawStatus] != "" {
		// The raw word only matters when it says something the model's status does not.
		rare.RawStatus = ""
	}
	st.SetRare(rare)
	return st
}

// outputError takes output.error from the free-form output map (failPhase writes {error: <reason>}).
func (r *nodeReader) outputError(n *yaml.Node, field string) string {
	n = r.resolve(n)
	if isNull(n) || n.Kind != yaml.MappingNode {
		return ""
	}
	for _, p := range r.pairs(n, field) {
		if p.key != "error" {
			continue
		}
		v := r.resolve(p.val)
		switch {
		case isNull(v):
			return ""
		case v.Kind == yaml.ScalarNode:
			return truncate(v.Value, 4<<10)
		default:
			// A structured error: show it as YAML flow text. Encoding a node does not expand aliases.
			flow := *v
			flow.Style = yaml.FlowStyle
			b, err := yaml.Marshal(&flow)
			if err != nil {
				return "(unreadable error value)"
			}
			return truncate(strings.TrimSpace(string(b)), 4<<10)
		}
	}
	return ""
}

func (r *nodeReader) outputFiles(n *yaml.Node, field string) []model.OutputFile {
	if n = r.expect(n, yaml.SequenceNode, field, "a list"); n == nil {
		return nil
	}
	items := r.items(n)
	if len(items) == 0 {
		return nil
	}
	out := make([]model.OutputFile, 0, len(items))
	for _, it := range items {
		if it.Kind == yaml.ScalarNode && !isNull(it) {
			// A bare path is a plausible hand-written shorthand.
			out = append(out, model.OutputFile{Path: r.once(it.Value)})
			continue
		}
		var f model.OutputFile
		for _, p := range r.pairs(it, field) {
			sub := field + "." + p.key
			switch p.key {
			case "path":
				f.Path = r.once(r.str(p.val, sub))
			case "type":
				f.Type = model.Intern(r.str(p.val, sub))
			case "size":
				if _, v, ok := r.number(p.val, sub); ok && v >= 0 && v < 1<<62 {
					size := int64(v)
					f.Size = &size
				}
			case "created_at":
				f.CreatedAt, f.CreatedText = r.timestampText(p.val, sub)
			case "agent_id":
				f.AgentID = r.once(r.str(p.val, sub))
			case "task_id":
				f.TaskID = model.Intern(r.str(p.val, sub))
			}
		}
		if f.Path == "" {
			r.warnf("%s: line %d: an entry has no path", field, it.Line)
			continue
		}
		out = append(out, f)
	}
	return orNil(out)
}

func (r *nodeReader) agents(n *yaml.Node) []model.Agent {
	if n = r.expect(n, yaml.MappingNode, "agents", "a mapping of agent id to agent"); n == nil {
		return nil
	}
	pairs := r.pairs(n, "agents")
	out := make([]model.Agent, 0, len(pairs))
	for _, p := range pairs {
		a := model.Agent{ID: r.once(p.key)}
		where := "agents." + truncate(p.key, 60)
		for _, f := range r.pairs(r.resolve(p.val), where) {
			field := where + "." + f.key
			switch f.key {
			case "role":
				a.Role = model.Intern(r.str(f.val, field))
			case "status":
				a.Status = model.Intern(r.str(f.val, field))
			case "started_at":
				a.StartedAt, a.StartedText = r.timestampText(f.val, field)
			case "completed_at":
				a.CompletedAt, a.CompletedText = r.timestampText(f.val, field)
			case "locked_files":
				a.LockedFiles = r.strings(f.val, field)
			}
		}
		out = append(out, a)
	}
	return orNil(out)
}

func (r *nodeReader) validation(n *yaml.Node) []model.Flag {
	if n = r.expect(n, yaml.MappingNode, "validation", "a mapping of flags"); n == nil {
		return nil
	}
	pairs := r.pairs(n, "validation")
	out := make([]model.Flag, 0, len(pairs))
	for _, p := range pairs {
		v, ok := r.boolean(p.val, "validation."+p.key)
		f := model.Flag{Group: model.FlagGroupValidation, Name: model.Intern(p.key), Value: v}
		if !ok {
			if s := r.resolve(p.val); s != nil && s.Kind == yaml.ScalarNode {
				f.Raw = truncate(s.Value, 60)
			}
		}
		out = append(out, f)
	}
	return orNil(out)
}
