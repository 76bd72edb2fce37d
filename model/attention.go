package model

import (
	"fmt"
	"strings"
	"time"

	"runwatch/shellword"
)

// Action names what a person can do next about a run, independently of how it is invoked: the dashboard maps
// it to a (remappable) key, the CLI to a subcommand. The values are part of the JSON schema.
type Action string

const (
	ActionNone    Action = ""
	ActionUnlock  Action = "unlock"  // clear a stale lock
	ActionStep    Action = "step"    // mark the current stage done and move on
	ActionCheck   Action = "check"   // tick the current stage's open checklist items
	ActionRetry   Action = "retry"   // reset a failed phase
	ActionResume  Action = "resume"  // start the agent again (the resume brief and command)
	ActionBrief   Action = "brief"   // read the resume brief: what the person must decide is in it
	ActionInspect Action = "inspect" // look at the run's problems and fix the files by hand
)

// Attention codes: why a run does or does not need a person. Part of the JSON schema: add, never rename.
const (
	AttentionStaleLock     = "stale-lock"
	AttentionCrashed       = "crashed"
	AttentionAwaitingInput = "awaiting-input"
	AttentionBlocked       = "blocked"
	AttentionStageBlocked  = "stage-blocked"
	AttentionFailed        = "failed"
	AttentionUnknownLock   = "unknown-lock"
	AttentionUnknown       = "unknown-state"
	AttentionRunning       = "running"
	AttentionPaused        = "paused"
	AttentionCompleted     = "completed"
	AttentionArchived      = "archived"
	// Judged by the clock (JudgeTime): a jonggrang phase marked running that nothing alive runs, unwritten
	// past the grace; a resumable run whose live lock holder has written nothing for far longer than its
	// stage usually takes.
	AttentionOrphaned = "orphaned"
	AttentionQuiet    = "quiet"
)

// Attention is the one judgement of whether a run needs a person, why, and what to do: the runs list, the
// header count, Detail, status, events, notifications and the brief all show this and decide nothing
// themselves.
type Attention struct {
	NeedsYou bool `json:"needs_you"`
	// Rank orders runs for a person: lower first. Runs that need someone rank below 10.
	Rank int `json:"rank"`
	// Code is a stable kebab-case identifier (the Attention* constants).
	Code string `json:"code"`
	// Reason is plain words, built from run files: untrusted text, sanitise it where it is rendered.
	Reason string `json:"reason"`
	// Action is what settles it; Command is the same as a command line for the run.
	Action  Action `json:"action,omitempty"`
	Command string `json:"command,omitempty"`

	// A reason that holds an age keeps it apart (age), so it is rendered at frame time (ReasonAt) instead
	// of frozen at read time. recheck is when the clock alone changes the judgement (JudgeTime). Plain
	// values, so an Attention stays comparable.
	age     aged
	recheck instant
}

