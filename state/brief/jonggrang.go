package brief

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"runwatch/model"
	"runwatch/plural"
	"runwatch/state/jonggrang"
)

// JonggrangBrief is what the jonggrang resume protocol (persisting-progress-across-sessions) asks for.
type JonggrangBrief struct {
	WorkType     string `json:"work_type"`
	PipelineMode string `json:"pipeline_mode"`
	// AwaitingInput is set when a phase is failed on purpose to wait for a person.
	AwaitingInput *AwaitingInput      `json:"awaiting_input,omitempty"`
	Outputs       []model.PhaseOutput `json:"outputs"`
	Tasks         []model.Task        `json:"tasks"`
	Validation    []ValidationNote    `json:"validation"`
	Gates         []GateNote          `json:"gates"`
	Worktrees     []WorktreeNote      `json:"worktrees,omitempty"`
	// WorktreeCopyOf is the worktree manifest this brief was read from while a parallel worker runs.
	WorktreeCopyOf string      `json:"worktree_copy_of,omitempty"`
	Interruptions  []time.Time `json:"interruptions,omitempty"`
	ProgressTail   []string    `json:"progress_tail,omitempty"`
}

// AwaitingInput is a human pause: the phase, why, and what the person must answer.
type AwaitingInput struct {
	Phase     StageRef `json:"phase"`
	Reason    string   `json:"reason"`
	Questions []string `json:"questions"`
}

// ValidationNote is one validation flag and what follows from it.
type ValidationNote struct {
	Name    string `json:"name"`
	Value   bool   `json:"value"`
	Meaning string `json:"meaning"`
}

// GateNote is an ephemeral gate and the advice it implies.
type GateNote struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Blocked bool   `json:"blocked"`
	Detail  string `json:"detail"`
	Advice  string `json:"advice,omitempty"`
	// Stepped: Next steps says the gate's state and advice, so the Markdown's Gates line points there.
	Stepped bool `json:"-"`
}

// WorktreeNote points at the copy of the manifest a parallel run's worker writes.
type WorktreeNote struct {
	WorktreePath string `json:"worktree_path"`
	ManifestPath string `json:"manifest_path"`
	Exists       bool   `json:"exists"`
	Live         bool   `json:"live"`
	GroupStatus  string `json:"group_status"`
	PID          int    `json:"pid"`
	// What the worktree copy says, when it exists: its current phase, status and progress.
	CurrentPhase string         `json:"current_phase,omitempty"`
	Status       string         `json:"status,omitempty"`
	Progress     model.Progress `json:"progress"`
	Problems     []string       `json:"problems,omitempty"`
}

// readWorktreeCopy fills n from the worktree's manifest, which is newer than the main copy while (or after) a
// worker runs there.
func readWorktreeCopy(n *WorktreeNote, runID string, env model.Env) {
	wt := jonggrang.Load(filepath.Dir(n.ManifestPath), env)
	if s := wt.Stage(wt.CurrentStage); s != nil && wt.CurrentStage != "" {
		n.CurrentPhase = stageRef(wt, *s).label() + " (" + string(s.Status) + ")"
	}
	n.Status, n.Progress = wt.RawStatus, wt.Progress
	for _, p := range wt.Problems {
		if p.Severity == model.SeverityError {
			n.Problems = append(n.Problems, p.Message)
		}
	}
	if wt.ID != "" && wt.ID != runID {
		n.Problems = append(n.Problems, "the worktree manifest is for feature "+wt.ID)
	}
}

// heavyPhaseNames are the phases a compaction check runs before (current code: 3, 8, 9, 14), named because
// the numbering changed between versions.
var heavyPhaseNames = map[string]bool{"codebase-discovery": true, "implementation": true, "simplification": true,
	"testing": true}

// orchestratorResume is how the convention resumes a feature; the subcommand changed name between versions.
const orchestratorResume = "`jonggrang orchestrate --resume`, or `jonggrang work --resume` in versions with the work loop"

// progressTailLines is how much of progress.txt a brief repeats.
const progressTailLines = 8

