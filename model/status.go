package model

import "strings"

// AwaitingInputPrefix marks a jonggrang phase failed on purpose to wait for a person (phase 6 brainstorming).
const AwaitingInputPrefix = "Awaiting human input"

// JonggrangSteppable says whether step may complete a jonggrang run's current phase: the run (its manifest
// status) is paused, or the phase waits for input. The plan asks it of the manifest, and the dashboard of the
// run as read, so the footer, help's "(not here)" and the refusal agree.
func JonggrangSteppable(runStatus, phaseStatus, phaseError string) bool {
	return runStatus == "paused" || phaseStatus == string(StageFailed) && strings.HasPrefix(strings.TrimSpace(phaseError), AwaitingInputPrefix)
}

// NoRetryAwaiting is what the brief and a retry's confirmation say about retrying a phase that waits for a
// person: in supervised mode the orchestrator fails it on purpose every time it reaches it.
const NoRetryAwaiting = "Do not retry the phase: in supervised mode it fails again the same way."

// FinalizeRun fills Progress and Status from the rest of the run. Readers call it last.
func FinalizeRun(r *Run) {
	r.Progress = Progress{Total: len(r.Stages)}
	for _, s := range r.Stages {
		if s.Status.Done() {
			r.Progress.Done++
		}
	}
	r.Status = DeriveStatus(r)
	r.Attention = Judge(r)
}

// DeriveStatus applies the documented rules, first match wins:
// completed → running → blocked → stalled → awaiting-input → failed → paused → unknown.
func DeriveStatus(r *Run) RunStatus {
	raw := strings.ToLower(strings.TrimSpace(r.RawStatus))
	allDone := len(r.Stages) > 0
	for _, s := range r.Stages {
		if !s.Status.Done() {
			allDone = false
		}
	}
	if allDone {
		switch r.Kind {
		case KindJonggrang:
			if raw == "completed" {
				return StatusCompleted
			}
		default:
			if finalizationComplete(r) {
				return StatusCompleted
			}
		}
	}

	liveLock, staleLocks, ownLocks := false, 0, 0
	for _, l := range r.Locks {
		if l.Shared {
			continue
		}
		ownLocks++
		switch l.Verdict {
		case VerdictLive:
			liveLock = true
		case VerdictStale:
			staleLocks++
		}
	}
	liveGroup := false
	if r.Jonggrang != nil {
		for _, g := range r.Jonggrang.Groups {
			if g.Alive && g.FeatureID == r.ID {
				liveGroup = true
			}
		}
	}
	// Only `running` claims that an orchestrator works on the run: `in_progress` is what a reopen (the web
	// server's, reopenCompactPhases, runwatch's retry) writes, and means "waiting to be resumed".
	claimsRunning := r.Kind == KindJonggrang && raw == "running"
	if liveLock || liveGroup || (claimsRunning && len(r.CrashSigns) == 0) {
		return StatusRunning
	}
	if r.HasErrors() {
		return StatusBlocked
	}
	if (ownLocks > 0 && staleLocks == ownLocks) || (claimsRunning && len(r.CrashSigns) > 0) {
		return StatusStalled
	}
	for _, s := range r.Stages {
		if s.Status == StageFailed && strings.HasPrefix(strings.TrimSpace(s.ErrorText()), AwaitingInputPrefix) {
			return StatusAwaitingInput
		}
	}
	if raw == "failed" {
		return StatusFailed
	}
	for _, s := range r.Stages {
		if s.Status == StageFailed {
			return StatusFailed
		}
	}
	if r.Kind == KindJonggrang && (raw == "paused" || raw == "in_progress") {
		return StatusPaused
	}
	if r.Kind == KindResumable && len(r.Stages) > 0 && !allDone {
		return StatusPaused
	}
	if r.Kind == KindResumable && allDone {
		// Every stage is done but finalization is not: nothing holds the run, work remains.
		return StatusPaused
	}
	return StatusUnknown
}

// FinalizationFlags are the resumable convention's run-closing flags.
var FinalizationFlags = []string{"CANONICAL_STATE_UPDATED", "REPORT_APPENDED", "RUN_SUMMARY_UPDATED"}

// FlagGroupFinalization etc. are the Flag.Group values.
const (
	FlagGroupValidation   = "validation"
	FlagGroupFinalization = "finalization"
	FlagGroupPush         = "push"
)

func finalizationComplete(r *Run) bool {
	seen := 0
	for _, f := range r.Flags {
		if f.Group == FlagGroupFinalization {
			seen++
			if !f.Value {
				return false
			}
		}
	}
	// A run whose state.env carries no finalization flags at all has nothing left to finalize.
	return seen >= 0
}

// StoppedAt says whether stage st is where run r stopped, and as what: the current, unfinished stage of a run
// judged stalled (nothing runs it, the orchestrator or the lock's holder is gone) or blocked (it waits at a
// gate for a person) is not being run, whatever its file says ("running", "pending", "failed"), so it reads
// as the run does. Detail's stage line, its Time bar and the brief all ask here: Detail said `▶ 4
// skill-discovery running` under a run the header and the Runs row called stalled.
func (r *Run) StoppedAt(st *Stage) (RunStatus, bool) {
	if st == nil || st.Status.Done() || !equalFold(st.Key, r.CurrentStage) {
		return "", false
	}
	if r.Status == StatusStalled || r.Status == StatusBlocked {
		return r.Status, true
	}
	return "", false
}
