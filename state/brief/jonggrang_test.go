package brief

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
)

var phaseNames = []struct{ key, name string }{
	{"1", "setup"}, {"2", "triage"}, {"3", "codebase-discovery"}, {"4", "skill-discovery"}, {"5", "complexity"},
	{"6", "brainstorming"}, {"6.5", "design-system"}, {"7", "architecting"}, {"8", "implementation"},
	{"9", "simplification"}, {"10", "design-verification"}, {"11", "domain-compliance"}, {"12", "code-quality"},
	{"13", "test-planning"}, {"14", "testing"}, {"15", "coverage"}, {"16", "test-quality"}, {"17", "completion"},
}

func boolp(b bool) *bool { return &b }

// jonggrangRun is a MEDIUM feature whose phases before current are completed, current has status cur, and
// the rest are pending.
func jonggrangRun(id, current string, cur model.StageStatus) model.Run {
	run := model.Run{ID: id, Kind: model.KindJonggrang, Title: "Add login form with validation",
		Dir: "/p/app/.jonggrang/.output/features/" + id, ProjectRoot: "/p/app", RawStatus: "running",
		StatePath: "/p/app/.jonggrang/.output/features/" + id + "/MANIFEST.yaml", CurrentStage: current,
		Jonggrang: &model.JonggrangDetail{WorkType: "MEDIUM", PipelineMode: "full", HasUI: true}}
	status := model.StageCompleted
	for i, p := range phaseNames {
		s := model.Stage{Key: p.key, Name: p.name, Status: status}
		if p.key == current {
			s.Status = cur
			status = model.StagePending
		}
		if s.Status != model.StagePending {
			s.StartedAt = at(-60 + i*3)
		}
		if s.Status == model.StageCompleted || s.Status == model.StageFailed {
			s.CompletedAt = at(-58 + i*3)
		}
		run.Stages = append(run.Stages, s)
	}
	for _, name := range []string{"review_passed", "tests_passed", "coverage_met"} {
		run.Flags = append(run.Flags, model.Flag{Group: model.FlagGroupValidation, Name: name})
	}
	return run
}

func setFlag(run *model.Run, name string, v bool) {
	for i := range run.Flags {
		if run.Flags[i].Name == name {
			run.Flags[i].Value = v
		}
	}
}

func outputs() []model.PhaseOutput {
	return []model.PhaseOutput{
		{File: "07-lead-architecture-plan.json", Phase: "7", Role: "lead", Status: "completed",
			Summary: []string{"1 task planned", "task-001: Login form (src/auth.ts)"}, FilesTouched: []string{"src/auth.ts"}},
		{File: "08-developer-task-001.json", Phase: "8", Role: "developer", TaskID: "task-001", AgentID: "developer-auth-001",
			Status: "completed", Summary: []string{"modified: src/auth.ts", "created: src/login.tsx", "Login form with client-side validation"},
			FilesTouched: []string{"src/auth.ts", "src/login.tsx"}},
		{File: "12-reviewer-code-quality.json", Phase: "12", Role: "reviewer", Status: "completed", Approved: boolp(false),
			Summary:     []string{"changes requested (score 6)", "4 required fix(es): escape error text; debounce submit; label inputs"},
			RequiredFix: []string{"escape error text", "debounce submit", "label inputs", "drop console.log"}},
	}
}

