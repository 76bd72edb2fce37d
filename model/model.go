// Package model holds the one model both run-root conventions load into. It is pure: no I/O, so every rule
// here (status, ordering, lock verdicts) is unit-testable with injected facts.
package model

import (
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Kind names a run-root convention.
type Kind string

const (
	KindJonggrang Kind = "jonggrang"
	KindResumable Kind = "resumable"
)

// StageWord is what the UI calls a stage for this convention.
func (k Kind) StageWord() string {
	if k == KindJonggrang {
		return "phase"
	}
	return "stage"
}

// RunStatus is the derived status of a run (see DeriveStatus for the rules).
type RunStatus string

const (
	StatusRunning       RunStatus = "running"
	StatusPaused        RunStatus = "paused"
	StatusAwaitingInput RunStatus = "awaiting-input"
	StatusStalled       RunStatus = "stalled"
	StatusFailed        RunStatus = "failed"
	StatusBlocked       RunStatus = "blocked"
	StatusCompleted     RunStatus = "completed"
	StatusUnknown       RunStatus = "unknown"
)

// StageStatus is the status of one stage (phase).
type StageStatus string

const (
	StagePending   StageStatus = "pending"
	StageRunning   StageStatus = "running"
	StageCompleted StageStatus = "completed"
	StageFailed    StageStatus = "failed"
	StageSkipped   StageStatus = "skipped"
)

// Done reports whether a stage counts towards progress.
func (s StageStatus) Done() bool { return s == StageCompleted || s == StageSkipped }

// Severity of a problem. Only SeverityError is a stop condition.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Verdict is the liveness judgement of a lock.
type Verdict string

const (
	VerdictLive    Verdict = "live"
	VerdictStale   Verdict = "stale"
	VerdictUnknown Verdict = "unknown"
)

// Run is one run of either convention. JSON tags are the stable `status --json` schema: fields may be added,
// never renamed.
type Run struct {
	ID           string    `json:"id"`
	Kind         Kind      `json:"kind"`
	Dir          string    `json:"dir"`
	Title        string    `json:"title"`
	Status       RunStatus `json:"status"`
	RawStatus    string    `json:"raw_status"`
	CurrentStage string    `json:"current_stage"`
	Progress     Progress  `json:"progress"`
	Stages       []Stage   `json:"stages"`
	Flags        []Flag    `json:"flags"`
	Locks        []Lock    `json:"locks"`
	Problems     []Problem `json:"problems"`
	UpdatedAt    time.Time `json:"updated_at"`
	Log          *LogRef   `json:"log"`
	// UpdatedText is UpdatedAt as the file spells it, when it does (see TimeText); JSON writes it instead.
	UpdatedText string `json:"-"`

	// StatePath is the file that holds the run's durable state (MANIFEST.yaml or state.env).
	StatePath string `json:"state_path"`
	// ProjectRoot is the jonggrang project that holds .jonggrang/ (empty for resumable runs).
	ProjectRoot string `json:"project_root,omitempty"`
	Archived    bool   `json:"archived,omitempty"`
	Gates       []Gate `json:"gates"`
	// CrashSigns explain why a run that claims to be running is judged not to be (dead orchestration
	// group, stale locks of its own agents). They feed the stalled rule and the UI's "why".
	CrashSigns []string `json:"crash_signs,omitempty"`
	// Remote is set on a run read on another machine by that machine's runwatch (see package remote).
	Remote *RemoteRef `json:"remote,omitempty"`
	// AgentPane is the tmux pane where the run's agent runs, as status found it (state/agentpane): looked for
	// only for a run with a live holder, and only for status's JSON.
	AgentPane *AgentPane `json:"agent_pane,omitempty"`
	// Attention is whether the run needs a person, why, and what to do (see Judge). FinalizeRun sets it.
	Attention Attention `json:"attention"`
	// ActiveAt is the last time any file of the run runwatch reads was written (state, checklist, log,
	// checkpoints; manifest, phase outputs): what "silent for" and "unwritten for" count from.
	ActiveAt *time.Time `json:"active_at,omitempty"`
	// Timing is when the current stage started and how long the rest usually takes (JudgeTime).
	Timing *RunTiming `json:"timing,omitzero"`

	Jonggrang *JonggrangDetail `json:"jonggrang,omitempty"`
	Resumable *ResumableDetail `json:"resumable,omitempty"`
}

// RemoteRef says where a run lives when it is not on this machine.
type RemoteRef struct {
	// Host labels the machine as the user named it (an ssh destination or alias, with its port if given).
	Host string `json:"host"`
	// Root is the remote root the run was found under, as ssh://[user@]host[:port]/path.
	Root string `json:"root"`
	// StaleSince is set while the host cannot be reached: the run is shown as it was last seen then.
	StaleSince *time.Time `json:"stale_since,omitempty"`
}

// Key identifies a run among runs of several machines: its state file, prefixed by the host when the run is
// remote (two machines often hold the same paths).
func (r *Run) Key() string {
	if r.Remote != nil {
		return RemoteKey(r.Remote.Host, r.StatePath)
	}
	return r.StatePath
}

// RemoteKey names a file on a remote host: ssh://HOST/PATH, or ssh://HOST/~/PATH for a path that is not
// absolute. A host label never holds a slash (remote.Parse refuses one), so the first slash ends it and no
// path a host sends can make its key another host's: "evil" with "0/x" is ssh://evil/~/0/x, never evil0's.
func RemoteKey(host, path string) string {
	if !strings.HasPrefix(path, "/") {
		path = "/~/" + path
	}
	return "ssh://" + host + path
}

// Progress counts stages done (completed or skipped) out of all stages.
type Progress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// Stage is a jonggrang phase or a resumable stage.
type Stage struct {
	Key         string          `json:"key"`
	Name        string          `json:"name"`
	Status      StageStatus     `json:"status"`
	StartedAt   *time.Time      `json:"started_at"`
	CompletedAt *time.Time      `json:"completed_at"`
	Checklist   []ChecklistItem `json:"checklist"`

	// Resumable: the flag keys that carry this stage's state, e.g. S_VERIFY_DONE, M3_CHECKLIST_DONE.
	DoneKey          string `json:"done_key,omitempty"`
	ChecklistDoneKey string `json:"checklist_done_key,omitempty"`
	// ChecklistDone is the value of <STAGE>_CHECKLIST_DONE when that key exists.
	ChecklistDone *bool `json:"checklist_done,omitempty"`

	// Checkpoint is artifacts/checkpoints/<stage>.done.json when it exists.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// Timing is the stage's start and end with what past runs of the task say about it (JudgeTime).
	Timing *StageTiming `json:"timing,omitzero"`

	// rare is what few stages hold (StageRare), nil when none of it is set: a stage was 264 bytes with it
	// in line, and the dashboard holds every stage of 10,000 runs (issue 35). Never changed in place, as
	// copies of a stage share it: SetRare and the setters make a new one.
	rare *StageRare
}

// StageRare is what few stages hold: at 10,000 generated runs, 4% of stages have an error, 4% output files,
// and a tenth of jonggrang's times are spelled other than JSON's own way; skip reasons, unknown status words
// and warnings are rarer still. Its JSON is the stage's (Stage.MarshalJSON, Stage.UnmarshalJSON).
type StageRare struct {
	Error      string `json:"error"`
	SkipReason string `json:"skip_reason,omitempty"`
	// RawStatus is the status word as written on disk, kept when it is not one we know.
	RawStatus string `json:"raw_status,omitempty"`
	// Jonggrang: files recorded in phases[n].output_files.
	OutputFiles []OutputFile `json:"output_files,omitempty"`
	// Resumable: OrderUnknown marks a stage whose place in the order nothing on disk (or in the config)
	// settles; it is shown where a tie-break put it, and no write depends on that place. Rare: in the
	// stage, its word of padding put arrays of 5 and 13 stages a size class higher (issue 35).
	OrderUnknown bool `json:"order_unknown,omitempty"`
	// Warnings are facts about this stage a person must know before acting on it (e.g. the writer will
	// reopen it because its checkpoint is missing).
	Warnings []string `json:"warnings,omitempty"`
	// StartedText and CompletedText are the times as the file spells them (see TimeText), kept only when
	// they are not how the JSON would spell the time anyway (Stage.SetRare).
	StartedText   string `json:"-"`
	CompletedText string `json:"-"`
}

func (r *StageRare) isZero() bool {
	return r.Error == "" && r.SkipReason == "" && r.RawStatus == "" && len(r.OutputFiles) == 0 && !r.OrderUnknown &&
		len(r.Warnings) == 0 && r.StartedText == "" && r.CompletedText == ""
}

// Rare returns the stage's rarely set fields (all empty when it has none).
func (s *Stage) Rare() StageRare {
	if s.rare == nil {
		return StageRare{}
	}
	return *s.rare
}

// SetRare sets the stage's rarely set fields; all empty holds none. Set StartedAt and CompletedAt first: a
// time's text is kept only when it is not how the JSON would spell the time anyway (most of a manifest's
// times), as the same bytes come out without it.
func (s *Stage) SetRare(r StageRare) {
	r.StartedText = unlessJSONSpells(s.StartedAt, r.StartedText)
	r.CompletedText = unlessJSONSpells(s.CompletedAt, r.CompletedText)
	if r.isZero() {
		s.rare = nil
		return
	}
	s.rare = &r
}

// WithRare is s with r as its rarely set fields (SetRare), for a stage written as a literal.
func (s Stage) WithRare(r StageRare) Stage {
	s.SetRare(r)
	return s
}

// edit changes the rarely set fields on a copy, so a copy of the stage that shares them keeps its own.
func (s *Stage) edit(change func(*StageRare)) {
	r := s.Rare()
	change(&r)
	s.SetRare(r)
}

// ErrorText is the stage's error as its file says it, "" when none.
func (s *Stage) ErrorText() string {
	if s.rare == nil {
		return ""
	}
	return s.rare.Error
}

// SkipReason is why the stage was skipped, "" when not said.
func (s *Stage) SkipReason() string {
	if s.rare == nil {
		return ""
	}
	return s.rare.SkipReason
}

// RawStatus is the status word as written on disk, kept when it is not one we know.
func (s *Stage) RawStatus() string {
	if s.rare == nil {
		return ""
	}
	return s.rare.RawStatus
}

// OutputFiles are a jonggrang phase's output_files.
func (s *Stage) OutputFiles() []OutputFile {
	if s.rare == nil {
		return nil
	}
	return s.rare.OutputFiles
}

// Warnings are facts about this stage a person must know before acting on it.
func (s *Stage) Warnings() []string {
	if s.rare == nil {
		return nil
	}
	return s.rare.Warnings
}

// StartedText is started_at as the file spells it when that is not JSON's own spelling, else "".
func (s *Stage) StartedText() string {
	if s.rare == nil {
		return ""
	}
	return s.rare.StartedText
}

// CompletedText is completed_at as the file spells it when that is not JSON's own spelling, else "".
func (s *Stage) CompletedText() string {
	if s.rare == nil {
		return ""
	}
	return s.rare.CompletedText
}

// SetError sets the stage's error.
func (s *Stage) SetError(e string) { s.edit(func(r *StageRare) { r.Error = e }) }

// SetSkipReason sets why the stage was skipped.
func (s *Stage) SetSkipReason(why string) { s.edit(func(r *StageRare) { r.SkipReason = why }) }

// SetRawStatus sets the status word as written on disk.
func (s *Stage) SetRawStatus(word string) { s.edit(func(r *StageRare) { r.RawStatus = word }) }

// SetOutputFiles sets a jonggrang phase's output_files.
func (s *Stage) SetOutputFiles(files []OutputFile) {
	s.edit(func(r *StageRare) { r.OutputFiles = files })
}

// SetWarnings sets the stage's warnings.
func (s *Stage) SetWarnings(w []string) { s.edit(func(r *StageRare) { r.Warnings = w }) }

// OrderUnknown reports whether nothing settles the stage's place in the order (StageRare.OrderUnknown).
func (s *Stage) OrderUnknown() bool { return s.rare != nil && s.rare.OrderUnknown }

// SetOrderUnknown marks whether nothing settles the stage's place in the order.
func (s *Stage) SetOrderUnknown(unknown bool) {
	if unknown != s.OrderUnknown() {
		s.edit(func(r *StageRare) { r.OrderUnknown = unknown })
	}
}

// Duration is the time a stage took (or has taken so far, given now); zero when unknown.
func (s Stage) Duration(now time.Time) time.Duration {
	if s.StartedAt == nil {
		return 0
	}
	end := now
	if s.CompletedAt != nil {
		end = *s.CompletedAt
	}
	if end.Before(*s.StartedAt) {
		return 0
	}
	return end.Sub(*s.StartedAt)
}

// ChecklistItem is one CB_<STAGE>_<ITEM> key.
type ChecklistItem struct {
	Key  string `json:"key"`
	Done bool   `json:"done"`
	// Raw is the value as written, kept so a value other than 0/1 can be shown.
	Raw string `json:"raw,omitempty"`
}

// OutputFile is an entry of a jonggrang phase's output_files.
type OutputFile struct {
	Path      string     `json:"path"`
	Type      string     `json:"type"`
	Size      *int64     `json:"size"`
	CreatedAt *time.Time `json:"created_at"`
	AgentID   string     `json:"agent_id,omitempty"`
	TaskID    string     `json:"task_id,omitempty"`
	// CreatedText is CreatedAt as the file spells it (see TimeText).
	CreatedText string `json:"-"`
}

// Flag is a boolean of a run: validation (jonggrang), finalization and push (resumable).
type Flag struct {
	Group string `json:"group"`
	Name  string `json:"name"`
	Value bool   `json:"value"`
	Raw   string `json:"raw,omitempty"`
}

// Lock is a lock file with its liveness verdict. The verdict is always explained by Reasons.
type Lock struct {
	Path       string     `json:"path"`
	Holder     string     `json:"holder"`
	PID        int        `json:"pid"`
	Host       string     `json:"host"`
	User       string     `json:"user"`
	RunID      string     `json:"run_id,omitempty"`
	Files      []string   `json:"files,omitempty"`
	AcquiredAt *time.Time `json:"acquired_at"`
	AgeSeconds int64      `json:"age_seconds"`
	Verdict    Verdict    `json:"verdict"`
	Reasons    []string   `json:"reasons"`
	// JudgedOn names the machine (as runwatch reaches it) whose processes decided the verdict, when that is
	// not this one: the lock names another host, and runwatch asked that host over ssh.
	JudgedOn string `json:"judged_on,omitempty"`
	// ParseError is set when the lock's bytes could not be understood; such a lock is judged stale.
	ParseError string `json:"parse_error,omitempty"`
	// Raw is the lock file's content as read (capped), logged verbatim when the lock is cleared.
	Raw string `json:"-"`
	// Kind is the convention whose rules judge this lock.
	Kind Kind `json:"-"`
	// Shared marks a project lock that no run of the project claims (jonggrang): it is shown on every
	// incomplete run of the project, but it is not this run's, so it never decides the run's status.
	Shared bool `json:"shared,omitempty"`
	// age is the reason that holds the lock's age, rendered again at any instant by ReasonsAt.
	age ageText
}

// Problem is something wrong with a run. Code is a stable kebab-case identifier.
type Problem struct {
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Path     string   `json:"path,omitempty"`
}

// Gate is an ephemeral jonggrang gate (feedback loop, compaction) or a resumable gate.
type Gate struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Blocked bool   `json:"blocked"`
	Detail  string `json:"detail"`
	age     ageText
}

