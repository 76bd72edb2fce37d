package sim

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// AwaitingInputReason is what the jonggrang CLI records when phase 6 brainstorming stops for a person.
const AwaitingInputReason = "Awaiting human input (brainstorming)"

// feature is what a jonggrang run works on: its description and the source files its tasks touch.
type feature struct {
	Description string
	WorkType    string
	HasUI       bool
	Topic       string // used in agent ids: developer-<topic>-001
	Tasks       []featureTask
}

type featureTask struct {
	ID, Title string
	Files     []string
}

// jonggrangActor is the jonggrang CLI working through a feature: each step is one of the manifest functions of
// lib/orchestration.js (startPhase, registerAgent, addOutputFile, resolveAgent, completePhase, failPhase), an
// agent's lock file created or deleted, or an agent writing its phase output file. The real functions re-read
// the manifest each time; the simulator keeps it in memory and rewrites it whole, and of what others write it
// honours only a pause (status: paused), so a person's other edits to this run are overwritten at the next
// step, as they would be by a writer that takes no lock.
type jonggrangActor struct {
	project string
	feat    feature
	rng     *rand.Rand
	pid     int
	live    bool // in a live simulation, wait while the manifest on disk says paused
	// batch skips the manifest rewrites between steps (flush writes the final state): generating a thousand
	// runs must not cost a hundred rewrites each.
	batch bool
	// phases is Shape.Phases: the manifest's phase count, if more than the work type's.
	phases int

	// stopAt, when set, fails that phase with stopReason and ends the actor (phase 6: a human pause).
	stopAt, stopReason string

	m   *manifest
	dir string
	steps
}

func (a *jonggrangActor) manifestPath() string { return filepath.Join(a.dir, "MANIFEST.yaml") }

func (a *jonggrangActor) step(at time.Time) (time.Duration, bool, error) {
	if !a.ended && a.live && a.m != nil && a.pausedOnDisk() {
		return 0, false, errHeld
	}
	return a.next(at, a.planNext)
}

// pausedOnDisk reads the manifest's status: the jonggrang loop stops while a run is paused. A manifest that
// does not parse (half-written by someone) does not stop us.
func (a *jonggrangActor) pausedOnDisk() bool {
	data, err := os.ReadFile(a.manifestPath())
	if err != nil {
		return false
	}
	var head struct {
		Status string `yaml:"status"`
	}
	if yaml.Unmarshal(data, &head) != nil {
		return false
	}
	return head.Status == "paused"
}

func (a *jonggrangActor) save() error {
	if a.batch {
		return nil
	}
	return a.m.write(a.dir)
}

func (a *jonggrangActor) flush() error {
	if a.m == nil {
		return nil
	}
	return a.m.write(a.dir)
}

func (a *jonggrangActor) planNext() {
	switch {
	case a.m == nil:
		a.then(a.create)
	case a.m.Status == "completed" || a.m.Status == "failed" || a.m.CurrentPhase == "":
		a.ended = true
	default:
		a.planPhase(a.m.CurrentPhase)
	}
}

func (a *jonggrangActor) create(at time.Time) (time.Duration, error) {
	fid := featureID(a.feat.Description, at)
	a.dir = filepath.Join(a.project, ".jonggrang", ".output", "features", fid)
	a.m = newManifest(fid, a.feat.Description, a.feat.WorkType, a.feat.HasUI, at, a.phases)
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return 0, err
	}
	if err := a.save(); err != nil {
		return 0, err
	}
	return time.Second, a.progress(fmt.Sprintf("# %s\n\nStarted %s (%s).\n", a.feat.Description, isoMS(at), a.feat.WorkType))
}

func (a *jonggrangActor) progress(text string) error {
	return appendFile(filepath.Join(a.dir, "progress.txt"), text)
}

// jitter spreads durations by ±25% so runs do not move in lockstep; the rng is seeded, so it is repeatable.
func (a *jonggrangActor) jitter(d time.Duration) time.Duration {
	return d*3/4 + time.Duration(a.rng.Int64N(int64(d)/2+1))
}

