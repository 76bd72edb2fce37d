package brief

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"runwatch/model"
	"runwatch/plural"
)

// Schema versions the JSON form of a Brief: fields may be added, never renamed.
const Schema = 1

// Brief is everything a person (or an agent) needs to restart an interrupted run without repeating work.
// Values copied from run files are kept as written; Markdown makes them safe to print.
type Brief struct {
	Schema      int             `json:"schema"`
	GeneratedAt time.Time       `json:"generated_at"`
	Headline    string          `json:"headline"`
	ID          string          `json:"id"`
	Kind        model.Kind      `json:"kind"`
	Title       string          `json:"title"`
	Dir         string          `json:"dir"`
	StatePath   string          `json:"state_path"`
	Status      model.RunStatus `json:"status"`
	RawStatus   string          `json:"raw_status"`
	Progress    model.Progress  `json:"progress"`
	// Complete is true when nothing is left to resume.
	Complete bool `json:"complete"`

	// Steps are the instructions, in the order to follow them.
	Steps []string `json:"steps"`
	// StopConditions must be resolved before the run may continue; Warnings should be read first.
	StopConditions []Condition `json:"stop_conditions"`
	Warnings       []Condition `json:"warnings"`

	// Current is the stage the state file points at; Restart is where work resumes (they differ when the
	// state file is ahead of what is safely done). Both nil when nothing remains.
	Current   *StageRef  `json:"current"`
	Restart   *StageRef  `json:"restart"`
	Completed []StageRef `json:"completed"`
	Skipped   []StageRef `json:"skipped"`
	Failed    []StageRef `json:"failed"`
	Remaining []StageRef `json:"remaining"`

	Locks []LockNote `json:"locks"`
	// CrashSigns say why a run that claims to be running is judged not to be.
	CrashSigns []string `json:"crash_signs,omitempty"`
	// Time says how long the current stage has run, what past runs of the task say it takes, and how long
	// the rest usually takes (model.JudgeTime; empty when the run carries no timing).
	Time string `json:"time,omitempty"`

	Jonggrang *JonggrangBrief `json:"jonggrang,omitempty"`
	Resumable *ResumableBrief `json:"resumable,omitempty"`
}

// StageRef names a stage (phase) with what a resume needs to know about it.
type StageRef struct {
	Key         string     `json:"key"`
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
	Error       string     `json:"error,omitempty"`
	SkipReason  string     `json:"skip_reason,omitempty"`
	// startedText and completedText are the times as the file spells them (model.TimeText).
	startedText, completedText string
	// stopped is the run's status when the run stopped at this stage (model.Run.StoppedAt): the Markdown
	// words it as the run is judged, the file's word after it; the JSON keeps the file's.
	stopped model.RunStatus
}

// MarshalJSON writes the times as the file spells them, as status --json does.
func (s StageRef) MarshalJSON() ([]byte, error) {
	type plain StageRef
	var started, completed any
	if s.StartedAt != nil {
		started = *s.StartedAt
		if s.startedText != "" {
			started = s.startedText
		}
	}
	if s.CompletedAt != nil {
		completed = *s.CompletedAt
		if s.completedText != "" {
			completed = s.completedText
		}
	}
	return json.Marshal(struct {
		plain
		StartedAt   any `json:"started_at,omitempty"`
		CompletedAt any `json:"completed_at,omitempty"`
	}{plain(s), started, completed})
}

