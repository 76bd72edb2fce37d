package brief

import (
	"fmt"
	"path/filepath"
	"strings"

	"runwatch/model"
	"runwatch/plural"
	"runwatch/state/resumable"
)

// ResumableBrief is what the resumable-execution skill's resume protocol asks for.
type ResumableBrief struct {
	RunID        string `json:"run_id"`
	TaskName     string `json:"task_name"`
	CurrentStage string `json:"current_stage"`
	// EarliestIncomplete is the first stage, in stage order, that is not safely done: not marked done, or
	// marked done while its checklist says otherwise. Nil when every stage is safely done.
	EarliestIncomplete *StageRef `json:"earliest_incomplete"`
	// Contradictions name stages whose done flag the checklist contradicts.
	Contradictions []string `json:"contradictions,omitempty"`
	// OpenItems are the checklist items still open in the restart stage and in the stages Contradictions
	// names, each with what the run's files say it needs.
	OpenItems    []OpenItem     `json:"open_items,omitempty"`
	ResumeHint   string         `json:"last_resume_hint,omitempty"`
	ResumeTarget string         `json:"resume_target_stage,omitempty"`
	Window       Window         `json:"window"`
	Finalization []model.Flag   `json:"finalization"`
	Push         []model.Flag   `json:"push"`
	LockFile     string         `json:"lock_file"`
	LockState    string         `json:"lock_state"`
	Git          GitReport      `json:"git"`
	Artifacts    ArtifactReport `json:"artifacts"`
}

// Window is the resume window of docs/FORMATS.md B.8. Code is "A".."D", or "" when nothing is left to resume.
type Window struct {
	Code     string   `json:"code"`
	Name     string   `json:"name"`
	Action   string   `json:"action"`
	Evidence []string `json:"evidence"`
}

// The window rules, first match wins (the skill names the windows; which flags select each is our reading):
//
//	done  every stage safely done, every finalization flag 1, and no push left unconfirmed → nothing to resume
//	C     PUSH_ATTEMPTED=1 and PUSH_CONFIRMED≠1: push attempted, outcome unknown
//	D     every stage safely done, some finalization flag 0, and the push confirmed or never part of this run
//	      (no PUSH_* keys): push confirmed, finalization incomplete
//	B     after mutation, before verification: every stage done with PUSH_* keys present but no push attempted
//	      (the "before push" variant), or the restart stage shows mutation without its done flag: a commit
//	      recorded for it (LAST_COMMITTED_PHASE / LAST_COMMITTED_CHECKPOINT, a commit-ledger row, a checkpoint
//	      file), some of its checklist items ticked, or uncommitted changes in REPO_ROOT
//	A     otherwise: before mutation; resume at the restart stage's start
const (
	windowA = "A"
	windowB = "B"
	windowC = "C"
	windowD = "D"
)

var windowNames = map[string]string{
	windowA: "before mutation",
	windowB: "after mutation, before verification",
	windowC: "push attempted, outcome unknown",
	windowD: "push confirmed, finalization incomplete",
}