// LogRef points at a run's log.
type LogRef struct {
	Path      string `json:"path"`
	SizeBytes int64  `json:"size_bytes"`
	// Undone are the ids of runwatch's actions that a later `runwatch_undo` entry undid (the latest 64,
	// oldest first): the log's entries with tool=runwatch and one of these action_ids no longer hold.
	Undone []string `json:"undone,omitempty"`
}

// IsUndone reports whether e is an entry runwatch wrote for an action that was undone since.
func (l *LogRef) IsUndone(e LogEntry) bool {
	if l == nil || len(l.Undone) == 0 {
		return false
	}
	var tool, id string
	for _, f := range e.Fields {
		switch f.Key {
		case "tool":
			tool = f.Value
		case "action_id":
			id = f.Value
		}
	}
	return tool == "runwatch" && id != "" && slices.Contains(l.Undone, id)
}

// LogEntry is one run.log entry: a `[timestamp] message` line and the continuation lines under it.
type LogEntry struct {
	Time         time.Time `json:"time"`
	HasTime      bool      `json:"-"`
	Message      string    `json:"message"`
	Event        string    `json:"event,omitempty"`
	Fields       []KV      `json:"fields,omitempty"`
	Continuation []string  `json:"continuation,omitempty"`
	// Offset is the byte offset of the entry's first line in the log.
	Offset int64 `json:"offset"`
	Level  Level `json:"level,omitempty"`
}