// Judge returns the run's attention. It reads only the run (status, locks, problems, stages), so it is
// computed once by FinalizeRun and stays true until the run is read again.
func Judge(r *Run) Attention {
	cmd := func(a Action, extra ...string) string {
		// `runwatch resume` only flips a paused jonggrang manifest back; every other run is resumed by
		// starting its agent again, and on a command line that starts from the resume brief.
		if a == ActionResume && !(r.Kind == KindJonggrang && strings.EqualFold(strings.TrimSpace(r.RawStatus), "paused")) {
			a = ActionBrief
		}
		parts := append([]string{"runwatch", string(a), shellword.Quote(r.ID)}, extra...)
		return strings.Join(parts, " ")
	}
	need := func(rank int, code, reason string, a Action) Attention {
		at := Attention{NeedsYou: true, Rank: rank, Code: code, Reason: reason, Action: a}
		if a != ActionNone && a != ActionInspect {
			at.Command = cmd(a)
		}
		if a == ActionInspect {
			at.Command = cmd("status") + " --json"
		}
		return at
	}
	calm := func(rank int, code, reason string, a Action) Attention {
		at := Attention{Rank: rank, Code: code, Reason: reason, Action: a}
		if a != ActionNone {
			at.Command = cmd(a)
		}
		return at
	}

	if r.Archived {
		return calm(19, AttentionArchived, "archived: history, nothing to do", ActionNone)
	}
	switch r.Status {
	case StatusStalled:
		if l, ok := firstLock(r, VerdictStale); ok {
			return lockAged(need(0, AttentionStaleLock, staleLockReason(l), ActionUnlock), l)
		}
		reason := "claims to run, but nothing is running it"
		if len(r.CrashSigns) > 0 {
			reason = r.CrashSigns[0]
		}
		at := need(0, AttentionCrashed, reason, ActionResume)
		for _, l := range r.Locks {
			at = lockAged(at, l)
		}
		return at
	case StatusAwaitingInput:
		return need(1, AttentionAwaitingInput, awaitingReason(r), ActionBrief)
	case StatusBlocked:
		if p, ok := firstProblem(r, SeverityError); ok {
			if p.Code == CodeStageBlocked {
				return need(2, AttentionStageBlocked, p.Message, ActionBrief)
			}
			return need(2, AttentionBlocked, p.Message, ActionInspect)
		}
		return need(2, AttentionBlocked, "blocked", ActionInspect)
	case StatusFailed:
		if s, ok := firstStage(r, StageFailed); ok {
			reason := fmt.Sprintf("%s %s failed", r.Kind.StageWord(), stageLabel(s))
			if e := strings.TrimSpace(s.ErrorText()); e != "" {
				reason += ": " + firstLine(e)
			}
			a := ActionRetry
			if r.Kind != KindJonggrang {
				a = ActionBrief
			}
			return need(3, AttentionFailed, reason, a)
		}
		return need(3, AttentionFailed, "the run says it failed", ActionBrief)
	}
	// A stage the writer reported blocked is a person's job even when nothing else is wrong with the run.
	if p, ok := firstProblemCode(r, CodeStageBlocked); ok {
		return need(2, AttentionStageBlocked, p.Message, ActionBrief)
	}
	if r.Status != StatusRunning {
		if l, ok := firstLock(r, VerdictStale); ok && !l.Shared {
			return lockAged(need(4, AttentionStaleLock, staleLockReason(l), ActionUnlock), l)
		}
	}
	switch r.Status {
	case StatusRunning:
		return calm(10, AttentionRunning, "running "+currentLabel(r), ActionNone)
	case StatusPaused:
		if l, ok := firstLock(r, VerdictUnknown); ok && !l.Shared {
			return lockAged(calm(11, AttentionUnknownLock, "paused; lock "+lockWho(l)+": "+strings.Join(l.Reasons, "; "), ActionUnlock), l)
		}
		if r.Kind == KindJonggrang && strings.EqualFold(strings.TrimSpace(r.RawStatus), "in_progress") {
			// Reopened: the manifest needs no change (runwatch resume refuses), only the orchestrator's own
			// resume, which the brief names.
			return calm(11, AttentionPaused, "reopened, waiting at "+currentLabel(r)+" for the orchestrator's own resume", ActionBrief)
		}
		return calm(11, AttentionPaused, "paused at "+currentLabel(r)+"; resume when ready", ActionResume)
	case StatusCompleted:
		return calm(13, AttentionCompleted, "completed", ActionNone)
	}
	return calm(12, AttentionUnknown, "its state cannot be judged from the files", ActionInspect)
}

// CodeStageBlocked is the problem of a stage whose writer logged stage_blocked or set LAST_ERROR: it stopped
// on a failed gate and waits for a person.
const CodeStageBlocked = "stage-blocked"

func staleLockReason(l Lock) string {
	if a, ok := deadPIDAge(l); ok {
		return a.was
	}
	why := strings.Join(l.Reasons, "; ")
	if why == "" {
		why = "judged stale"
	}
	return "stale lock " + lockWho(l) + ": " + why
}