func buildJonggrang(b *Brief, run model.Run, env model.Env) {
	b.Headline = "Resuming feature: " + run.ID
	jb := &JonggrangBrief{}
	b.Jonggrang = jb
	d := run.Jonggrang
	if d == nil {
		d = &model.JonggrangDetail{}
	}
	jb.WorkType, jb.PipelineMode = d.WorkType, d.PipelineMode
	jb.Outputs, jb.Tasks, jb.Interruptions = d.PhaseOutputs, d.Tasks, d.Interruptions
	jb.WorktreeCopyOf = d.WorktreeCopyOf
	if n := len(d.ProgressTail); n > progressTailLines {
		jb.ProgressTail = d.ProgressTail[n-progressTailLines:]
	} else {
		jb.ProgressTail = d.ProgressTail
	}
	flags := map[string]bool{}
	for _, f := range run.Flags {
		if f.Group == model.FlagGroupValidation {
			flags[f.Name] = f.Value
			jb.Validation = append(jb.Validation, ValidationNote{Name: f.Name, Value: f.Value,
				Meaning: validationMeaning(f.Name, f.Value, d.PhaseOutputs)})
		}
	}

	liveSteps, lockCleanup := lockSteps(b)
	steps := archivedSteps(run)
	steps = append(steps, liveSteps...)
	steps = append(steps, stopSteps(b)...)
	steps = append(steps, worktreeSteps(jb, run, d, env)...)
	steps = append(steps, lockCleanup...)
	steps = append(steps, gateSteps(jb, run, d)...)

	b.Restart = jonggrangRestart(b)
	b.Complete = b.Restart == nil && strings.EqualFold(strings.TrimSpace(run.RawStatus), "completed") && !run.HasErrors()
	if len(run.Stages) == 0 {
		b.Steps = append(steps, noStagesStep(run))
		return
	}
	steps = append(steps, phaseSteps(b, jb, run, flags)...)
	if len(b.Completed) > 0 && !b.Complete {
		steps = append(steps, "Do not redo the completed "+plural.Word(len(b.Completed), "phase", "phases")+" "+
			compactLabels(b.Completed)+": their outputs are summarised below.")
	}
	b.Steps = steps
}

// jonggrangRestart is the phase work resumes at: a failed phase first (the protocol retries it), then the
// current phase if it is not done, then the first phase not done.
func jonggrangRestart(b *Brief) *StageRef {
	if len(b.Failed) > 0 {
		r := b.Failed[0]
		return &r
	}
	if b.Current != nil && b.Current.Status != string(model.StageCompleted) && b.Current.Status != string(model.StageSkipped) {
		r := *b.Current
		return &r
	}
	if len(b.Remaining) > 0 {
		r := b.Remaining[0]
		return &r
	}
	return nil
}