func buildResumable(b *Brief, run model.Run, opts Options) {
	rb := &ResumableBrief{}
	b.Resumable = rb
	d := run.Resumable
	if d == nil {
		d = &model.ResumableDetail{}
	}
	rb.RunID, rb.TaskName, rb.LockFile = d.RunID, d.TaskName, d.LockFile
	rb.ResumeHint, rb.ResumeTarget = d.ResumeHint, d.ResumeTarget
	if rb.ResumeHint == "" {
		rb.ResumeHint, _ = d.Value("LAST_RESUME_HINT")
	}
	if rb.ResumeTarget == "" {
		rb.ResumeTarget, _ = d.Value("RESUME_TARGET_STAGE")
	}
	rb.CurrentStage = run.CurrentStage
	b.Headline = "Resuming run: " + run.ID

	for _, f := range run.Flags {
		switch f.Group {
		case model.FlagGroupFinalization:
			rb.Finalization = append(rb.Finalization, f)
		case model.FlagGroupPush:
			rb.Push = append(rb.Push, f)
		}
	}

	restartIdx := len(run.Stages)
	for i, s := range run.Stages {
		if !safelyDone(s) {
			restartIdx = i
			break
		}
	}
	for _, s := range run.Stages {
		if s.Status.Done() && !safelyDone(s) {
			rb.Contradictions = append(rb.Contradictions, s.Key)
		}
	}
	if restartIdx < len(run.Stages) {
		ref := stageRef(run, run.Stages[restartIdx])
		rb.EarliestIncomplete = &ref
		b.Restart = &ref
	}

	rb.OpenItems = openItems(run, d, restartIdx, rb.Contradictions)

	repo, _ := d.Value("REPO_ROOT")
	last, _ := d.Value("LAST_COMMITTED_SHA")
	pin, _ := d.Value("BASE_PIN_SHA")
	rb.Git = checkGit(opts.Git, repo, last, pin, opts.GitTimeout, opts.SkipGit)
	rb.Artifacts = artifactReport(run, restartIdx, opts.RequiredArtifacts, opts.Cache)
	rb.LockState = lockState(run)

	addResumableConditions(b, rb)
	rb.Window = resumeWindow(run, d, rb, restartIdx)
	if rb.Window.Code != "" && stateUnreadable(run) {
		rb.Window.Evidence = append(rb.Window.Evidence, "the state file could not be read completely: this window "+
			"is derived from the lines that could, so confirm it by hand")
	}
	b.Complete = rb.Window.Code == "" && !run.HasErrors()
	b.Steps = resumableSteps(b, rb, run)
}

// safelyDone is a stage marked done whose checklist agrees.
func safelyDone(s model.Stage) bool {
	if !s.Status.Done() {
		return false
	}
	if s.ChecklistDone != nil && !*s.ChecklistDone {
		return false
	}
	for _, c := range s.Checklist {
		if !c.Done {
			return false
		}
	}
	return true
}

func lockState(run model.Run) string {
	state := "none"
	for _, l := range run.Locks {
		switch {
		case l.Verdict == model.VerdictLive:
			return "live"
		case l.Verdict == model.VerdictUnknown:
			state = "unknown"
		case state == "none":
			state = "stale"
		}
	}
	return state
}

// addResumableConditions adds the stop conditions only the brief can see: git, missing artifacts, a live lock.
func addResumableConditions(b *Brief, rb *ResumableBrief) {
	for _, c := range rb.Git.Checks {
		if c.Result == resultFailed {
			b.StopConditions = append(b.StopConditions, Condition{Source: "git", Code: "git-" + c.Name,
				Message: c.Detail, Path: rb.Git.RepoRoot})
		}
	}
	if rb.Git.Note != "" {
		b.Warnings = append(b.Warnings, Condition{Source: "git", Code: "git-unchecked",
			Message: rb.Git.Note + "; check the worktree, HEAD and BASE_PIN_SHA by hand", Path: rb.Git.RepoRoot})
	} else {
		for _, c := range rb.Git.Checks {
			if c.Result == resultSkipped && c.Name != CheckHeadIsLast && c.Name != CheckBasePin {
				b.Warnings = append(b.Warnings, Condition{Source: "git", Code: "git-unchecked", Message: c.Detail,
					Path: rb.Git.RepoRoot})
			}
		}
	}
	for _, a := range rb.Artifacts.Missing {
		if !a.Blocking || hasCondition(b.StopConditions, model.CodeArtifactMissing, a.Path) {
			continue
		}
		b.StopConditions = append(b.StopConditions, Condition{Source: "artifacts", Code: model.CodeArtifactMissing,
			Message: "required artifact of stage " + a.Stage + " is missing: " + a.Checked, Path: a.Checked})
	}
	for _, l := range b.Locks {
		if l.Verdict == model.VerdictLive && !hasCondition(b.StopConditions, model.CodeLockLiveForeign, l.Path) {
			b.StopConditions = append(b.StopConditions, Condition{Source: "lock", Code: model.CodeLockLiveForeign,
				Message: "an active, non-stale lock is held: " + joinReasons(l.Reasons), Path: l.Path})
		}
	}
}

func hasCondition(cs []Condition, code, path string) bool {
	for _, c := range cs {
		if c.Code == code && (c.Path == path || path == "") {
			return true
		}
	}
	return false
}