// deadPIDAge is "lock held by dead pid 4242 (24m)", its age counted from the lock's acquired_at.
func deadPIDAge(l Lock) (ageText, bool) {
	if l.PID <= 0 || !strings.Contains(strings.Join(l.Reasons, "; "), "not running") {
		return ageText{}, false
	}
	on := ""
	if l.JudgedOn != "" {
		on = " on " + l.JudgedOn // the pid is another machine's: say whose, as the verdict was made there
	}
	head := fmt.Sprintf("lock held by dead pid %d%s (", l.PID, on)
	age := time.Duration(l.AgeSeconds) * time.Second
	if l.AcquiredAt == nil {
		return ageText{was: head + HumanDuration(age) + ")"}, true
	}
	// The instant it was judged at is acquired_at plus the age it had then.
	return newAgeText(head, *l.AcquiredAt, ")", age < 0, l.AcquiredAt.Add(age)), true
}

func lockWho(l Lock) string {
	if l.Holder != "" {
		return "of " + l.Holder
	}
	if l.PID > 0 {
		return fmt.Sprintf("of pid %d", l.PID)
	}
	return "at " + l.Path
}

func awaitingReason(r *Run) string {
	for _, s := range r.Stages {
		if s.Status == StageFailed && strings.HasPrefix(strings.TrimSpace(s.ErrorText()), AwaitingInputPrefix) {
			return fmt.Sprintf("waiting for your answer at %s %s", r.Kind.StageWord(), stageLabel(s))
		}
	}
	return "waiting for your answer"
}

func currentLabel(r *Run) string {
	for _, s := range r.Stages {
		if s.Key == r.CurrentStage {
			return r.Kind.StageWord() + " " + stageLabel(s)
		}
	}
	if r.CurrentStage != "" {
		return r.Kind.StageWord() + " " + r.CurrentStage
	}
	return "its current " + r.Kind.StageWord()
}

func stageLabel(s Stage) string {
	if s.Name != "" && s.Name != s.Key {
		return s.Key + " (" + s.Name + ")"
	}
	return s.Key
}

func firstLock(r *Run, v Verdict) (Lock, bool) {
	for _, l := range r.Locks {
		if l.Verdict == v && !l.Shared {
			return l, true
		}
	}
	for _, l := range r.Locks {
		if l.Verdict == v {
			return l, true
		}
	}
	return Lock{}, false
}

func firstProblem(r *Run, sev Severity) (Problem, bool) {
	for _, p := range r.Problems {
		if p.Severity == sev {
			return p, true
		}
	}
	return Problem{}, false
}

func firstProblemCode(r *Run, code string) (Problem, bool) {
	for _, p := range r.Problems {
		if p.Code == code {
			return p, true
		}
	}
	return Problem{}, false
}

func firstStage(r *Run, st StageStatus) (Stage, bool) {
	for _, s := range r.Stages {
		if s.Status == st {
			return s, true
		}
	}
	return Stage{}, false
}

func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// AgentSettles reports whether what settles the run is said to its agent rather than done by runwatch: the
// question it waits on, a holder gone quiet to look at. The dashboard offers to go to the agent's pane then.
func (a Attention) AgentSettles() bool {
	return a.NeedsYou && (a.Code == AttentionAwaitingInput || a.Code == AttentionQuiet)
}

// LiveHolder reports whether the run names a process of its own that runs, as it was read: a lock judged
// live that names a pid, or a parallel worker marked running whose pid runs. Only such a run has an agent to
// look for in a pane (state/agentpane judges the same again at the moment it looks).
func (r *Run) LiveHolder() bool {
	for _, l := range r.Locks {
		if !l.Shared && l.Verdict == VerdictLive && l.PID > 0 {
			return true
		}
	}
	if r.Jonggrang != nil {
		for _, g := range r.Jonggrang.Groups {
			if g.PID > 0 && g.Alive && strings.EqualFold(g.Status, "running") {
				return true
			}
		}
	}
	return false
}