func phaseSteps(b *Brief, jb *JonggrangBrief, run model.Run, flags map[string]bool) []string {
	id := oneLine(run.ID)
	if b.Restart == nil {
		if !b.Complete {
			return []string{"Every phase is completed or skipped but the manifest says status " + code(run.RawStatus) +
				": mark the run completed or find out what is still expected."}
		}
		if len(b.Skipped) > 0 && strings.EqualFold(jb.PipelineMode, "compact") {
			return []string{fmt.Sprintf("Nothing to resume: the run was finalized in compact mode and phases %s were skipped (%s). "+
				"To run them, reopen the feature (status in_progress, phases from 8 on back to pending).",
				compactLabels(b.Skipped), skipReasons(b.Skipped))}
		}
		return []string{"Nothing to resume: every phase is done and the run is completed."}
	}
	r := *b.Restart
	var steps []string
	if r.Status == string(model.StageFailed) {
		if strings.HasPrefix(strings.TrimSpace(r.Error), model.AwaitingInputPrefix) {
			jb.AwaitingInput = &AwaitingInput{Phase: r, Reason: r.Error, Questions: questionsFor(r.Key, jb.Outputs)}
			// Retrying would fail it again: in supervised mode the orchestrator fails phase 6 on purpose every
			// time it reaches it. Only a completed phase 6, or autonomous mode, gets past it.
			next := "the next phase"
			if rest := after(b.Remaining, r.Key); len(rest) > 0 {
				next = rest[0].label()
			}
			steps = append(steps, "Phase "+r.label()+" is waiting for a person: answer the "+
				"questions under “Awaiting input”, then mark the phase done and move on with runwatch step "+id+
				" (phase "+oneLine(r.Key)+" completed, current_phase moved to "+next+"), lift the pause with runwatch resume "+id+
				", and start the orchestrator's own resume ("+orchestratorResume+"). Or resume in autonomous mode, "+
				"which does not stop at this phase. "+model.NoRetryAwaiting)
		} else {
			steps = append(steps, "Retry phase "+r.label()+": it failed with "+quoted(errorOrNone(r.Error))+
				". runwatch retry "+id+" sets it back to pending, clears the error and points current_phase at it.")
		}
		for _, f := range b.Failed[1:] {
			steps = append(steps, "Phase "+f.label()+" failed as well ("+quoted(errorOrNone(f.Error))+"): retry it after "+r.label()+".")
		}
	} else if isTesting(r.Name) && r.StartedAt != nil {
		passed, known := flags["tests_passed"]
		switch {
		case known && passed:
			steps = append(steps, "Testing already passed (tests_passed: true): complete phase "+r.label()+
				" and proceed"+nextPhaseClause(b, r)+".")
		default:
			s := "Re-run the tester for phase " + r.label() + ": testing was interrupted and tests_passed is false."
			if failed := lastFailedTests(jb.Outputs); len(failed) > 0 {
				s += " The last run failed " + itoa(len(failed)) + " " + plural.Word(len(failed), "test", "tests") + " (listed below)."
			}
			steps = append(steps, s)
		}
	} else if r.Status == string(model.StageRunning) && heldLive(b, run) {
		steps = append(steps, "Phase "+r.label()+" is running now under a live agent or worker: resume only after it "+
			"has stopped, and then restart it from its beginning.")
	} else if r.Status == string(model.StageRunning) && run.Status == model.StatusRunning {
		// The orchestrator holds no lock of its own: a manifest that says running, with nothing showing a crash,
		// is taken at its word.
		steps = append(steps, "Phase "+r.label()+" is running: the manifest says "+code(run.RawStatus)+" and nothing shows "+
			"a crash (the orchestrator itself holds no lock). Do not start a second orchestrator; resume only if it has "+
			"stopped, and then restart the phase from its beginning.")
	} else if r.Status == string(model.StageRunning) {
		s := "Restart phase " + r.label() + " from its beginning: it was running"
		if r.StartedAt != nil {
			s += " (started " + r.StartedAt.UTC().Format(time.RFC3339) + ")"
		}
		s += " when the run stopped, and nothing live holds it."
		if n := len(partialOutputs(run, r.Key)); n > 0 {
			s += fmt.Sprintf(" It had already recorded %d output %s (listed below); check %s before overwriting.", n,
				plural.Word(n, "file", "files"), plural.Word(n, "it", "them"))
		}
		steps = append(steps, s)
	} else {
		s := "Start phase " + r.label() + " (status " + code(r.Status) + ")."
		if run.Status == model.StatusPaused {
			s += " Nothing runs the feature now: start the orchestrator's own resume (" + orchestratorResume +
				"), which continues at current_phase."
			if strings.EqualFold(strings.TrimSpace(run.RawStatus), "paused") {
				s += " Lift the pause first (runwatch resume " + id + "): the orchestrator stops between phases while the status says paused."
			}
		}
		steps = append(steps, s)
	}
	if b.Current != nil && b.Current.Key != r.Key {
		steps = append(steps, "Note: current_phase in the manifest is "+b.Current.label()+", but "+r.label()+
			" must be done first.")
	}
	if fixes := openRequiredFixes(jb.Outputs, flags); len(fixes) > 0 {
		steps = append(steps, fmt.Sprintf("The review is not passed: make the %d required %s listed under the reviewer's output before the review runs again.",
			len(fixes), plural.Word(len(fixes), "fix", "fixes")))
	}
	if rest := after(b.Remaining, r.Key); len(rest) > 0 {
		steps = append(steps, "Then continue with "+compactLabels(rest)+".")
	}
	return steps
}

// heldLive reports a live lock or a live parallel worker for this feature.
func heldLive(b *Brief, run model.Run) bool {
	for _, l := range b.Locks {
		if l.Verdict == model.VerdictLive {
			return true
		}
	}
	if run.Jonggrang != nil {
		for _, g := range run.Jonggrang.Groups {
			if g.Alive && g.FeatureID == run.ID {
				return true
			}
		}
	}
	return false
}

func nextPhaseClause(b *Brief, r StageRef) string {
	if rest := after(b.Remaining, r.Key); len(rest) > 0 {
		return " to phase " + rest[0].label()
	}
	return " to completion"
}

// after returns the refs following key in order.
func after(refs []StageRef, key string) []StageRef {
	for i, r := range refs {
		if r.Key == key {
			return refs[i+1:]
		}
	}
	return nil
}

func isTesting(name string) bool { return strings.EqualFold(strings.TrimSpace(name), "testing") }

func errorOrNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "no error recorded"
	}
	return s
}

// questionsFor collects what the phase's own output files say (their summary lines): that is where the
// orchestrator leaves the questions for the person.
func questionsFor(phase string, outs []model.PhaseOutput) []string {
	var q []string
	for _, o := range outs {
		if samePhase(o.Phase, phase) {
			q = append(q, o.Summary...)
		}
	}
	return q
}