func flagValue(flags []model.Flag, name string) (value, present bool) {
	for _, f := range flags {
		if strings.EqualFold(f.Name, name) {
			return f.Value, true
		}
	}
	return false, false
}

func resumeWindow(run model.Run, d *model.ResumableDetail, rb *ResumableBrief, restartIdx int) Window {
	allDone := restartIdx == len(run.Stages) && len(run.Stages) > 0
	attempted, hasAttempted := flagValue(rb.Push, "PUSH_ATTEMPTED")
	confirmed, hasConfirmed := flagValue(rb.Push, "PUSH_CONFIRMED")
	var unfinished []string
	for _, f := range rb.Finalization {
		if !f.Value {
			unfinished = append(unfinished, f.Name)
		}
	}
	w := Window{}
	set := func(code, action string, evidence ...string) Window {
		w.Code, w.Name, w.Action = code, windowNames[code], action
		w.Evidence = append(w.Evidence, evidence...)
		return w
	}
	remote := pushTarget(d)
	switch {
	case attempted && !confirmed:
		return set(windowC, "Do not push again blindly. Compare the remote branch "+remote+" with the SHA the push "+
			"was meant to leave there (LAST_COMMITTED_SHA, or EXPECTED_OLD_REMOTE_SHA for the lease). If it matches, "+
			"set PUSH_CONFIRMED=1 and go on to finalization; if the remote moved elsewhere, stop (remote drift). "+
			"runwatch does not contact the remote: run git ls-remote yourself.",
			"PUSH_ATTEMPTED=1 and PUSH_CONFIRMED is "+flagWord(confirmed, hasConfirmed))
	case allDone && len(unfinished) == 0:
		return w
	case allDone && hasAttempted && !attempted && !(hasConfirmed && confirmed):
		return set(windowB, "Every stage is done but nothing was pushed: re-run the final verification first, then push "+
			"(recording PUSH_ATTEMPTED before and PUSH_CONFIRMED after), then finalize.",
			"every stage is marked done and its checklist is complete", "PUSH_ATTEMPTED=0")
	case allDone:
		ev := []string{"every stage is marked done and its checklist is complete",
			"finalization flags still 0: " + strings.Join(unfinished, ", ")}
		if hasConfirmed {
			ev = append(ev, "PUSH_CONFIRMED=1")
		} else {
			ev = append(ev, "no PUSH_* flags: this run does not push")
		}
		action := "Run the idempotent finalization only (summary blocks are appended marked with RUN_ID, so a " +
			"block already written is skipped), and set " + strings.Join(unfinished, ", ") + " as each step completes. " +
			"Redo no stage."
		if len(unfinished) == 1 && len(rb.Finalization) > 1 {
			action = "Only " + unfinished[0] + " is missing: finish that one finalization step (idempotently: skip " +
				"a block already marked with RUN_ID) and set it. Redo nothing else."
		}
		return set(windowD, action, ev...)
	}
	if len(run.Stages) == 0 {
		return w
	}
	stage := run.Stages[restartIdx]
	if ev := mutationEvidence(stage, d, rb); len(ev) > 0 {
		return set(windowB, "Re-run stage "+stage.Key+"'s verification first, against what is already on disk and "+
			"committed; only if it passes, tick its checklist and mark it done. Do not redo its mutation blindly.", ev...)
	}
	return set(windowA, "Resume at the start of stage "+stage.Key+": nothing of it has been changed yet, so it "+
		"can run from the beginning.", "no commit, checkpoint, ticked checklist item or uncommitted change "+
		"belongs to stage "+stage.Key+" yet")
}

func flagWord(v, present bool) string {
	switch {
	case !present:
		return "not set"
	case v:
		return "1"
	}
	return "0"
}

func pushTarget(d *model.ResumableDetail) string {
	remote, _ := d.Value("TARGET_REMOTE")
	branch, _ := d.Value("TARGET_BRANCH")
	if strings.TrimSpace(remote) == "" {
		remote = "origin"
	}
	if strings.TrimSpace(branch) == "" {
		return remote + " (TARGET_BRANCH is not set)"
	}
	return remote + "/" + branch
}