func (a *jonggrangActor) planPhase(key string) {
	p := a.m.phase(key)
	a.then(func(at time.Time) (time.Duration, error) {
		a.m.startPhase(key, at)
		grow := 0.01 + a.rng.Float64()*0.03
		if heavyPhases[key] {
			grow += 0.05
		}
		a.bumpContext(grow)
		if err := a.writeCompactionState(at); err != nil {
			return 0, err
		}
		return a.jitter(1200 * time.Millisecond), a.save()
	})
	if key == a.stopAt {
		a.then(func(at time.Time) (time.Duration, error) {
			a.m.failPhase(key, a.stopReason, at)
			if err := a.save(); err != nil {
				return 0, err
			}
			a.ended = true
			return 0, a.progress(fmt.Sprintf("- %s: %s\n", p.Def.Name, a.stopReason))
		})
		return
	}
	var output yMap
	switch key {
	case "1":
		output = yMap{{"manifest_path", a.manifestPath()}}
	case "2":
		output = yMap{{"work_type", a.feat.WorkType}}
	case "7":
		a.planLead(key)
	case "8":
		a.planDevelopers(key)
	case "10":
		a.planReviewer(key, "design-check", false)
	case "12":
		a.planReviewer(key, "code-quality", true)
	case "13":
		a.planTestLead(key)
	case "14":
		a.planTester(key)
	}
	a.then(func(at time.Time) (time.Duration, error) {
		switch key {
		case "12":
			a.m.Validation.ReviewPassed = true
		case "14":
			a.m.Validation.TestsPassed = true
		case "15":
			a.m.Validation.CoverageMet = true
		}
		a.m.completePhase(key, output, at)
		if err := a.save(); err != nil {
			return 0, err
		}
		return a.jitter(800 * time.Millisecond), a.progress(fmt.Sprintf("- phase %s %s completed at %s\n", key, p.Def.Name, isoMS(at)))
	})
}

// heavyPhases get a compaction check before they start (current code).
var heavyPhases = map[string]bool{"3": true, "8": true, "9": true, "14": true}

func (a *jonggrangActor) bumpContext(by float64) {
	u := 0.05
	if a.m.ContextUsage != nil {
		u = *a.m.ContextUsage
	}
	u += by
	if u > 0.84 {
		// The session compacted its context rather than let the gate block.
		u = 0.3
	}
	// Two decimals, as the context gate reports a rounded ratio.
	u = float64(int(u*100+0.5)) / 100
	a.m.ContextUsage = &u
}

func (a *jonggrangActor) agentID(role string, n int) string {
	return fmt.Sprintf("%s-%s-%03d", role, a.feat.Topic, n)
}

// nextAgentID numbers a role's agents across the run: the design check and the code-quality review are two
// reviewers, reviewer-<topic>-001 and -002.
func (a *jonggrangActor) nextAgentID(role string) string {
	n := 1
	for _, ag := range a.m.Agents {
		if ag.Role == role {
			n++
		}
	}
	return a.agentID(role, n)
}

// runAgent queues an agent's life: register (lock file written when it locks files), work, write its output
// file, record it in output_files when the phase tracks outputs, resolve (lock file deleted).
func (a *jonggrangActor) runAgent(key, role, id, suffix string, taskID string, files []string, payload func() any) {
	a.then(func(at time.Time) (time.Duration, error) {
		a.m.registerAgent(id, role, files, at)
		if len(files) > 0 {
			if err := writeAgentLock(a.project, agentLock{AgentID: id, Files: files, AcquiredAt: isoMS(at), PID: a.pid}); err != nil {
				return 0, err
			}
		}
		return a.jitter(1500 * time.Millisecond), a.save()
	})
	a.then(func(at time.Time) (time.Duration, error) {
		num := a.m.phase(key).Def.Num
		name := phaseOutputName(num, role, suffix)
		var task *string
		if taskID != "" {
			task = &taskID
		}
		size, err := writeJSONFile(filepath.Join(a.dir, name), phaseOutput{
			JonggrangOutput: true, FeatureID: a.m.FeatureID, Phase: num, Role: role, TaskID: task, AgentID: id,
			Timestamp: isoMS(at), Status: "completed", Output: payload(),
		})
		if err != nil {
			return 0, err
		}
		if outputTrackingPhases[key] {
			rel, _ := filepath.Rel(a.project, filepath.Join(a.dir, name))
			a.m.addOutputFile(key, mOutputFile{Path: rel, Type: "output", Size: &size, CreatedAt: isoMS(at), AgentID: id, TaskID: taskID}, at)
			if err := a.save(); err != nil {
				return 0, err
			}
		}
		return a.jitter(700 * time.Millisecond), nil
	})
	a.then(func(at time.Time) (time.Duration, error) {
		a.m.resolveAgent(id, "completed", at)
		if len(files) > 0 {
			if err := releaseAgentLock(a.project, id); err != nil {
				return 0, err
			}
		}
		return a.jitter(600 * time.Millisecond), a.save()
	})
}