func samePhase(a, b string) bool {
	return !model.NumericLess(a, b) && !model.NumericLess(b, a)
}

func partialOutputs(run model.Run, key string) []model.OutputFile {
	if s := run.Stage(key); s != nil {
		return s.OutputFiles()
	}
	return nil
}

func lastFailedTests(outs []model.PhaseOutput) []string {
	for i := len(outs) - 1; i >= 0; i-- {
		if outs[i].TestsPassed != nil || len(outs[i].FailedTests) > 0 {
			return outs[i].FailedTests
		}
	}
	return nil
}

// openRequiredFixes are the latest reviewer verdict's required fixes while review_passed is false.
func openRequiredFixes(outs []model.PhaseOutput, flags map[string]bool) []string {
	if flags["review_passed"] {
		return nil
	}
	for i := len(outs) - 1; i >= 0; i-- {
		if outs[i].Approved != nil {
			if *outs[i].Approved {
				return nil
			}
			return outs[i].RequiredFix
		}
	}
	return nil
}

func validationMeaning(name string, value bool, outs []model.PhaseOutput) string {
	switch name {
	case "review_passed":
		if value {
			return "the review approved the code: do not re-run the review phases"
		}
		for i := len(outs) - 1; i >= 0; i-- {
			if outs[i].Approved != nil && !*outs[i].Approved {
				return "the last review rejected the code: its required fixes must be made, then the review runs again"
			}
		}
		return "no review has passed yet: the review phases still have to run"
	case "tests_passed":
		if value {
			return "tests passed: proceed past testing"
		}
		for i := len(outs) - 1; i >= 0; i-- {
			if outs[i].TestsPassed != nil && !*outs[i].TestsPassed {
				return "the last test run failed: fix the failures, then re-run the tester"
			}
		}
		return "no passing test run is recorded: the tester has to run (again, if testing was interrupted)"
	case "coverage_met":
		if value {
			return "the coverage target is met"
		}
		return "coverage is not confirmed yet: the coverage phase has to run"
	}
	if value {
		return "set"
	}
	return "not set"
}

func worktreeSteps(jb *JonggrangBrief, run model.Run, d *model.JonggrangDetail, env model.Env) []string {
	var steps []string
	for _, g := range d.Groups {
		if g.FeatureID != run.ID || g.WorktreePath == "" {
			continue
		}
		manifest := filepath.Join(g.WorktreePath, ".jonggrang", ".output", "features", run.ID, "MANIFEST.yaml")
		_, err := os.Stat(manifest)
		n := WorktreeNote{WorktreePath: g.WorktreePath, ManifestPath: manifest, Exists: err == nil, Live: g.Alive,
			GroupStatus: g.Status, PID: g.PID}
		if n.Exists {
			readWorktreeCopy(&n, run.ID, env)
		}
		jb.Worktrees = append(jb.Worktrees, n)
		where := ""
		if n.CurrentPhase != "" {
			where = " It is at phase " + n.CurrentPhase + ", " + itoa(n.Progress.Done) + " of " + itoa(n.Progress.Total) + " phases done."
		}
		switch {
		case g.Alive:
			steps = append(steps, "A parallel worker (pid "+itoa(g.PID)+") is running this feature in "+code(g.WorktreePath)+
				": its live manifest is "+code(manifest)+"; the copy in this project is stale until the worker exits. "+
				"Do not resume here while it runs."+where)
		case n.Exists && (g.Interrupted || g.Status == "running" || g.Status == "queued" || g.Status == "interrupted"):
			steps = append(steps, "The parallel worker for this feature was interrupted: its worktree copy "+code(manifest)+
				" (and progress.txt beside it) is newer than this project's copy. Resume in "+code(g.WorktreePath)+
				", or copy MANIFEST.yaml and progress.txt back here first."+where)
		case !n.Exists && g.Status != "completed":
			steps = append(steps, "The parallel worker's worktree copy "+code(manifest)+" is gone: this project's copy is "+
				"all that is left, and may miss the worker's last phases.")
		}
	}
	return steps
}

