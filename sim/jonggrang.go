package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// phaseDef is one row of jonggrang's PHASES table (current 17-phase numbering, plus the two fractional phases
// the plan doc adds when the feature has a UI).
type phaseDef struct {
	Key  string
	Num  float64
	Name string
	UI   bool // only when has_ui
}

var phaseTable = []phaseDef{
	{"1", 1, "setup", false}, {"2", 2, "triage", false}, {"3", 3, "codebase-discovery", false},
	{"4", 4, "skill-discovery", false}, {"5", 5, "complexity", false}, {"6", 6, "brainstorming", false},
	{"6.5", 6.5, "design-system", true}, {"7", 7, "architecting", false}, {"8", 8, "implementation", false},
	{"9", 9, "simplification", false}, {"10", 10, "design-verification", false},
	{"11", 11, "domain-compliance", false}, {"11.5", 11.5, "design-verify-ui", true},
	{"12", 12, "code-quality", false}, {"13", 13, "test-planning", false}, {"14", 14, "testing", false},
	{"15", 15, "coverage", false}, {"16", 16, "test-quality", false}, {"17", 17, "completion", false},
}

// skipMaps are the current code's per-work-type skipped phases.
var skipMaps = map[string]map[string]bool{
	"BUGFIX": {"5": true, "6": true, "7": true, "9": true, "10": true, "13": true},
	"SMALL":  {"5": true, "6": true, "7": true, "10": true},
}

// outputTrackingPhases get output_files entries (OUTPUT_TRACKING_PHASES).
var outputTrackingPhases = map[string]bool{"8": true, "12": true, "14": true}

// isoMS is JavaScript's Date.prototype.toISOString.
func isoMS(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

type manifest struct {
	FeatureID    string
	Description  string
	WorkType     string
	PipelineMode string
	HasUI        bool
	CreatedAt    string
	UpdatedAt    string
	Status       string
	CurrentPhase string // "" = null
	Phases       []*mPhase
	Agents       []*mAgent
	Validation   struct{ ReviewPassed, TestsPassed, CoverageMet bool }
	ContextUsage *float64
}

type mPhase struct {
	Def         phaseDef
	Status      string
	StartedAt   *string
	CompletedAt *string
	Output      yMap // nil = null
	OutputFiles []mOutputFile
	SkipReason  string
}

type mOutputFile struct {
	Path      string
	Type      string
	Size      *int64
	CreatedAt string
	AgentID   string
	TaskID    string
}

type mAgent struct {
	ID          string
	Role        string
	Status      string
	StartedAt   string
	LockedFiles []string
	CompletedAt *string
}

// newManifest is createManifest: every active phase pending, status running, current phase the first one.
// With more phases asked for than the work type has (Shape.Phases), filler phases go between test-quality
// and completion, numbered 16.011, 16.021… so that they sort there.
func newManifest(featureID, description, workType string, hasUI bool, at time.Time, phases int) *manifest {
	m := &manifest{
		FeatureID: featureID, Description: description, WorkType: workType, PipelineMode: "full", HasUI: hasUI,
		CreatedAt: isoMS(at), UpdatedAt: isoMS(at), Status: "running",
	}
	for _, d := range phaseTable {
		if skipMaps[workType][d.Key] || (d.UI && !hasUI) {
			continue
		}
		m.Phases = append(m.Phases, &mPhase{Def: d, Status: "pending"})
	}
	if extra := phases - len(m.Phases); extra > 0 {
		width := len(strconv.Itoa(extra))
		last := m.Phases[len(m.Phases)-1]
		filler := make([]*mPhase, 0, extra+1)
		for i := 1; i <= extra; i++ {
			// A final 1 keeps the key's spelling its number's (16.10 would read back as 16.1).
			key := fmt.Sprintf("16.%0*d1", width, i)
			num, _ := strconv.ParseFloat(key, 64)
			filler = append(filler, &mPhase{Def: phaseDef{Key: key, Num: num, Name: fmt.Sprintf("extra-check-%d", i)}, Status: "pending"})
		}
		m.Phases = append(append(m.Phases[:len(m.Phases)-1], filler...), last)
	}
	m.CurrentPhase = m.Phases[0].Def.Key
	return m
}

// featureID is the writer's id: a slug of the description (lowercase [a-z0-9-], at most 40 chars) plus "-"
// plus Date.now() in base 36.
func featureID(description string, at time.Time) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(description) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	slug := strings.TrimRight(b.String(), "-")
	if len(slug) > 40 {
		slug = strings.TrimRight(slug[:40], "-")
	}
	return slug + "-" + strconv.FormatInt(at.UnixMilli(), 36)
}