func (a *jonggrangActor) planLead(key string) {
	a.runAgent(key, "lead", a.nextAgentID("lead"), "architecture-plan", "", nil, func() any {
		tasks := []leadTask{}
		for _, t := range a.feat.Tasks {
			tasks = append(tasks, leadTask{ID: t.ID, Title: t.Title, Description: t.Title + " for " + a.feat.Description, Files: t.Files, BlockedBy: []string{}})
		}
		return leadPayload{WorkType: a.feat.WorkType, Tasks: tasks, TechDecisions: []string{"keep the existing router"}, RiskFactors: []string{}}
	})
	a.then(func(at time.Time) (time.Duration, error) {
		return 300 * time.Millisecond, a.writeBoard("pending", -1)
	})
}

// leadTask keeps the lead's key order (JSON.stringify writes insertion order; a Go map would sort).
type leadTask struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Files       []string `json:"files"`
	BlockedBy   []string `json:"blocked_by"`
}

type leadPayload struct {
	WorkType      string     `json:"work_type"`
	Tasks         []leadTask `json:"tasks"`
	TechDecisions []string   `json:"tech_decisions"`
	RiskFactors   []string   `json:"risk_factors"`
}

// writeBoard rewrites jonggrang-tasks.json whole: tasks before upTo are completed, the rest have status.
func (a *jonggrangActor) writeBoard(status string, upTo int) error {
	board := tasksBoard{Tasks: []boardTask{}}
	for i, t := range a.feat.Tasks {
		s := status
		if i <= upTo {
			s = "completed"
		}
		board.Tasks = append(board.Tasks, boardTask{ID: t.ID, Title: t.Title, Status: s, FeatureID: a.m.FeatureID})
	}
	_, err := writeJSONFile(filepath.Join(a.dir, "jonggrang-tasks.json"), board)
	return err
}

// planDevelopers registers one developer per task, all at once (their locked files do not overlap), writes
// the source files they produce, then resolves them one by one.
func (a *jonggrangActor) planDevelopers(key string) {
	a.then(func(at time.Time) (time.Duration, error) {
		return 200 * time.Millisecond, a.writeBoard("in_progress", -1)
	})
	type dev struct {
		id   string
		task featureTask
	}
	var devs []dev
	for i, t := range a.feat.Tasks {
		devs = append(devs, dev{a.agentID("developer", i+1), t})
	}
	for _, d := range devs {
		a.then(func(at time.Time) (time.Duration, error) {
			a.m.registerAgent(d.id, "developer", d.task.Files, at)
			if err := writeAgentLock(a.project, agentLock{AgentID: d.id, Files: d.task.Files, AcquiredAt: isoMS(at), PID: a.pid}); err != nil {
				return 0, err
			}
			return a.jitter(900 * time.Millisecond), a.save()
		})
	}
	for i, d := range devs {
		a.then(func(at time.Time) (time.Duration, error) {
			for _, f := range d.task.Files {
				path := filepath.Join(a.project, f)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					return 0, err
				}
				src := fmt.Sprintf("// %s (%s)\nexport const %s = %d;\n", d.task.Title, d.task.ID, strings.ReplaceAll(filepath.Base(f[:len(f)-len(filepath.Ext(f))]), "-", "_"), a.rng.IntN(1000))
				if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
					return 0, err
				}
				size := int64(len(src))
				a.m.addOutputFile(key, mOutputFile{Path: f, Type: "code", Size: &size, CreatedAt: isoMS(at), AgentID: d.id, TaskID: d.task.ID}, at)
			}
			return a.jitter(1500 * time.Millisecond), a.save()
		})
		a.then(func(at time.Time) (time.Duration, error) {
			task := d.task.ID
			name := phaseOutputName(8, "developer", d.task.ID)
			size, err := writeJSONFile(filepath.Join(a.dir, name), phaseOutput{
				JonggrangOutput: true, FeatureID: a.m.FeatureID, Phase: 8, Role: "developer", TaskID: &task, AgentID: d.id,
				Timestamp: isoMS(at), Status: "completed", Output: developerPayload{
					TaskID: task, FilesModified: d.task.Files, FilesCreated: []string{}, Summary: d.task.Title + " implemented", Notes: "",
				},
			})
			if err != nil {
				return 0, err
			}
			rel, _ := filepath.Rel(a.project, filepath.Join(a.dir, name))
			a.m.addOutputFile(key, mOutputFile{Path: rel, Type: "output", Size: &size, CreatedAt: isoMS(at), AgentID: d.id, TaskID: task}, at)
			a.m.resolveAgent(d.id, "completed", at)
			if err := releaseAgentLock(a.project, d.id); err != nil {
				return 0, err
			}
			if err := a.writeBoard("in_progress", i); err != nil {
				return 0, err
			}
			return a.jitter(800 * time.Millisecond), a.save()
		})
	}
}