func gateSteps(jb *JonggrangBrief, run model.Run, d *model.JonggrangDetail) []string {
	var steps []string
	covered := map[string]bool{}
	if f := d.Feedback; f != nil {
		covered["feedback"], covered["feedback-loop"] = true, true
		g := GateNote{Name: "feedback-loop", Blocked: f.Blocked,
			Detail: fmt.Sprintf("active %t, iteration %d, dirty_bit %t, stuck_count %d", f.Active, f.Iteration, f.DirtyBit, f.StuckCount)}
		g.Status = "open"
		if f.Blocked {
			g.Status = "blocked"
		}
		if len(f.BlockedDomains) > 0 {
			g.Detail += ", blocked domains " + strings.Join(f.BlockedDomains, ", ")
		}
		if f.Blocked || (f.Active && f.DirtyBit) {
			domains := "its domains"
			if len(f.BlockedDomains) > 0 {
				quotedDomains := make([]string, 0, len(f.BlockedDomains))
				for _, dm := range f.BlockedDomains {
					quotedDomains = append(quotedDomains, code(dm))
				}
				domains = plural.And(quotedDomains)
			}
			g.Advice = "the feedback loop is dirty: " + domains + " must pass review and testing again before the loop may exit"
			steps = append(steps, "Feedback loop (iteration "+itoa(f.Iteration)+") is dirty: "+domains+
				" must pass review and testing again before the phase can exit.")
		}
		if f.Escalation || f.StuckCount > 3 {
			adv := fmt.Sprintf("stuck %d times: escalate (Escalation Advisor) instead of looping again", f.StuckCount)
			g.Advice = strings.TrimPrefix(g.Advice+"; "+adv, "; ")
			steps = append(steps, "The feedback loop has been stuck "+itoa(f.StuckCount)+
				" times: escalate to a person (Escalation Advisor) rather than looping again.")
		}
		jb.Gates = append(jb.Gates, g)
	}
	if c := d.Compaction; c != nil {
		covered["compaction"] = true
		g := GateNote{Name: "compaction", Status: c.Status, Detail: fmt.Sprintf("context at %.0f%%", c.Ratio*100)}
		if c.Tokens != nil {
			g.Detail += fmt.Sprintf(", %d tokens", *c.Tokens)
		}
		if usage := d.ContextUsage; usage != nil {
			g.Detail += fmt.Sprintf("; manifest context_usage %.2f", *usage)
		}
		level := strings.ToLower(c.Status)
		if c.Stale {
			// The gate ignores a state older than 5 minutes and measures again: old news, not a block.
			g.Status, level = "stale", ""
			g.Detail = "last measured " + c.Status + ", " + g.Detail
			if c.UpdatedAt != nil {
				g.Detail += ", at " + c.UpdatedAt.UTC().Format(time.RFC3339)
			}
			g.Advice = "stale information, not blocking: the gate trusts this file for 5 minutes only and measures again before the next heavy phase"
		}
		switch level {
		case "block":
			g.Blocked = true
			g.Advice = "compact the context before anything else; heavy phases are refused at this level"
		case "must":
			g.Advice = "compact the context before the next heavy phase"
		case "warn":
			g.Advice = "consider compacting before the next heavy phase"
		}
		if g.Advice != "" {
			s := "Context compaction is at " + code(c.Status) + " (" + g.Detail + "): " + capitalize(g.Advice)
			g.Stepped = true
			if h := nextHeavy(run); h != "" {
				s += "; the next heavy phase is " + h
			}
			steps = append(steps, s+".")
		}
		jb.Gates = append(jb.Gates, g)
	}
	for _, g := range run.Gates {
		if covered[strings.ToLower(g.Name)] {
			continue
		}
		jb.Gates = append(jb.Gates, GateNote{Name: g.Name, Status: g.Status, Blocked: g.Blocked, Detail: g.Detail})
	}
	return steps
}

// nextHeavy names the first heavy phase not done yet, counting the current one.
func nextHeavy(run model.Run) string {
	for _, s := range run.Stages {
		if !s.Status.Done() && heavyPhaseNames[strings.ToLower(s.Name)] {
			return stageRef(run, s).label()
		}
	}
	return ""
}

// compactLabels lists phases briefly, collapsing runs of consecutive entries: "1 setup–9 simplification".
func compactLabels(refs []StageRef) string {
	if len(refs) <= 4 {
		return plural.And(labels(refs))
	}
	return refs[0].label() + " through " + refs[len(refs)-1].label() + " (" + itoa(len(refs)) + " in all)"
}

func skipReasons(refs []StageRef) string {
	seen := map[string]bool{}
	var reasons []string
	for _, r := range refs {
		why := strings.TrimSpace(r.SkipReason)
		if why == "" {
			why = "no reason recorded"
		}
		if !seen[why] {
			seen[why] = true
			reasons = append(reasons, quoted(why))
		}
	}
	return "skip reason " + plural.And(reasons)
}
