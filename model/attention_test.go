package model

import (
	"strings"
	"testing"
)

func TestJudgeSaysWhoNeedsYouWhyAndWhatToDo(t *testing.T) {
	staleLock := Lock{Path: "/r/run.lock", PID: 4242, AgeSeconds: 22 * 60, Verdict: VerdictStale,
		Reasons: []string{"pid 4242 is not running on this host"}}
	unknownLock := Lock{Path: "/r/run.lock", PID: 123, Host: "other-host", Verdict: VerdictUnknown,
		Reasons: []string{"held on other-host; liveness cannot be checked here"}}
	cases := []struct {
		name     string
		run      Run
		needsYou bool
		code     string
		reason   string
		action   Action
		command  string
	}{
		{"dead pid lock", Run{ID: "irm-1", Kind: KindResumable, Status: StatusStalled, Locks: []Lock{staleLock}},
			true, AttentionStaleLock, "lock held by dead pid 4242 (22m)", ActionUnlock, "runwatch unlock irm-1"},
		{"crashed jonggrang", Run{ID: "f-1", Kind: KindJonggrang, Status: StatusStalled,
			CrashSigns: []string{"orchestration group pid 999999 is not running"}},
			true, AttentionCrashed, "orchestration group pid 999999 is not running", ActionResume, "runwatch brief f-1"},
		{"awaiting input", Run{ID: "f-2", Kind: KindJonggrang, Status: StatusAwaitingInput,
			Stages: []Stage{Stage{Key: "6", Name: "brainstorming", Status: StageFailed}.WithRare(StageRare{Error: "Awaiting human input (brainstorming)"})}},
			true, AttentionAwaitingInput, "waiting for your answer at phase 6 (brainstorming)", ActionBrief, "runwatch brief f-2"},
		{"blocked by an error problem", Run{ID: "s-1", Kind: KindResumable, Status: StatusBlocked,
			Problems: []Problem{{Severity: SeverityWarning, Code: CodeLockStale, Message: "w"},
				{Severity: SeverityError, Code: CodeStageDoneChecklistIncomplete, Message: "M3 is marked done but CB_M3_NO_LEGACY_TOKENS is 0"}}},
			true, AttentionBlocked, "M3 is marked done but CB_M3_NO_LEGACY_TOKENS is 0", ActionInspect, "runwatch status s-1 --json"},
		{"stage blocked without an error", Run{ID: "q-1", Kind: KindResumable, Status: StatusPaused,
			Problems: []Problem{{Severity: SeverityWarning, Code: CodeStageBlocked, Message: "stage EQ1 blocked: metrics a, b failed"}}},
			true, AttentionStageBlocked, "stage EQ1 blocked: metrics a, b failed", ActionBrief, "runwatch brief q-1"},
		{"failed phase", Run{ID: "f-3", Kind: KindJonggrang, Status: StatusFailed,
			Stages: []Stage{Stage{Key: "8", Name: "implementation", Status: StageFailed}.WithRare(StageRare{Error: "tests red\nsecond line"})}},
			true, AttentionFailed, "phase 8 (implementation) failed: tests red …", ActionRetry, "runwatch retry f-3"},
		{"paused with a stale lock", Run{ID: "s-2", Kind: KindResumable, Status: StatusPaused, Locks: []Lock{staleLock}},
			true, AttentionStaleLock, "lock held by dead pid 4242 (22m)", ActionUnlock, "runwatch unlock s-2"},
		{"healthy paused run is not a warning", Run{ID: "s-3", Kind: KindResumable, Status: StatusPaused, CurrentStage: "S2",
			Stages: []Stage{{Key: "S1", Status: StageCompleted}, {Key: "S2", Status: StagePending}}},
			false, AttentionPaused, "paused at stage S2; resume when ready", ActionResume, "runwatch brief s-3"},
		{"paused jonggrang manifest resumes with the subcommand", Run{ID: "f-9", Kind: KindJonggrang, Status: StatusPaused, RawStatus: "paused"},
			false, AttentionPaused, "paused", ActionResume, "runwatch resume f-9"},
		{"paused under another host's lock", Run{ID: "s-4", Kind: KindResumable, Status: StatusPaused, Locks: []Lock{unknownLock}},
			false, AttentionUnknownLock, "held on other-host", ActionUnlock, "runwatch unlock s-4"},
		{"running", Run{ID: "f-4", Kind: KindJonggrang, Status: StatusRunning, CurrentStage: "10",
			Stages: []Stage{{Key: "10", Name: "design-verification", Status: StageRunning}}},
			false, AttentionRunning, "running phase 10 (design-verification)", ActionNone, ""},
		{"running ignores a stale lock beside a live one", Run{ID: "f-5", Kind: KindJonggrang, Status: StatusRunning, Locks: []Lock{staleLock}},
			false, AttentionRunning, "running", ActionNone, ""},
		{"completed", Run{ID: "f-6", Kind: KindJonggrang, Status: StatusCompleted}, false, AttentionCompleted, "completed", ActionNone, ""},
		{"archived outranks what it says", Run{ID: "a-1", Kind: KindResumable, Status: StatusStalled, Archived: true, Locks: []Lock{staleLock}},
			false, AttentionArchived, "archived", ActionNone, ""},
		{"odd id is quoted for the shell", Run{ID: "x y';rm", Kind: KindJonggrang, Status: StatusFailed},
			true, AttentionFailed, "failed", ActionBrief, `runwatch brief 'x y'"'"';rm'`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := Judge(&c.run)
			if a.NeedsYou != c.needsYou || a.Code != c.code || a.Action != c.action || a.Command != c.command {
				t.Errorf("Judge = %+v, want needs_you=%v code=%s action=%s command=%q", a, c.needsYou, c.code, c.action, c.command)
			}
			if !strings.Contains(a.Reason, c.reason) {
				t.Errorf("reason %q does not say %q", a.Reason, c.reason)
			}
			if a.NeedsYou != (a.Rank < 10) {
				t.Errorf("rank %d disagrees with needs_you=%v", a.Rank, a.NeedsYou)
			}
		})
	}
}

func TestFinalizeRunSetsAttention(t *testing.T) {
	r := Run{ID: "s", Kind: KindResumable, Stages: []Stage{{Key: "S1", Status: StagePending}},
		Locks: []Lock{{PID: 7, Verdict: VerdictStale, Reasons: []string{"pid 7 is not running on this host"}}}}
	FinalizeRun(&r)
	if r.Status != StatusStalled || r.Attention.Code != AttentionStaleLock || !r.Attention.NeedsYou {
		t.Fatalf("status %s, attention %+v", r.Status, r.Attention)
	}
}

// Needing a person must rank above anything that does not, whatever the codes, so every list that sorts by
// Rank puts them first.
func TestNeedsYouAlwaysRanksFirst(t *testing.T) {
	statuses := []RunStatus{StatusRunning, StatusPaused, StatusAwaitingInput, StatusStalled, StatusFailed, StatusBlocked, StatusCompleted, StatusUnknown}
	for _, st := range statuses {
		for _, archived := range []bool{false, true} {
			a := Judge(&Run{ID: "r", Status: st, Archived: archived})
			if a.NeedsYou && a.Rank > 9 || !a.NeedsYou && a.Rank < 10 {
				t.Errorf("%s archived=%v: rank %d, needs_you %v", st, archived, a.Rank, a.NeedsYou)
			}
		}
	}
}