// Condition is a stop condition or a warning.
type Condition struct {
	// Source is where it was found: "state" (the reader's problems), "lock", "git", "artifacts".
	Source  string `json:"source"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
}

// LockNote is a lock with its verdict and what to do about it.
type LockNote struct {
	Path       string        `json:"path"`
	Holder     string        `json:"holder"`
	PID        int           `json:"pid"`
	Host       string        `json:"host"`
	Verdict    model.Verdict `json:"verdict"`
	Reasons    []string      `json:"reasons"`
	AgeSeconds int64         `json:"age_seconds"`
	Advice     string        `json:"advice"`
}

// Options tune Build. The zero value is what the dashboard and `runwatch brief` use, with their Cache.
type Options struct {
	// GitTimeout bounds each git command (default 5s).
	GitTimeout time.Duration
	// SkipGit leaves the git checks out (reported as skipped), for callers that must not spawn processes.
	SkipGit bool
	// Git is the git program: "" is git as found on PATH.
	Git string
	// RequiredArtifacts lists, per resumable stage id, artifact paths (relative to the run folder, or
	// absolute) that the plan's stage gate requires, when a config provides them.
	RequiredArtifacts map[string][]string
	// Cache is where the index of a large run.log is kept between processes; the zero value keeps it in
	// this process's memory only.
	Cache IndexCache
}

// Build makes the brief for run. It reads the few files the model does not carry (run.log artifact blocks, a
// worktree manifest's existence) and runs local git commands with a timeout, so call it off the UI thread.
func Build(run model.Run, env model.Env) Brief { return BuildWith(run, env, Options{}) }

// BuildWith is Build with options.
func BuildWith(run model.Run, env model.Env, opts Options) Brief {
	if opts.GitTimeout <= 0 {
		opts.GitTimeout = defaultGitTimeout
	}
	b := Brief{
		Schema:      Schema,
		GeneratedAt: env.Now.UTC().Truncate(time.Second),
		ID:          run.ID,
		Kind:        run.Kind,
		Title:       run.Title,
		Dir:         run.Dir,
		StatePath:   run.StatePath,
		Status:      run.Status,
		RawStatus:   run.RawStatus,
		Progress:    run.Progress,
		CrashSigns:  run.CrashSigns,
	}
	for _, s := range run.Stages {
		ref := stageRef(run, s)
		switch s.Status {
		case model.StageCompleted:
			b.Completed = append(b.Completed, ref)
		case model.StageSkipped:
			b.Skipped = append(b.Skipped, ref)
		case model.StageFailed:
			b.Failed = append(b.Failed, ref)
			b.Remaining = append(b.Remaining, ref)
		default:
			b.Remaining = append(b.Remaining, ref)
		}
	}
	if s := run.Stage(run.CurrentStage); s != nil && run.CurrentStage != "" {
		ref := stageRef(run, *s)
		b.Current = &ref
		b.Time = timeLine(run, *s, env.Now)
	}
	for _, l := range run.Locks {
		b.Locks = append(b.Locks, lockNote(l, run))
	}
	for _, p := range run.Problems {
		c := Condition{Source: "state", Code: p.Code, Message: p.Message, Path: p.Path}
		switch p.Severity {
		case model.SeverityError:
			b.StopConditions = append(b.StopConditions, c)
		case model.SeverityWarning:
			b.Warnings = append(b.Warnings, c)
		}
	}
	switch run.Kind {
	case model.KindJonggrang:
		buildJonggrang(&b, run, env)
	default:
		buildResumable(&b, run, opts)
	}
	b.fillEmptyLists()
	return b
}

// fillEmptyLists makes empty lists encode as [] rather than null, as status --json does.
func (b *Brief) fillEmptyLists() {
	for _, l := range []*[]string{&b.Steps} {
		if *l == nil {
			*l = []string{}
		}
	}
	for _, l := range []*[]Condition{&b.StopConditions, &b.Warnings} {
		if *l == nil {
			*l = []Condition{}
		}
	}
	for _, l := range []*[]StageRef{&b.Completed, &b.Skipped, &b.Failed, &b.Remaining} {
		if *l == nil {
			*l = []StageRef{}
		}
	}
	if b.Locks == nil {
		b.Locks = []LockNote{}
	}
	if j := b.Jonggrang; j != nil {
		if j.Outputs == nil {
			j.Outputs = []model.PhaseOutput{}
		}
		if j.Tasks == nil {
			j.Tasks = []model.Task{}
		}
		if j.Validation == nil {
			j.Validation = []ValidationNote{}
		}
		if j.Gates == nil {
			j.Gates = []GateNote{}
		}
	}
	if r := b.Resumable; r != nil {
		if r.Finalization == nil {
			r.Finalization = []model.Flag{}
		}
		if r.Push == nil {
			r.Push = []model.Flag{}
		}
		if r.Window.Evidence == nil {
			r.Window.Evidence = []string{}
		}
		if r.Git.Checks == nil {
			r.Git.Checks = []GitCheck{}
		}
		if r.Artifacts.Missing == nil {
			r.Artifacts.Missing = []ArtifactNote{}
		}
	}
}

func stageRef(run model.Run, s model.Stage) StageRef {
	status := string(s.Status)
	if status == "" {
		status = s.RawStatus()
	}
	stopped, _ := run.StoppedAt(&s)
	return StageRef{Key: s.Key, Name: s.Name, Status: status, StartedAt: s.StartedAt, CompletedAt: s.CompletedAt,
		Error: s.ErrorText(), SkipReason: s.SkipReason(), startedText: s.StartedText(), completedText: s.CompletedText(), stopped: stopped}
}

// label is "10 design-verification" for a phase and "S2" for a stage whose name is its key.
func (s StageRef) label() string {
	if s.Name == "" || s.Name == s.Key {
		return oneLine(s.Key)
	}
	return oneLine(s.Key) + " " + oneLine(s.Name)
}

func labels(refs []StageRef) []string {
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		out = append(out, r.label())
	}
	return out
}

func lockNote(l model.Lock, run model.Run) LockNote {
	n := LockNote{Path: l.Path, Holder: l.Holder, PID: l.PID, Host: l.Host, Verdict: l.Verdict,
		Reasons: l.Reasons, AgeSeconds: l.AgeSeconds}
	switch l.Verdict {
	case model.VerdictLive:
		n.Advice = "held by a live process: do not resume while it runs; wait for it or stop it yourself"
	case model.VerdictStale:
		n.Advice = "stale: remove it before resuming (runwatch unlock " + oneLine(run.ID) + ")"
	default:
		n.Advice = "make sure its holder is gone, then remove it (runwatch unlock --force " + oneLine(run.ID) + ")"
	}
	return n
}

// lockSteps turns the locks into instructions: a live one comes before everything else.
func lockSteps(b *Brief) (live []string, cleanup []string) {
	for _, l := range b.Locks {
		switch l.Verdict {
		case model.VerdictLive:
			who := oneLine(l.Holder)
			if who == "" {
				who = "a process"
			}
			if l.PID > 0 {
				who += " (pid " + itoa(l.PID) + ")"
			}
			live = append(live, "Do not start a second session: "+who+" holds the live lock "+code(l.Path)+
				". Wait for it to finish, or stop it yourself, before resuming.")
		case model.VerdictStale:
			cleanup = append(cleanup, code(l.Path))
		}
	}
	if len(cleanup) > 0 {
		cleanup = []string{"Clean the stale " + plural.Word(len(cleanup), "lock", "locks") + " " + plural.And(cleanup) +
			" (runwatch unlock " + oneLine(b.ID) + ")."}
	}
	for _, l := range b.Locks {
		if l.Verdict == model.VerdictUnknown {
			cleanup = append(cleanup, "Check the lock "+code(l.Path)+" by hand: "+oneLine(joinReasons(l.Reasons))+
				". "+capitalize(l.Advice)+".")
		}
	}
	return live, cleanup
}

func joinReasons(r []string) string {
	if len(r) == 0 {
		return "no reason recorded"
	}
	out := r[0]
	for _, s := range r[1:] {
		out += "; " + s
	}
	return out
}

// archivedSteps warns that an archived run is history, not something to resume.
func archivedSteps(run model.Run) []string {
	if !run.Archived {
		return nil
	}
	return []string{"This run is archived (its folder was renamed by a reset): do not resume it; resume the run " +
		"that replaced it. The brief below is for reference only."}
}

// noStagesStep is the instruction when the state file yielded no stages at all.
func noStagesStep(run model.Run) string {
	return "No " + run.Kind.StageWord() + "s could be read from " + code(run.StatePath) + ": fix or restore the " +
		"state file (see the stop conditions) before anything can be resumed."
}

// stateUnreadable reports a state file that could not be read or parsed completely.
func stateUnreadable(run model.Run) bool {
	for _, p := range run.Problems {
		switch p.Code {
		case model.CodeStateMissing, model.CodeStateUnreadable, model.CodeStateUnparsable, model.CodeStateTooLarge,
			model.CodeManifestMissing, model.CodeManifestUnreadable, model.CodeManifestUnparsable,
			model.CodeManifestTooLarge, model.CodeManifestInvalid:
			return true
		}
	}
	return false
}

// stopStep is the step a stop condition asks for: it points at the condition, said under Stop conditions in
// force, rather than saying it again, and gives the advice.
func stopStep(c Condition, advice string) string {
	s := "Stop condition `" + oneLine(c.Code) + "` (under Stop conditions in force)"
	if advice == "" {
		return s + ": resolve it before resuming."
	}
	return s + ": " + advice
}

// stopSteps turns the reader's stop conditions into instructions (a live lock is covered by lockSteps).
func stopSteps(b *Brief) []string {
	var steps []string
	for _, c := range b.StopConditions {
		if c.Source == "state" && c.Code != model.CodeLockLiveForeign {
			steps = append(steps, stopStep(c, ""))
		}
	}
	return steps
}

// timeLine words the current stage's time against its history: "stage S1 has run 12m; it usually takes 4–6m
// (9 runs); ~25m left by 9 past runs".
func timeLine(run model.Run, s model.Stage, now time.Time) string {
	if run.Timing == nil || s.Status.Done() {
		return ""
	}
	var parts []string
	if d := s.Duration(now); d > 0 {
		if stopped, ok := run.StoppedAt(&s); ok {
			// Nothing runs it: it has not "run" all that time (point 10 of issue 36).
			parts = append(parts, run.Kind.StageWord()+" "+s.Key+" started "+model.HumanDuration(d)+" ago and is "+string(stopped))
		} else {
			parts = append(parts, run.Kind.StageWord()+" "+s.Key+" has run "+model.HumanDuration(d))
		}
	}
	if u := s.Timing.Usual(); u.Known() {
		parts = append(parts, "it "+strings.Replace(u.String(), "usually", "usually takes", 1))
	} else {
		parts = append(parts, "no past run of this task says how long it takes")
	}
	if left, ok := run.ETA(now); ok {
		by := fmt.Sprintf("%d past runs", run.Timing.Runs)
		if run.Timing.Runs == 1 {
			by = "1 past run"
		}
		parts = append(parts, "~"+model.HumanDuration(left)+" left by "+by)
	}
	return strings.Join(parts, "; ")
}