// KV is one key=value pair of a log line, in the order written.
type KV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Level classifies a log entry for highlighting and error jumps.
type Level string

const (
	LevelNone  Level = ""
	LevelError Level = "error"
	LevelWarn  Level = "warn"
	LevelGood  Level = "good"
)

// JonggrangDetail carries what only jonggrang runs have.
type JonggrangDetail struct {
	WorkType      string            `json:"work_type"`
	PipelineMode  string            `json:"pipeline_mode"`
	HasUI         bool              `json:"has_ui"`
	CreatedAt     *time.Time        `json:"created_at"`
	ContextUsage  *float64          `json:"context_usage"`
	ActivePhases  []string          `json:"active_phases"`
	Agents        []Agent           `json:"agents"`
	PhaseOutputs  []PhaseOutput     `json:"phase_outputs"`
	Tasks         []Task            `json:"tasks"`
	ProgressTail  []string          `json:"progress_tail"`
	Interruptions []time.Time       `json:"interruptions,omitempty"`
	Feedback      *FeedbackGate     `json:"feedback,omitempty"`
	Compaction    *CompactionGate   `json:"compaction,omitempty"`
	SessionRoles  map[string]string `json:"session_roles,omitempty"`
	Groups        []Group           `json:"groups,omitempty"`
	// WorktreeCopyOf is the path of the manifest that was actually read when a live parallel worker keeps its
	// own copy in a worktree; the run's StatePath stays the (stale) main copy.
	WorktreeCopyOf string `json:"worktree_copy_of,omitempty"`
	// CreatedText is CreatedAt as the file spells it (see TimeText).
	CreatedText string `json:"-"`
}