type developerPayload struct {
	TaskID        string   `json:"task_id"`
	FilesModified []string `json:"files_modified"`
	FilesCreated  []string `json:"files_created"`
	Summary       string   `json:"summary"`
	Notes         string   `json:"notes"`
}

type reviewerPayload struct {
	Approved      bool     `json:"approved"`
	Score         int      `json:"score"`
	Violations    []string `json:"violations"`
	Warnings      []string `json:"warnings"`
	RequiredFixes []string `json:"required_fixes"`
}

type testerPayload struct {
	TestsPassed bool     `json:"tests_passed"`
	Total       int      `json:"total"`
	Passed      int      `json:"passed"`
	Failed      int      `json:"failed"`
	Coverage    float64  `json:"coverage"`
	FailedTests []string `json:"failed_tests"`
}

func (a *jonggrangActor) planReviewer(key, suffix string, warn bool) {
	a.runAgent(key, "reviewer", a.nextAgentID("reviewer"), suffix, "", nil, func() any {
		p := reviewerPayload{Approved: true, Score: 80 + a.rng.IntN(20), Violations: []string{}, Warnings: []string{}, RequiredFixes: []string{}}
		if warn {
			p.Warnings = []string{"consider extracting the validation helper"}
		}
		return p
	})
}

func (a *jonggrangActor) planTestLead(key string) {
	a.runAgent(key, "test-lead", a.nextAgentID("test-lead"), "test-plan", "", nil, func() any {
		cases := []string{}
		for _, t := range a.feat.Tasks {
			cases = append(cases, t.Title+": happy path", t.Title+": invalid input")
		}
		return map[string]any{"test_cases": cases}
	})
}

func (a *jonggrangActor) planTester(key string) {
	files := []string{"tests/" + a.feat.Topic + ".spec.ts"}
	a.runAgent(key, "tester", a.nextAgentID("tester"), "results", "", files, func() any {
		total := 20 + a.rng.IntN(40)
		return testerPayload{TestsPassed: true, Total: total, Passed: total, Failed: 0, Coverage: float64(80+a.rng.IntN(15)) / 100, FailedTests: []string{}}
	})
}

// compactionState is .ephemeral/compaction-state.json as the gate writes it (docs/FORMATS.md A.6).
type compactionState struct {
	Status    string  `json:"status"`
	Ratio     float64 `json:"ratio"`
	Tokens    int     `json:"tokens"`
	Message   string  `json:"message"`
	UpdatedAt string  `json:"updated_at"`
}

// contextWindow is the 200,000-token window the gate's thresholds are fractions of.
const contextWindow = 200_000

func (a *jonggrangActor) writeCompactionState(at time.Time) error {
	ratio := *a.m.ContextUsage
	st := compactionState{Ratio: ratio, Tokens: int(ratio * contextWindow), UpdatedAt: isoMS(at)}
	pct := int(ratio*100 + 0.5)
	switch {
	case ratio >= 0.85:
		st.Status, st.Message = "block", fmt.Sprintf("BLOCKED: Context at %d%%; compact before continuing", pct)
	case ratio >= 0.80:
		st.Status, st.Message = "must", fmt.Sprintf("Context at %d%%; compact before the next heavy phase", pct)
	case ratio >= 0.75:
		st.Status, st.Message = "warn", fmt.Sprintf("WARNING: Context at %d%%", pct)
	default:
		st.Status, st.Message = "ok", fmt.Sprintf("Context at %d%%", pct)
	}
	dir := filepath.Join(a.project, ".jonggrang", ".ephemeral")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	_, err := writeJSONFile(filepath.Join(dir, "compaction-state.json"), st)
	return err
}