// mutationEvidence is what shows the stage changed something without being marked done.
func mutationEvidence(s model.Stage, d *model.ResumableDetail, rb *ResumableBrief) []string {
	var ev []string
	if s.Status.Done() {
		ev = append(ev, s.Key+" is marked done while its checklist is incomplete")
	}
	for _, key := range []string{"LAST_COMMITTED_PHASE", "LAST_COMMITTED_CHECKPOINT"} {
		if v, ok := d.Value(key); ok && labelNamesStage(v, s.Key) {
			ev = append(ev, key+"="+v+" names this stage")
		}
	}
	for _, c := range d.Checkpoints {
		if namesStage(c.Stage, s.Key) {
			ev = append(ev, "checkpoint file "+c.File()+" exists for it")
		}
	}
	for _, row := range d.Ledger {
		named := false
		for _, id := range row.Stages {
			named = named || strings.EqualFold(id, s.Key)
		}
		if !named && !namesStage(row.Checkpoint, s.Key) {
			continue
		}
		what := "commit " + short(row.SHA)
		if row.SHA == "" {
			what = "an entry"
		}
		ev = append(ev, fmt.Sprintf("the commit ledger %s records %s for it (%s)", filepath.Base(row.File), what, row.Checkpoint))
	}
	ticked := 0
	for _, c := range s.Checklist {
		if c.Done && !isStartMarker(c.Key) {
			ticked++
		}
	}
	if ticked > 0 {
		e := fmt.Sprintf("%d of its %d checklist items %s ticked", ticked, len(s.Checklist), plural.Word(ticked, "is", "are"))
		var open []string
		for _, c := range s.Checklist {
			if !c.Done {
				open = append(open, c.Key)
			}
		}
		if len(open) > 0 {
			e += "; open: " + strings.Join(open, ", ")
		}
		ev = append(ev, e)
	}
	for _, c := range rb.Git.Checks {
		if c.Name == CheckWorktreeClean && c.Result == resultFailed {
			ev = append(ev, "REPO_ROOT has uncommitted changes")
		}
	}
	return ev
}

// isStartMarker recognises items like CB_M0_STAGE_START that record that a stage began, which changes nothing.
func isStartMarker(key string) bool {
	k := strings.ToUpper(key)
	return strings.HasSuffix(k, "_START") || strings.HasSuffix(k, "_STARTED")
}

// labelNamesStage matches a value that names the stage directly, or a ledger label (C02-M3, C03-M4-M5) that
// lists it after its sequence number.
func labelNamesStage(value, stage string) bool {
	if namesStage(value, stage) {
		return true
	}
	for _, id := range resumable.LedgerStages(value) {
		if strings.EqualFold(id, stage) {
			return true
		}
	}
	return false
}

// namesStage matches "S2", "s2", "S2.done", "S2-commit" against stage S2 (but not S20).
func namesStage(value, stage string) bool {
	v, s := strings.ToUpper(strings.TrimSpace(value)), strings.ToUpper(stage)
	if v == s {
		return true
	}
	if !strings.HasPrefix(v, s) || len(v) == len(s) {
		return false
	}
	next := v[len(s)]
	return next == '.' || next == '-' || next == '_' || next == ':' || next == ' '
}