func TestJonggrangBriefs(t *testing.T) {
	cases := map[string]func(t *testing.T) (model.Run, model.Env){
		// Interrupted while phase 10 ran: stale and unknown locks, dirty feedback loop, compaction warning,
		// an interrupted parallel worker whose worktree copy still exists.
		"interrupted": func(t *testing.T) (model.Run, model.Env) {
			run := jonggrangRun("add-login-form-mlop4860", "10", model.StageRunning)
			run.Stages[10].SetOutputFiles([]model.OutputFile{{Path: "src/verify.md", Type: "output"}})
			run.Jonggrang.PhaseOutputs = outputs()[:2]
			run.Jonggrang.Tasks = []model.Task{{ID: "task-001", Title: "Login form", Status: "completed"}}
			run.Jonggrang.ProgressTail = []string{"- phase 8 done", "## Interrupted run (2026-02-16T05:10:00.000Z)", "context ran out"}
			run.Jonggrang.Interruptions = []time.Time{*at(-21)}
			run.Jonggrang.Feedback = &model.FeedbackGate{Active: true, Iteration: 2, DirtyBit: true, StuckCount: 4,
				BlockedDomains: []string{"backend"}, Blocked: true, Escalation: true}
			tokens := int64(154000)
			run.Jonggrang.Compaction = &model.CompactionGate{Status: "warn", Ratio: 0.77, Tokens: &tokens, Message: "WARNING"}
			usage := 0.42
			run.Jonggrang.ContextUsage = &usage
			wt := t.TempDir()
			writeFile(t, filepath.Join(wt, ".jonggrang/.output/features/add-login-form-mlop4860/MANIFEST.yaml"), worktreeManifest)
			run.Jonggrang.Groups = []model.Group{{FeatureID: run.ID, Status: "running", PID: 999999, Interrupted: true, WorktreePath: wt}}
			run.CrashSigns = []string{"orchestration group pid 999999 is not running"}
			run.Locks = []model.Lock{
				{Path: "/p/app/.jonggrang/locks/reviewer-old.lock", Holder: "reviewer-old", PID: 4243, AcquiredAt: at(-120), Kind: model.KindJonggrang},
				{Path: "/p/app/.jonggrang/locks/no-ts.lock", Holder: "x", Kind: model.KindJonggrang},
				{Path: "/p/app/.jonggrang/locks/broken.lock", ParseError: "not JSON", Kind: model.KindJonggrang},
			}
			return run, testEnv()
		},
		"failed": func(t *testing.T) (model.Run, model.Env) {
			run := jonggrangRun("add-login-form-mlop4860", "8", model.StageFailed)
			run.RawStatus = "failed"
			run.Stages[8].SetError("tsc exited with code 2: src/auth.ts(14,3): error TS2322")
			run.Jonggrang.PhaseOutputs = outputs()[:1]
			return run, testEnv()
		},
		"awaiting-input": func(t *testing.T) (model.Run, model.Env) {
			run := jonggrangRun("new-billing-mlopa001", "6", model.StageFailed)
			run.RawStatus = "failed"
			run.Title = "New billing"
			run.Jonggrang.WorkType = "LARGE"
			run.Stages[5].SetError("Awaiting human input (brainstorming)")
			run.Jonggrang.PhaseOutputs = []model.PhaseOutput{{File: "06-lead-brainstorm.json", Phase: "6", Role: "lead",
				Status: "awaiting-input", Summary: []string{"Which payment provider: Stripe or Adyen?", "Should invoices be monthly or per use?"}}}
			return run, testEnv()
		},
		"awaiting-input-no-questions": func(t *testing.T) (model.Run, model.Env) {
			run := jonggrangRun("new-billing-mlopa001", "6", model.StageFailed)
			run.RawStatus = "failed"
			run.Stages[5].SetError("Awaiting human input (brainstorming)")
			return run, testEnv()
		},
		// Testing was interrupted with tests_passed false: the protocol re-runs the tester.
		"testing-interrupted-failing": func(t *testing.T) (model.Run, model.Env) {
			run := jonggrangRun("add-login-form-mlop4860", "14", model.StageRunning)
			setFlag(&run, "review_passed", true)
			outs := outputs()
			outs[2].Approved, outs[2].RequiredFix = boolp(true), nil
			outs[2].Summary = []string{"approved (score 9)"}
			outs = append(outs, model.PhaseOutput{File: "14-tester-results.json", Phase: "14", Role: "tester", Status: "completed",
				TestsPassed: boolp(false), Summary: []string{"tests: 40 passed, 2 failed of 42, coverage 81", "failing: login rejects empty email, login shows server error"},
				FailedTests: []string{"login rejects empty email", "login shows server error"}})
			run.Jonggrang.PhaseOutputs = outs
			return run, testEnv()
		},
		// Testing was interrupted after tests_passed became true: proceed.
		"testing-interrupted-passed": func(t *testing.T) (model.Run, model.Env) {
			run := jonggrangRun("add-login-form-mlop4860", "14", model.StageRunning)
			setFlag(&run, "review_passed", true)
			setFlag(&run, "tests_passed", true)
			return run, testEnv()
		},
		// Review rejected and code-quality is the current phase again: the required fixes come first.
		"review-rejected": func(t *testing.T) (model.Run, model.Env) {
			run := jonggrangRun("add-login-form-mlop4860", "12", model.StagePending)
			run.Jonggrang.PhaseOutputs = outputs()
			run.Jonggrang.Compaction = &model.CompactionGate{Status: "block", Ratio: 0.88}
			return run, testEnv()
		},
		"compact-skipped": func(t *testing.T) (model.Run, model.Env) {
			run := jonggrangRun("compact-header-mlopb002", "", model.StageCompleted)
			run.RawStatus = "completed"
			run.Jonggrang.PipelineMode = "compact"
			for i := range run.Stages {
				if model.NumericLess("8", run.Stages[i].Key) {
					run.Stages[i].Status = model.StageSkipped
					run.Stages[i].SetSkipReason("compact pipeline")
					run.Stages[i].StartedAt, run.Stages[i].CompletedAt = nil, nil
				}
			}
			return run, testEnv()
		},
		"completed": func(t *testing.T) (model.Run, model.Env) {
			run := jonggrangRun("fix-typo-mlop9zz1", "", model.StageCompleted)
			run.RawStatus = "completed"
			for _, f := range []string{"review_passed", "tests_passed", "coverage_met"} {
				setFlag(&run, f, true)
			}
			return run, testEnv()
		},
		// A worker still runs the feature in its worktree; its lock is live too.
		"live-worker": func(t *testing.T) (model.Run, model.Env) {
			run := jonggrangRun("add-login-form-mlop4860", "9", model.StageRunning)
			run.Jonggrang.Groups = []model.Group{{FeatureID: run.ID, Status: "running", PID: 4242, Alive: true,
				WorktreePath: "/home/u/.jonggrang/worktree/app/add-login-form-mlop4860"}}
			// As the reader sets it: the manifest it read is the live worker's copy.
			run.Jonggrang.WorktreeCopyOf = "/home/u/.jonggrang/worktree/app/add-login-form-mlop4860/.jonggrang/.output/features/add-login-form-mlop4860/MANIFEST.yaml"
			run.Locks = []model.Lock{{Path: "/p/app/.jonggrang/locks/developer-auth-001.lock", Holder: "developer-auth-001",
				PID: 4242, AcquiredAt: at(-5), Files: []string{"src/auth.ts"}, Kind: model.KindJonggrang}}
			return run, testEnv(4242)
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			run, env := mk(t)
			run = judged(run, env)
			b := Build(run, env)
			var repl []string
			for _, g := range run.Jonggrang.Groups {
				if strings.HasPrefix(g.WorktreePath, os.TempDir()) {
					repl = append(repl, g.WorktreePath, "$WORKTREE")
				}
			}
			requireGolden(t, b, name == "interrupted", repl...)
		})
	}
}

// worktreeManifest is the worker's copy: it got one phase further than the main copy.
const worktreeManifest = `feature_id: add-login-form-mlop4860
description: Add login form with validation
work_type: SMALL
pipeline_mode: full
created_at: '2026-02-16T04:50:15.123Z'
updated_at: '2026-02-16T05:40:00.000Z'
status: running
current_phase: 11
active_phases:
  - 10
  - 11
phases:
  '10':
    name: design-verification
    status: completed
    started_at: '2026-02-16T05:01:02.000Z'
    completed_at: '2026-02-16T05:20:00.000Z'
    agent_id: null
    output: null
    output_files: []
  '11':
    name: domain-compliance
    status: running
    started_at: '2026-02-16T05:20:01.000Z'
    completed_at: null
    agent_id: null
    output: null
    output_files: []
agents: {}
validation:
  review_passed: false
  tests_passed: false
  coverage_met: false
locks: []
context_usage: null
`