func (m *manifest) phase(key string) *mPhase {
	for _, p := range m.Phases {
		if p.Def.Key == key {
			return p
		}
	}
	return nil
}

func (m *manifest) agent(id string) *mAgent {
	for _, a := range m.Agents {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// nextPhase returns the active phase after key in numeric order, or "".
func (m *manifest) nextPhase(key string) string {
	for i, p := range m.activeInOrder() {
		if p.Def.Key == key {
			if rest := m.activeInOrder()[i+1:]; len(rest) > 0 {
				return rest[0].Def.Key
			}
		}
	}
	return ""
}

// activeInOrder is active_phases: the phases in numeric order (the table is already in numeric order).
func (m *manifest) activeInOrder() []*mPhase { return m.Phases }

func stamp(at time.Time) *string { s := isoMS(at); return &s }

func (m *manifest) startPhase(key string, at time.Time) {
	p := m.phase(key)
	p.Status, p.StartedAt, p.CompletedAt = "running", stamp(at), nil
	m.CurrentPhase = key
	m.UpdatedAt = isoMS(at)
}

// completePhase marks a phase completed and moves on; after the last active phase the run is completed and
// current_phase becomes null.
func (m *manifest) completePhase(key string, output yMap, at time.Time) {
	p := m.phase(key)
	p.Status, p.CompletedAt = "completed", stamp(at)
	if output != nil {
		p.Output = output
	}
	next := m.nextPhase(key)
	m.CurrentPhase = next
	if next == "" {
		m.Status = "completed"
	} else {
		m.Status = "running"
	}
	m.UpdatedAt = isoMS(at)
}

// failPhase records a failure reason in output.error; it also sets completed_at, as the writer does.
func (m *manifest) failPhase(key, reason string, at time.Time) {
	p := m.phase(key)
	p.Status, p.CompletedAt = "failed", stamp(at)
	p.Output = yMap{{"error", reason}}
	m.Status = "failed"
	m.CurrentPhase = key
	m.UpdatedAt = isoMS(at)
}

// registerAgent sets agents[id]. Like a JavaScript object assignment, registering an id again replaces the
// entry where it stands; it never adds a second key (YAML would then hold a duplicate key).
func (m *manifest) registerAgent(id, role string, files []string, at time.Time) {
	entry := &mAgent{ID: id, Role: role, Status: "running", StartedAt: isoMS(at), LockedFiles: files}
	m.UpdatedAt = isoMS(at)
	for i, a := range m.Agents {
		if a.ID == id {
			m.Agents[i] = entry
			return
		}
	}
	m.Agents = append(m.Agents, entry)
}

func (m *manifest) resolveAgent(id, status string, at time.Time) {
	if a := m.agent(id); a != nil {
		a.Status, a.CompletedAt = status, stamp(at)
	}
	m.UpdatedAt = isoMS(at)
}

func (m *manifest) addOutputFile(key string, f mOutputFile, at time.Time) {
	p := m.phase(key)
	for i := range p.OutputFiles {
		if p.OutputFiles[i].Path == f.Path {
			p.OutputFiles[i] = f
			m.UpdatedAt = isoMS(at)
			return
		}
	}
	p.OutputFiles = append(p.OutputFiles, f)
	m.UpdatedAt = isoMS(at)
}

// yaml builds the document in the writer's field order.
func (m *manifest) yaml() yMap {
	var current any
	if m.CurrentPhase != "" {
		current = m.phase(m.CurrentPhase).Def.Num
	}
	active := yList{}
	phases := yMap{}
	for _, p := range m.Phases {
		active = append(active, p.Def.Num)
		files := yList{}
		for _, f := range p.OutputFiles {
			entry := yMap{{"path", f.Path}, {"type", f.Type}, {"size", nil}, {"created_at", f.CreatedAt}}
			if f.Size != nil {
				entry[2].Value = *f.Size
			}
			if f.AgentID != "" {
				entry = append(entry, yKV{"agent_id", f.AgentID})
			}
			if f.TaskID != "" {
				entry = append(entry, yKV{"task_id", f.TaskID})
			}
			files = append(files, entry)
		}
		var output any
		if p.Output != nil {
			output = p.Output
		}
		entry := yMap{
			{"name", p.Def.Name}, {"status", p.Status}, {"started_at", p.StartedAt},
			{"completed_at", p.CompletedAt}, {"agent_id", nil}, {"output", output}, {"output_files", files},
		}
		if p.SkipReason != "" {
			entry = append(entry, yKV{"skip_reason", p.SkipReason})
		}
		phases = append(phases, yKV{p.Def.Key, entry})
	}
	agents := yMap{}
	for _, a := range m.Agents {
		files := yList{}
		for _, f := range a.LockedFiles {
			files = append(files, f)
		}
		entry := yMap{{"role", a.Role}, {"status", a.Status}, {"started_at", a.StartedAt}, {"output_path", nil}, {"locked_files", files}}
		if a.CompletedAt != nil {
			entry = append(entry, yKV{"completed_at", *a.CompletedAt})
		}
		agents = append(agents, yKV{a.ID, entry})
	}
	var usage any
	if m.ContextUsage != nil {
		usage = *m.ContextUsage
	}
	return yMap{
		{"feature_id", m.FeatureID}, {"description", m.Description}, {"work_type", m.WorkType},
		{"pipeline_mode", m.PipelineMode}, {"has_ui", m.HasUI},
		{"created_at", m.CreatedAt}, {"updated_at", m.UpdatedAt}, {"status", m.Status},
		{"current_phase", current}, {"active_phases", active}, {"phases", phases}, {"agents", agents},
		{"validation", yMap{
			{"review_passed", m.Validation.ReviewPassed}, {"tests_passed", m.Validation.TestsPassed},
			{"coverage_met", m.Validation.CoverageMet},
		}},
		{"locks", yList{}}, {"context_usage", usage},
	}
}

// write is writeManifest: mkdir -p, dump with lineWidth -1, and a plain whole-file write. Not atomic, on
// purpose: readers must cope with seeing a half-written manifest, as they must with the real writer.
func (m *manifest) write(featureDir string) error {
	data, err := dumpYAML(m.yaml())
	if err != nil {
		return fmt.Errorf("manifest %s: %w", m.FeatureID, err)
	}
	if err := os.MkdirAll(featureDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(featureDir, "MANIFEST.yaml"), data, 0o644)
}

// agentLock is the lock module's file: JSON.stringify({agent_id, files, acquired_at, pid}, null, 2).
type agentLock struct {
	AgentID    string   `json:"agent_id"`
	Files      []string `json:"files"`
	AcquiredAt string   `json:"acquired_at"`
	PID        int      `json:"pid"`
}

func agentLockPath(projectRoot, agentID string) string {
	return filepath.Join(projectRoot, ".jonggrang", "locks", agentID+".lock")
}

func writeAgentLock(projectRoot string, l agentLock) error {
	data, err := jsonStringify(l)
	if err != nil {
		return err
	}
	path := agentLockPath(projectRoot, l.AgentID)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func releaseAgentLock(projectRoot, agentID string) error {
	err := os.Remove(agentLockPath(projectRoot, agentID))
	if os.IsNotExist(err) {
		// Someone (a person, or runwatch's unlock) already cleared it; the release is done either way.
		return nil
	}
	return err
}

// phaseOutput is an NN-<role>-<suffix>.json file: the skill's header followed by the role payload.
type phaseOutput struct {
	JonggrangOutput bool    `json:"jonggrang-output"`
	FeatureID       string  `json:"feature_id"`
	Phase           float64 `json:"phase"`
	Role            string  `json:"role"`
	TaskID          *string `json:"task_id"`
	AgentID         string  `json:"agent_id"`
	Timestamp       string  `json:"timestamp"`
	Status          string  `json:"status"`
	Output          any     `json:"output"`
}

// phaseOutputName is {NN}-{role}-{suffix}.json with a two-digit phase number.
func phaseOutputName(phaseNum float64, role, suffix string) string {
	return fmt.Sprintf("%02d-%s-%s.json", int(phaseNum), role, suffix)
}

func writeJSONFile(path string, v any) (int64, error) {
	data, err := jsonStringify(v)
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return 0, err
	}
	return int64(len(data)), nil
}

// tasksBoard is jonggrang-tasks.json.
type tasksBoard struct {
	Tasks []boardTask `json:"tasks"`
}

type boardTask struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Status    string `json:"status"`
	FeatureID string `json:"feature_id"`
}