func resumableSteps(b *Brief, rb *ResumableBrief, run model.Run) []string {
	live, cleanup := lockSteps(b)
	steps := archivedSteps(run)
	steps = append(steps, live...)
	for _, c := range b.StopConditions {
		if c.Source == "lock" || c.Code == model.CodeLockLiveForeign {
			continue // lockSteps has said it, first
		}
		steps = append(steps, stopStep(c, stopAdvice(c, rb)))
	}
	steps = append(steps, cleanup...)
	if len(run.Stages) == 0 {
		return append(steps, noStagesStep(run))
	}
	if rb.Window.Code == "" {
		if b.Complete {
			steps = append(steps, "Nothing to resume: every stage is done and finalization is complete.")
		}
		return steps
	}
	steps = append(steps, "Resume window "+rb.Window.Code+" ("+rb.Window.Name+"): "+rb.Window.Action)
	if r := rb.EarliestIncomplete; r != nil {
		if rb.CurrentStage != "" && !strings.EqualFold(rb.CurrentStage, r.Key) {
			steps = append(steps, "CURRENT_STAGE says "+code(rb.CurrentStage)+", but the earliest stage not safely done is "+
				r.label()+": continue from "+r.label()+".")
		}
		for _, hint := range []struct{ name, value string }{{"RESUME_TARGET_STAGE", rb.ResumeTarget}, {"LAST_RESUME_HINT", rb.ResumeHint}} {
			if hint.value != "" && !mentionsStage(hint.value, r.Key) {
				steps = append(steps, hint.name+" is "+quoted(hint.value)+", which disagrees with the earliest incomplete "+
					"stage "+r.label()+"; trust the flags and checklist, and update the hint.")
			}
		}
		if step := openItemsStep(rb.OpenItems); step != "" {
			steps = append(steps, step)
		}
		if rest := remainingAfter(run, r.Key); len(rest) > 0 {
			steps = append(steps, "Then continue with "+compactLabels(rest)+", one stage per invocation when MAX_STAGES=1.")
		}
	}
	if n := len(b.Completed); n > 0 {
		done := b.Completed
		if len(rb.Contradictions) > 0 {
			done = nil
			for _, c := range b.Completed {
				if !contains(rb.Contradictions, c.Key) {
					done = append(done, c)
				}
			}
		}
		if len(done) > 0 {
			steps = append(steps, fmt.Sprintf("Do not redo %s: %s done with a complete checklist.",
				compactLabels(done), plural.Word(len(done), "it is", "they are")))
		}
	}
	return steps
}

// stopAdvice is what to do about a stop condition; the condition itself is said under Stop conditions in
// force (stopStep), once.
func stopAdvice(c Condition, rb *ResumableBrief) string {
	switch c.Code {
	case "git-" + CheckWorktreeClean:
		return "Decide whether the changes in " + code(rb.Git.RepoRoot) + " are the interrupted stage's own work " +
			"(verify and commit them) or foreign (set them aside) before going on."
	case "git-" + CheckHeadIsLast:
		return "Find out what changed (git log) before going on; the run's record no longer matches the repository."
	case "git-" + CheckBasePin:
		return "The run's immutable base is gone from this repository: stop and restore it."
	case model.CodeArtifactMissing:
		return "Restore or regenerate it; the stage gate needs it."
	case model.CodeStageDoneChecklistIncomplete:
		return "Re-verify that stage: tick the items that truly hold, or set its done flag back to 0."
	case model.CodeStageBlocked:
		return "Do not step past it and do not simply re-run: fix what its gate measured " +
			"(the failed metrics or LAST_ERROR), re-run that stage's verification, and clear LAST_ERROR once it passes."
	case model.CodeStateMissing:
		return "This brief is built from run.log, checkpoints and ledgers only: restore state.env " +
			"(from the machine that ran it) or rebuild it from this evidence before resuming."
	}
	return ""
}

// mentionsStage reports whether a hint like "Resume from S2" names stage key as a word.
func mentionsStage(hint, key string) bool {
	for _, w := range strings.FieldsFunc(hint, func(r rune) bool {
		return r == ' ' || r == ',' || r == ':' || r == ';' || r == '=' || r == '"' || r == '\'' || r == '.'
	}) {
		if strings.EqualFold(w, key) {
			return true
		}
	}
	return false
}

func remainingAfter(run model.Run, key string) []StageRef {
	var out []StageRef
	seen := false
	for _, s := range run.Stages {
		if seen && !s.Status.Done() {
			out = append(out, stageRef(run, s))
		}
		if strings.EqualFold(s.Key, key) {
			seen = true
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// openItemsStep names, per stage, the checklist items still to make true, pointing at what the files say
// they need.
func openItemsStep(items []OpenItem) string {
	if len(items) == 0 {
		return ""
	}
	var parts []string
	for i := 0; i < len(items); {
		j := i
		var keys []string
		for j < len(items) && items[j].Stage == items[i].Stage {
			keys = append(keys, code(items[j].Key))
			j++
		}
		parts = append(parts, "stage "+code(items[i].Stage)+": "+plural.And(keys))
		i = j
	}
	return "Checklist items still open, each to make true and then tick (what each needs, where the run's files " +
		"say, is under Open checklist items): " + strings.Join(parts, "; ") + "."
}
