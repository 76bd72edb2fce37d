package model

import (
	"strings"
	"testing"
	"time"
)

func TestSortNumericKeysPutsFractionalPhasesInPlace(t *testing.T) {
	keys := []string{"1", "2", "10", "17", "6", "6.5", "11.5", "7", "x"}
	SortNumericKeys(keys)
	want := "1 2 6 6.5 7 10 11.5 17 x"
	if got := strings.Join(keys, " "); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestNaturalSort(t *testing.T) {
	ids := []string{"M10", "M2", "M9B", "M9", "R10", "R1B", "R1", "CR12", "CR0", "m3", "EQ13", "EQ0"}
	SortNatural(ids)
	want := "CR0 CR12 EQ0 EQ13 M2 m3 M9 M9B M10 R1 R1B R10"
	if got := strings.Join(ids, " "); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestStageForChecklistKeyLongestPrefix(t *testing.T) {
	stages := []string{"M3", "M3B", "M7", "ingest", "S1", "S10"}
	cases := map[string]string{
		"CB_M3_NO_LEGACY_TOKENS":    "M3",
		"CB_M3B_X":                  "M3B",
		"CB_M3_M7_BLOCKER_CLEARED":  "M3",
		"CB_INGEST_HASHES_VERIFIED": "ingest",
		"CB_S10_VERIFY":             "S10",
		"CB_S1_VERIFY_GREEN":        "S1",
	}
	for key, want := range cases {
		got, ok := StageForChecklistKey(key, stages)
		if !ok || got != want {
			t.Errorf("%s → %q, %v; want %s", key, got, ok, want)
		}
	}
	for _, key := range []string{"CB_SCHEMA_SYNC", "RUN_ID", "CB_M4_X"} {
		if s, ok := StageForChecklistKey(key, stages); ok {
			t.Errorf("%s mapped to %s", key, s)
		}
	}
}

type fakeProc struct {
	alive   map[int]bool
	started map[int]time.Time
	kthread map[int]bool
}

func (f fakeProc) KernelThread(pid int) bool { return f.kthread[pid] }

func (f fakeProc) Alive(pid int) bool { return f.alive[pid] }
func (f fakeProc) StartTime(pid int) (time.Time, bool) {
	t, ok := f.started[pid]
	return t, ok
}

func TestJudgeLock(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := now.Add(-d); return &v }
	proc := fakeProc{
		alive:   map[int]bool{100: true, 200: true, 2: true},
		kthread: map[int]bool{2: true},
		started: map[int]time.Time{100: now.Add(-3 * time.Hour), 200: now.Add(-10 * time.Minute)},
	}
	env := Env{Now: now, Host: "box", StaleAfter: 30 * time.Minute, Proc: proc}
	cases := []struct {
		name    string
		lock    Lock
		verdict Verdict
		reason  string
	}{
		{"dead pid", Lock{PID: 4242, Kind: KindResumable, Host: "box", AcquiredAt: at(time.Minute)}, VerdictStale, "not running"},
		{"live pid", Lock{PID: 100, Kind: KindResumable, Host: "box.lan", AcquiredAt: at(time.Hour)}, VerdictLive, "pid 100 is running"},
		{"pid reused", Lock{PID: 200, Kind: KindResumable, AcquiredAt: at(time.Hour)}, VerdictStale, "pid reused"},
		{"other host", Lock{PID: 100, Kind: KindResumable, Host: "other-host"}, VerdictUnknown, "held on other-host"},
		{"unparsable", Lock{ParseError: "not JSON", Kind: KindJonggrang}, VerdictStale, "unparsable"},
		{"jonggrang old, no pid", Lock{Kind: KindJonggrang, AcquiredAt: at(2 * time.Hour)}, VerdictStale, "age 2h0m exceeds 30m"},
		{"jonggrang fresh, no pid", Lock{Kind: KindJonggrang, AcquiredAt: at(5 * time.Minute)}, VerdictLive, "within"},
		{"jonggrang no timestamp", Lock{Kind: KindJonggrang}, VerdictUnknown, "no usable timestamp"},
		{"jonggrang future timestamp", Lock{Kind: KindJonggrang, AcquiredAt: at(-48 * time.Hour)}, VerdictUnknown, "in the future"},
		{"resumable no pid", Lock{Kind: KindResumable, AcquiredAt: at(time.Minute)}, VerdictUnknown, "no pid"},
		{"kernel thread", Lock{PID: 2, Kind: KindJonggrang, AcquiredAt: at(time.Minute)}, VerdictStale, "kernel thread"},
		{"negative pid", Lock{PID: -1, Kind: KindResumable}, VerdictUnknown, "not a valid process id"},
		{"huge pid", Lock{PID: 1 << 30, Kind: KindResumable}, VerdictUnknown, "not a valid process id"},
		{"live but old", Lock{PID: 100, Kind: KindJonggrang, AcquiredAt: at(2 * time.Hour)}, VerdictLive, "but the process is alive"},
	}
	for _, c := range cases {
		l := c.lock
		JudgeLock(&l, env)
		if l.Verdict != c.verdict || !strings.Contains(strings.Join(l.Reasons, "; "), c.reason) {
			t.Errorf("%s: %s %v; want %s containing %q", c.name, l.Verdict, l.Reasons, c.verdict, c.reason)
		}
	}
}

func stages(statuses ...StageStatus) []Stage {
	out := make([]Stage, len(statuses))
	for i, s := range statuses {
		out[i] = Stage{Key: string(rune('1' + i)), Status: s}
	}
	return out
}

func TestDeriveStatusPrecedence(t *testing.T) {
	fin := func(v bool) []Flag {
		return []Flag{{Group: FlagGroupFinalization, Name: "REPORT_APPENDED", Value: v}}
	}
	cases := []struct {
		name string
		run  Run
		want RunStatus
	}{
		{"jonggrang completed", Run{Kind: KindJonggrang, RawStatus: "completed", Stages: stages(StageCompleted, StageSkipped)}, StatusCompleted},
		{"resumable completed needs finalization", Run{Kind: KindResumable, Stages: stages(StageCompleted), Flags: fin(true)}, StatusCompleted},
		{"resumable all stages done, finalization pending", Run{Kind: KindResumable, Stages: stages(StageCompleted), Flags: fin(false)}, StatusPaused},
		{"live lock runs", Run{Kind: KindResumable, Stages: stages(StageCompleted, StageRunning), Locks: []Lock{{Verdict: VerdictLive}}}, StatusRunning},
		{"live lock beats errors", Run{Kind: KindResumable, Stages: stages(StagePending), Locks: []Lock{{Verdict: VerdictLive}}, Problems: []Problem{{Severity: SeverityError}}}, StatusRunning},
		{"jonggrang running, no crash", Run{Kind: KindJonggrang, RawStatus: "running", Stages: stages(StageRunning)}, StatusRunning},
		{"errors block", Run{Kind: KindResumable, Stages: stages(StagePending), Problems: []Problem{{Severity: SeverityError}}}, StatusBlocked},
		{"all locks stale", Run{Kind: KindResumable, Stages: stages(StagePending), Locks: []Lock{{Verdict: VerdictStale}}}, StatusStalled},
		{"jonggrang running with crash sign", Run{Kind: KindJonggrang, RawStatus: "running", Stages: stages(StageRunning), CrashSigns: []string{"group pid dead"}}, StatusStalled},
		{"awaiting input", Run{Kind: KindJonggrang, RawStatus: "failed", Stages: []Stage{Stage{Key: "6", Status: StageFailed}.WithRare(StageRare{Error: "Awaiting human input (brainstorming)"})}}, StatusAwaitingInput},
		{"failed", Run{Kind: KindJonggrang, RawStatus: "failed", Stages: []Stage{Stage{Key: "8", Status: StageFailed}.WithRare(StageRare{Error: "boom"})}}, StatusFailed},
		{"jonggrang paused", Run{Kind: KindJonggrang, RawStatus: "paused", Stages: stages(StagePending)}, StatusPaused},
		// in_progress is a reopened run waiting to be resumed (docs/FORMATS.md C.2), not a claim that anything runs.
		{"jonggrang in_progress, nothing live", Run{Kind: KindJonggrang, RawStatus: "in_progress", Stages: stages(StageCompleted, StagePending)}, StatusPaused},
		{"jonggrang in_progress under a live lock", Run{Kind: KindJonggrang, RawStatus: "in_progress", Stages: stages(StageCompleted, StageRunning), Locks: []Lock{{Verdict: VerdictLive}}}, StatusRunning},
		{"jonggrang in_progress, live group", Run{Kind: KindJonggrang, ID: "f1", RawStatus: "in_progress", Stages: stages(StagePending),
			Jonggrang: &JonggrangDetail{Groups: []Group{{FeatureID: "f1", Alive: true}}}}, StatusRunning},
		{"jonggrang in_progress with a crash sign is not stalled", Run{Kind: KindJonggrang, RawStatus: "in_progress", Stages: stages(StagePending), CrashSigns: []string{"group interrupted"}}, StatusPaused},
		{"jonggrang in_progress, retried phase failed again", Run{Kind: KindJonggrang, RawStatus: "in_progress", Stages: []Stage{Stage{Key: "8", Status: StageFailed}.WithRare(StageRare{Error: "boom"})}}, StatusFailed},
		{"resumable between invocations", Run{Kind: KindResumable, Stages: stages(StageCompleted, StagePending)}, StatusPaused},
		{"nothing known", Run{Kind: KindJonggrang}, StatusUnknown},
		// Another feature's abandoned lock is shown on this run but must not make it stalled or running.
		{"shared stale lock does not stall", Run{Kind: KindJonggrang, RawStatus: "failed", Locks: []Lock{{Verdict: VerdictStale, Shared: true}},
			Stages: []Stage{Stage{Key: "6", Status: StageFailed}.WithRare(StageRare{Error: "Awaiting human input (brainstorming)"})}}, StatusAwaitingInput},
		{"shared live lock does not run", Run{Kind: KindJonggrang, RawStatus: "paused", Locks: []Lock{{Verdict: VerdictLive, Shared: true}},
			Stages: stages(StagePending)}, StatusPaused},
	}
	for _, c := range cases {
		run := c.run
		FinalizeRun(&run)
		if run.Status != c.want {
			t.Errorf("%s: got %s, want %s", c.name, run.Status, c.want)
		}
	}
}

func TestProgressCountsCompletedAndSkipped(t *testing.T) {
	r := Run{Kind: KindJonggrang, Stages: stages(StageCompleted, StageSkipped, StageRunning, StageFailed)}
	FinalizeRun(&r)
	if r.Progress != (Progress{Done: 2, Total: 4}) {
		t.Fatalf("progress %+v", r.Progress)
	}
}

func TestJudgementOutdated(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	acquired := now.Add(-20 * time.Minute)
	proc := fakeProc{alive: map[int]bool{100: true, 300: true}}
	env := Env{Now: now, Host: "box", StaleAfter: 30 * time.Minute, Proc: proc}
	r := Run{Kind: KindJonggrang,
		Locks:     []Lock{{PID: 100, Kind: KindResumable, AcquiredAt: &acquired}, {Kind: KindJonggrang, AcquiredAt: &acquired}},
		Jonggrang: &JonggrangDetail{Groups: []Group{{PID: 300, Alive: true}}}}
	for i := range r.Locks {
		JudgeLock(&r.Locks[i], env)
	}
	if JudgementOutdated(&r, env) {
		t.Fatal("nothing changed, yet judgement reported outdated")
	}
	later := env
	later.Now = now.Add(15 * time.Minute) // the pid-less lock is now 35m old
	if !JudgementOutdated(&r, later) {
		t.Error("a pid-less lock ageing past stale-after was not noticed")
	}
	died := env
	died.Proc = fakeProc{alive: map[int]bool{300: true}}
	if !JudgementOutdated(&r, died) {
		t.Error("a lock holder's death was not noticed")
	}
	workerGone := env
	workerGone.Proc = fakeProc{alive: map[int]bool{100: true}}
	if !JudgementOutdated(&r, workerGone) {
		t.Error("a parallel worker's exit was not noticed")
	}
}

// TestShownStageOfACompletedRun (issue 36): a completed jonggrang run (current_phase null) showed STAGE "–"
// while a completed resumable run showed the stage it ended at; both show their last completed stage.
func TestShownStageOfACompletedRun(t *testing.T) {
	t.Parallel()
	stages := []Stage{{Key: "1", Status: StageCompleted}, {Key: "2", Status: StageCompleted}, {Key: "3", Status: StageSkipped}}
	for _, c := range []struct {
		r    Run
		want string
	}{
		{Run{Status: StatusCompleted, Stages: stages}, "2"},
		{Run{Status: StatusCompleted, Stages: stages, CurrentStage: "S4"}, "S4"},
		{Run{Status: StatusRunning, Stages: stages}, ""},
		{Run{Status: StatusCompleted}, ""},
	} {
		if got := c.r.ShownStage(); got != c.want {
			t.Errorf("%s run, current %q: ShownStage() = %q, want %q", c.r.Status, c.r.CurrentStage, got, c.want)
		}
	}
}