// Agent is an entry of a jonggrang manifest's agents map.
type Agent struct {
	ID          string     `json:"id"`
	Role        string     `json:"role"`
	Status      string     `json:"status"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	LockedFiles []string   `json:"locked_files"`
	// StartedText and CompletedText are the times as the file spells them (see TimeText).
	StartedText   string `json:"-"`
	CompletedText string `json:"-"`
}

// PhaseOutput is a NN-<role>-<suffix>.json file, reduced to what a person (or a resume brief) needs.
type PhaseOutput struct {
	File      string     `json:"file"`
	Phase     string     `json:"phase"`
	Role      string     `json:"role"`
	TaskID    string     `json:"task_id,omitempty"`
	AgentID   string     `json:"agent_id,omitempty"`
	Status    string     `json:"status"`
	Timestamp *time.Time `json:"timestamp"`
	// Summary lines drawn from the role payload (tasks, files, verdict, test totals).
	Summary []string `json:"summary"`
	Error   string   `json:"error,omitempty"`
	// Payload facts the resume brief uses.
	Approved     *bool    `json:"approved,omitempty"`
	TestsPassed  *bool    `json:"tests_passed,omitempty"`
	RequiredFix  []string `json:"required_fixes,omitempty"`
	FailedTests  []string `json:"failed_tests,omitempty"`
	FilesTouched []string `json:"files,omitempty"`
}

// Task is an entry of jonggrang-tasks.json.
type Task struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

// FeedbackGate is .ephemeral/feedback-loop-state.json, judged.
type FeedbackGate struct {
	Active         bool     `json:"active"`
	Iteration      int      `json:"iteration"`
	DirtyBit       bool     `json:"dirty_bit"`
	StuckCount     int      `json:"stuck_count"`
	BlockedDomains []string `json:"blocked_domains"`
	Blocked        bool     `json:"blocked"`
	Escalation     bool     `json:"escalation"`
}

// CompactionGate is .ephemeral/compaction-state.json.
type CompactionGate struct {
	Status  string  `json:"status"`
	Ratio   float64 `json:"ratio"`
	Tokens  *int64  `json:"tokens"`
	Message string  `json:"message"`
	// UpdatedAt is when the state was measured. Stale is set when that is longer ago than the convention's
	// gate trusts (5 minutes): the gate then ignores the file and measures again, so it blocks nothing.
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
	Stale     bool       `json:"stale,omitempty"`
	// TrustedUntil is when a state not yet stale becomes so (the reader knows the gate's rule): time alone
	// changes the gate then, so a watcher reads the run again at that instant (JudgementComesAt).
	TrustedUntil time.Time `json:"-"`
}

// Group is a parallel-run group from .ephemeral/orchestration-run.json, with pid liveness judged.
type Group struct {
	FeatureID    string `json:"feature_id"`
	Title        string `json:"title"`
	Status       string `json:"status"`
	PID          int    `json:"pid"`
	Alive        bool   `json:"alive"`
	Interrupted  bool   `json:"interrupted"`
	WorktreePath string `json:"worktree_path"`
	Error        string `json:"error,omitempty"`
}

// ResumableDetail carries what only resumable runs have.
type ResumableDetail struct {
	RunID         string       `json:"run_id"`
	TaskName      string       `json:"task_name"`
	ChecklistPath string       `json:"checklist_path"`
	LockFile      string       `json:"lock_file"`
	Keys          KVs          `json:"keys"`
	ChecklistKeys KVs          `json:"checklist_keys"`
	ResumeHint    string       `json:"resume_hint,omitempty"`
	ResumeTarget  string       `json:"resume_target,omitempty"`
	LastCompleted string       `json:"last_completed,omitempty"`
	Checkpoints   []Checkpoint `json:"checkpoints,omitempty"`
	Ledger        []LedgerRow  `json:"ledger,omitempty"`
	Artifacts     []string     `json:"artifacts,omitempty"`
	// StageOrderSource says how stage order was derived: "config", "STAGE_ORDER", "stage_schema", "plan",
	// "natural", "run.log", "checkpoints", "state.env", "evidence" (several of those), "none".
	StageOrderSource string `json:"stage_order_source"`
	// PlanPath is the plan (state.env's PLAN_PATH, as found here) that was read because the other files left
	// the stage order open; PlanNote says why it did not settle the order, when it did not.
	PlanPath string `json:"plan_path,omitempty"`
	PlanNote string `json:"plan_note,omitempty"`
	// StageOrderUncertain is true when some stage's place is not settled (those stages have OrderUnknown).
	StageOrderUncertain bool `json:"stage_order_uncertain,omitempty"`
	// StageOrderEvidence says in words what decided the order, and what was ignored as contradictory.
	StageOrderEvidence []string `json:"stage_order_evidence,omitempty"`
	// StageNext maps a stage key to the stage known to come right after it ("" = known last). A stage not in
	// the map has no known successor, so step refuses to guess one.
	StageNext StageLinks `json:"stage_next,omitzero"`
	// ReopensWithoutCheckpoint: this run's writer (the mining tool) reopens, on its next start, every stage
	// marked done whose checkpoint file is missing.
	ReopensWithoutCheckpoint bool `json:"reopens_without_checkpoint,omitempty"`
	// CheckpointDir is where <stage>.done.json files are looked for.
	CheckpointDir string `json:"checkpoint_dir,omitempty"`
	// LastError is state.env's LAST_ERROR; Blocked the run.log's stage_blocked entry when it is the latest
	// word on the current stage.
	LastError string        `json:"last_error,omitempty"`
	Blocked   *StageBlocked `json:"blocked,omitempty"`
}

// StageBlocked is a `stage_blocked stage=X failed_metrics=a,b` entry of run.log.
type StageBlocked struct {
	Stage         string     `json:"stage"`
	FailedMetrics []string   `json:"failed_metrics"`
	Message       string     `json:"message"`
	Time          *time.Time `json:"time"`
}

// NextStage returns the stage known to come right after key ("" when key is known to be last); known is
// false when nothing on disk settles it.
func (d *ResumableDetail) NextStage(key string) (next string, known bool) {
	if d == nil {
		return "", false
	}
	for k, v := range d.StageNext.All() {
		if equalFold(k, key) {
			return v, true
		}
	}
	return "", false
}

// Value returns a state.env key's value.
func (d *ResumableDetail) Value(key string) (string, bool) { return d.Keys.Value(key) }

// Checkpoint is artifacts/checkpoints/<stage>.done.json. Its JSON is {"file", "stage", "status",
// "timestamp"} (MarshalJSON).
type Checkpoint struct {
	// dir and name make the file's path (File): a run's checkpoints share their folder's string and the
	// names are words runs repeat, where a path of its own was ~110 bytes a checkpoint (issue 35). A path
	// set whole (SetFile) is dir, with no name.
	dir, name string
	Stage     string
	Status    string
	Timestamp *time.Time
}

// CheckpointIn is the checkpoint in folder dir named name: its file is filepath.Join(dir, name).
func CheckpointIn(dir, name string) Checkpoint { return Checkpoint{dir: dir, name: name} }

// NewCheckpoint is the checkpoint whose file is path, whole.
func NewCheckpoint(path, stage, status string, at *time.Time) Checkpoint {
	return Checkpoint{dir: path, Stage: stage, Status: status, Timestamp: at}
}

// SetFile sets the checkpoint's path whole (as a decoder reads it).
func (c *Checkpoint) SetFile(path string) { c.dir, c.name = path, "" }

// File is the checkpoint's path.
func (c *Checkpoint) File() string {
	if c.name == "" {
		return c.dir
	}
	return ChildPath(c.dir, c.name)
}

// ChildPath is filepath.Join(dir, name) for a clean dir (as filepath.Clean leaves it) and one name in it (no
// separator, not "." or ".."), without Join's Clean: a status makes one for every entry of every folder it
// walks and every file of every run.
func ChildPath(dir, name string) string {
	switch {
	case dir == "" || dir == ".":
		return name
	case strings.HasSuffix(dir, string(filepath.Separator)):
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}

// Dir is the folder of a checkpoint made by CheckpointIn ("" for a path set whole).
func (c *Checkpoint) Dir() string {
	if c.name == "" {
		return ""
	}
	return c.dir
}

// sameFile reports whether c and o name the same file.
func (c *Checkpoint) sameFile(o *Checkpoint) bool {
	return (c.dir == o.dir && c.name == o.name) || c.File() == o.File()
}

// LedgerRow is a recorded commit: an entry of artifacts/commits/commit-ledger.json, or one commit of a stage
// in artifacts/evidence/stage-commit-ledger.json (docs/FORMATS.md C.1).
type LedgerRow struct {
	Checkpoint string     `json:"stage_checkpoint"`
	SHA        string     `json:"commit_sha"`
	Subject    string     `json:"subject"`
	Timestamp  *time.Time `json:"timestamp"`
	// Stages are the stage ids the entry names: the ids of a label such as C03-M4-M5, or the stages key.
	Stages []string `json:"stages"`
	// File is the ledger the row came from.
	File string `json:"file,omitempty"`
}

// Snapshot is the whole `status --json` document.
type Snapshot struct {
	Schema      int       `json:"schema"`
	GeneratedAt time.Time `json:"generated_at"`
	Host        string    `json:"host"`
	// Protocol is the version of runwatch-to-runwatch output (remote roots read this document over ssh).
	Protocol int `json:"protocol,omitempty"`
	// Hosts is the health of every remote host asked, when remote roots were given.
	Hosts []HostHealth `json:"hosts,omitempty"`
	// Runs stays the last field: status writes the runs into the document's end on every core.
	Runs []Run `json:"runs"`
}

// HostState is how well runwatch sees a remote host.
type HostState string

const (
	HostConnecting   HostState = "connecting"
	HostLive         HostState = "live"
	HostReconnecting HostState = "reconnecting"
	HostFailed       HostState = "failed"
)

// HostHealth is one remote host's connection, as the footer, status and events show it.
type HostHealth struct {
	Host  string    `json:"host"`
	State HostState `json:"state"`
	// Error is the last failure in words (ssh's own message, or why the remote runwatch cannot serve).
	Error string `json:"error,omitempty"`
	// RetryAt is when the next connection attempt starts, while reconnecting.
	RetryAt *time.Time `json:"retry_at,omitempty"`
	// Since is when State began; LastSeen is when the host last said anything.
	Since    time.Time  `json:"since"`
	LastSeen *time.Time `json:"last_seen,omitempty"`
	// WatchMode and WatchError are the remote watcher's own health (inotify, polling, its error).
	WatchMode  string `json:"watch_mode,omitempty"`
	WatchError string `json:"watch_error,omitempty"`
	Runs       int    `json:"runs"`
}

// SchemaVersion of Snapshot.
const SchemaVersion = 1

// HasErrors reports whether the run has an error-severity problem (a stop condition).
func (r *Run) HasErrors() bool {
	for _, p := range r.Problems {
		if p.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Stage returns the stage with the given key (case-insensitive), or nil.
func (r *Run) Stage(key string) *Stage {
	for i := range r.Stages {
		if equalFold(r.Stages[i].Key, key) {
			return &r.Stages[i]
		}
	}
	return nil
}

// ShownStage is the stage a run is shown at (STAGE in the dashboard and status): its current stage, or,
// completed without one (a finished jonggrang run's current_phase is null), its last completed stage, as a
// completed resumable run shows the CURRENT_STAGE it ended at.
func (r *Run) ShownStage() string {
	if r.CurrentStage != "" || r.Status != StatusCompleted {
		return r.CurrentStage
	}
	for i := len(r.Stages) - 1; i >= 0; i-- {
		if r.Stages[i].Status == StageCompleted {
			return r.Stages[i].Key
		}
	}
	return ""
}

// AddProblem appends a problem.
func (r *Run) AddProblem(sev Severity, code, path, msg string) {
	r.Problems = append(r.Problems, Problem{Severity: sev, Code: code, Message: msg, Path: path})
}
