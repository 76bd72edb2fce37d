package jonggrang

import (
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/sim"
)

// liveLoginProject is the fixture with its locks set relative to now: the login feature's developer holds a
// lock with a real live pid, the old reviewer lock is 2h old with a dead pid, and the orchestration group's
// pid is dead.
func liveLoginProject(t *testing.T) (*project, int) {
	p := copyFixture(t)
	pid := livePID(t)
	now := time.Now()
	// The lock is taken after the process started, as a real agent does; an older lock would read as pid reuse.
	p.setLock("developer-auth-001.lock", "developer-auth-001", []string{"src/auth.ts"}, now, pid)
	p.setLock("reviewer-old.lock", "reviewer-old", []string{"src/auth.test.ts"}, now.Add(-2*time.Hour), deadPID(t))
	p.setGroup(deadPID(t), now.Add(-time.Hour), "")
	return p, pid
}

func TestAddLoginFormFixture(t *testing.T) {
	p, pid := liveLoginProject(t)
	r := Load(p.feature(fidLogin), realEnv())

	if r.ID != fidLogin || r.Kind != model.KindJonggrang || r.Title != "Add login form with validation" {
		t.Errorf("identity = %q %q %q", r.ID, r.Kind, r.Title)
	}
	if r.StatePath != filepath.Join(p.feature(fidLogin), ManifestName) || r.Dir != p.feature(fidLogin) || r.ProjectRoot != p.root {
		t.Errorf("paths: state %s dir %s root %s", r.StatePath, r.Dir, r.ProjectRoot)
	}
	if r.RawStatus != "running" || r.Status != model.StatusRunning {
		t.Errorf("status = %s (raw %s), want running: the developer's lock is held by a live process; problems:%s", r.Status, r.RawStatus, problemList(r))
	}
	if r.CurrentStage != "10" {
		t.Errorf("current stage = %q, want 10", r.CurrentStage)
	}
	// '6.5' is written after '17' by js-yaml; the run orders phases numerically.
	want := []string{"1", "2", "3", "4", "5", "6", "6.5", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17"}
	if got := stageKeys(r); !equalStrings(got, want) {
		t.Errorf("stage order = %v, want %v", got, want)
	}
	if r.Progress != (model.Progress{Done: 10, Total: 18}) {
		t.Errorf("progress = %+v, want 10/18 (phases 1-9 and 6.5 completed)", r.Progress)
	}
	if s := r.Stage("6.5"); s.Name != "design-system" || s.Status != model.StageCompleted {
		t.Errorf("6.5 = %+v", s)
	}
	if s := r.Stage("10"); s.Name != "design-verification" || s.Status != model.StageRunning || s.StartedAt == nil || s.CompletedAt != nil {
		t.Errorf("10 = %+v", s)
	}
	if s := r.Stage("1"); s.StartedAt == nil || !s.StartedAt.Equal(time.Date(2026, 2, 16, 4, 53, 15, 123e6, time.UTC)) {
		t.Errorf("1 started_at = %v, want 2026-02-16T04:53:15.123Z", s.StartedAt)
	}
	files := r.Stage("8").OutputFiles()
	if len(files) != 2 || files[0].Path != "src/auth.ts" || files[0].Type != "code" || files[0].Size == nil ||
		*files[0].Size != 2311 || files[0].AgentID != "developer-auth-001" || files[0].TaskID != "task-001" ||
		files[1].Size != nil || files[1].Type != "output" {
		t.Errorf("phase 8 output_files = %+v", files)
	}
	if len(r.Flags) != 3 || r.Flags[0] != (model.Flag{Group: "validation", Name: "review_passed"}) ||
		r.Flags[2].Name != "coverage_met" || r.Flags[2].Value {
		t.Errorf("flags = %+v", r.Flags)
	}
	if !r.UpdatedAt.Equal(time.Date(2026, 2, 16, 5, 31, 2, 417e6, time.UTC)) {
		t.Errorf("updated_at = %v", r.UpdatedAt)
	}

	d := r.Jonggrang
	if d.WorkType != "MEDIUM" || d.PipelineMode != "full" || !d.HasUI || d.ContextUsage == nil || *d.ContextUsage != 0.42 ||
		d.CreatedAt == nil || len(d.ActivePhases) != 18 || d.ActivePhases[6] != "6.5" {
		t.Errorf("detail = %+v", d)
	}
	if len(d.Agents) != 1 || d.Agents[0].ID != "developer-auth-001" || d.Agents[0].Role != "developer" ||
		!equalStrings(d.Agents[0].LockedFiles, []string{"src/auth.ts"}) {
		t.Errorf("agents = %+v", d.Agents)
	}

	// Phase outputs: the lead's plan and the developer's files.
	if len(d.PhaseOutputs) != 2 {
		t.Fatalf("phase outputs = %+v", d.PhaseOutputs)
	}
	lead, dev := d.PhaseOutputs[0], d.PhaseOutputs[1]
	if lead.Phase != "7" || lead.Role != "lead" || !contains(lead.Summary, "task-001: Login form (src/auth.ts)") {
		t.Errorf("lead output = %+v", lead)
	}
	if dev.Phase != "8" || dev.TaskID != "task-001" || !equalStrings(dev.FilesTouched, []string{"src/auth.ts"}) ||
		!contains(dev.Summary, "modified: src/auth.ts") || dev.Timestamp == nil {
		t.Errorf("developer output = %+v", dev)
	}
	if len(d.Tasks) != 1 || d.Tasks[0] != (model.Task{ID: "task-001", Title: "Login form", Status: "completed"}) {
		t.Errorf("tasks = %+v", d.Tasks)
	}
	if !contains(d.ProgressTail, "## Interrupted run (2026-02-16T05:10:00.000Z)") || d.ProgressTail[len(d.ProgressTail)-1] != "- implementation: src/auth.ts done" {
		t.Errorf("progress tail = %q", d.ProgressTail)
	}
	if len(d.Interruptions) != 1 || !d.Interruptions[0].Equal(time.Date(2026, 2, 16, 5, 10, 0, 0, time.UTC)) {
		t.Errorf("interruptions = %v", d.Interruptions)
	}

	// Gates: feedback loop blocked with escalation; compaction measured at warn, long before now, so stale:
	// the convention's gate ignores it.
	if f := d.Feedback; f == nil || !f.Blocked || !f.Escalation || f.StuckCount != 4 || f.Iteration != 2 ||
		!equalStrings(f.BlockedDomains, []string{"backend"}) {
		t.Errorf("feedback = %+v", d.Feedback)
	}
	if c := d.Compaction; c == nil || c.Status != "warn" || !c.Stale || c.Ratio != 0.77 || c.Tokens == nil || *c.Tokens != 154000 {
		t.Errorf("compaction = %+v", d.Compaction)
	}
	if len(r.Gates) != 2 || r.Gates[0].Name != "feedback-loop" || !r.Gates[0].Blocked || r.Gates[0].Status != "blocked" ||
		r.Gates[1].Name != "compaction" || r.Gates[1].Blocked || r.Gates[1].Status != "stale" {
		t.Errorf("gates = %+v", r.Gates)
	}
	if d.SessionRoles["sess-abc"] != "developer" || d.SessionRoles["sess-def"] != "reviewer" {
		t.Errorf("session roles = %v", d.SessionRoles)
	}
	if len(d.Groups) != 1 || d.Groups[0].Alive || !d.Groups[0].Interrupted || d.WorktreeCopyOf != "" {
		t.Errorf("groups = %+v", d.Groups)
	}
	if len(r.CrashSigns) != 1 || !strings.Contains(r.CrashSigns[0], "is not running") {
		t.Errorf("crash signs = %q", r.CrashSigns)
	}

	// Locks: own live lock, plus every lock no feature claims.
	if got := lockNames(r); !equalStrings(got, []string{"broken.lock", "developer-auth-001.lock", "no-ts.lock", "reviewer-old.lock"}) {
		t.Errorf("locks = %v", got)
	}
	if l := findLock(t, r, "developer-auth-001.lock"); l.Verdict != model.VerdictLive || l.PID != pid || l.Holder != "developer-auth-001" || !strings.Contains(l.Raw, `"pid"`) {
		t.Errorf("developer lock = %+v", l)
	}
	if l := findLock(t, r, "reviewer-old.lock"); l.Verdict != model.VerdictStale || !strings.Contains(strings.Join(l.Reasons, ";"), "not running") || l.AgeSeconds < 7190 {
		t.Errorf("reviewer-old lock = %+v", l)
	}
	if l := findLock(t, r, "broken.lock"); l.Verdict != model.VerdictStale || l.ParseError == "" || l.Raw != "not json" {
		t.Errorf("broken lock = %+v", l)
	}
	if l := findLock(t, r, "no-ts.lock"); l.Verdict != model.VerdictUnknown || l.Holder != "x" || l.AcquiredAt != nil {
		t.Errorf("no-ts lock = %+v", l)
	}
	for _, code := range []string{model.CodeLockStale, model.CodeLockUnknown, model.CodeFeedbackGate, model.CodeFeedbackEscalation, model.CodeGroupInterrupted} {
		if problem(t, r, code).Severity != model.SeverityWarning {
			t.Errorf("%s is not a warning", code)
		}
	}
	if r.HasErrors() {
		t.Errorf("unexpected error problems:%s", problemList(r))
	}
}

// Without a live process behind its own lock, a run that says running is stalled, and says why.
func TestAddLoginFormStalledWhenOwnLockIsDead(t *testing.T) {
	p := copyFixture(t)
	now := time.Now()
	p.setLock("developer-auth-001.lock", "developer-auth-001", []string{"src/auth.ts"}, now.Add(-5*time.Minute), deadPID(t))
	p.setGroup(deadPID(t), now.Add(-time.Hour), "")
	r := Load(p.feature(fidLogin), realEnv())
	if r.Status != model.StatusStalled {
		t.Errorf("status = %s, want stalled; crash signs %q", r.Status, r.CrashSigns)
	}
	if len(r.CrashSigns) == 0 || !strings.Contains(strings.Join(r.CrashSigns, "|"), "lock of agent developer-auth-001 is stale") {
		t.Errorf("crash signs = %q", r.CrashSigns)
	}
}

// Locks without a pid follow the convention's age rule: fresh (5 minutes) is live, 2 hours is stale.
func TestLockAgeRuleWithoutPID(t *testing.T) {
	p := copyFixture(t)
	now := time.Now()
	p.setLock("developer-auth-001.lock", "developer-auth-001", []string{"src/auth.ts"}, now.Add(-5*time.Minute), 0)
	p.setLock("reviewer-old.lock", "reviewer-old", []string{"src/auth.test.ts"}, now.Add(-2*time.Hour), 0)
	r := Load(p.feature(fidLogin), realEnv())
	if l := findLock(t, r, "developer-auth-001.lock"); l.Verdict != model.VerdictLive {
		t.Errorf("fresh lock = %s %q", l.Verdict, l.Reasons)
	}
	if l := findLock(t, r, "reviewer-old.lock"); l.Verdict != model.VerdictStale || !contains(l.Reasons, "age 2h0m exceeds 30m") {
		t.Errorf("old lock = %s %q", l.Verdict, l.Reasons)
	}
	if r.Status != model.StatusRunning {
		t.Errorf("status = %s, want running", r.Status)
	}
}

// A live pid that started after the lock was taken belongs to another process: the lock is stale.
func TestLockPIDReused(t *testing.T) {
	p := copyFixture(t)
	p.setLock("developer-auth-001.lock", "developer-auth-001", []string{"src/auth.ts"}, time.Now().Add(-2*time.Hour), livePID(t))
	r := Load(p.feature(fidLogin), realEnv())
	if l := findLock(t, r, "developer-auth-001.lock"); l.Verdict != model.VerdictStale || !strings.Contains(strings.Join(l.Reasons, ";"), "pid reused") {
		t.Errorf("reused-pid lock = %s %q", l.Verdict, l.Reasons)
	}
}

func TestFixTypoFixture(t *testing.T) {
	p, _ := liveLoginProject(t)
	r := Load(p.feature(fidTypo), realEnv())
	if r.Status != model.StatusCompleted || r.RawStatus != "completed" || r.CurrentStage != "" {
		t.Errorf("status %s raw %s current %q", r.Status, r.RawStatus, r.CurrentStage)
	}
	want := []string{"1", "2", "3", "4", "8", "11", "12", "14", "15", "16", "17"}
	if got := stageKeys(r); !equalStrings(got, want) {
		t.Errorf("stages = %v", got)
	}
	if r.Progress != (model.Progress{Done: 11, Total: 11}) || r.Jonggrang.WorkType != "BUGFIX" {
		t.Errorf("progress %+v work type %s", r.Progress, r.Jonggrang.WorkType)
	}
	// A completed run is not affected by the project's unclaimed locks or gates.
	if len(r.Locks) != 0 || len(r.Gates) != 0 || len(r.Problems) != 0 {
		t.Errorf("completed run has locks %v gates %+v problems%s", lockNames(r), r.Gates, problemList(r))
	}
}

func TestNewBillingAwaitingInput(t *testing.T) {
	p, _ := liveLoginProject(t)
	r := Load(p.feature(fidBilling), realEnv())
	if r.Status != model.StatusAwaitingInput || r.RawStatus != "failed" || r.CurrentStage != "6" {
		t.Errorf("status %s raw %s current %q; problems:%s", r.Status, r.RawStatus, r.CurrentStage, problemList(r))
	}
	s := r.Stage("6")
	if s.Status != model.StageFailed || s.ErrorText() != "Awaiting human input (brainstorming)" || s.CompletedAt == nil {
		t.Errorf("phase 6 = %+v", s)
	}
	if p := problem(t, r, model.CodeAwaitingInput); p.Severity != model.SeverityWarning || !strings.Contains(p.Message, "brainstorming") {
		t.Errorf("awaiting problem = %+v", p)
	}
	if r.Progress != (model.Progress{Done: 5, Total: 17}) || r.Jonggrang.WorkType != "LARGE" || r.Jonggrang.ContextUsage != nil {
		t.Errorf("progress %+v detail %+v", r.Progress, r.Jonggrang)
	}
	// The login feature's own lock is not listed here; the unclaimed ones are.
	if got := lockNames(r); !equalStrings(got, []string{"broken.lock", "no-ts.lock", "reviewer-old.lock"}) {
		t.Errorf("locks = %v", got)
	}
}

func TestCompactFixture(t *testing.T) {
	p := copyFixture(t)
	r := Load(p.feature(fidCompact), realEnv())
	if r.Status != model.StatusCompleted || r.Jonggrang.PipelineMode != "compact" || r.Progress != (model.Progress{Done: 13, Total: 13}) {
		t.Errorf("status %s mode %s progress %+v", r.Status, r.Jonggrang.PipelineMode, r.Progress)
	}
	for _, s := range r.Stages {
		n, _ := parseFloat(s.Key)
		switch {
		case n <= 8 && s.Status != model.StageCompleted:
			t.Errorf("phase %s = %s, want completed", s.Key, s.Status)
		case n > 8 && (s.Status != model.StageSkipped || s.SkipReason() != "compact-pipeline"):
			t.Errorf("phase %s = %s (%q), want skipped with skip_reason", s.Key, s.Status, s.SkipReason())
		}
	}
}

func TestTornManifestFixture(t *testing.T) {
	p := copyFixture(t)
	r := Load(p.feature(fidTorn), realEnv())
	pr := problem(t, r, model.CodeManifestUnparsable)
	if pr.Severity != model.SeverityError || !strings.Contains(pr.Message, filepath.Join(fidTorn, ManifestName)) ||
		!strings.Contains(pr.Message, "line ") || !strings.Contains(pr.Message, "read twice") {
		t.Errorf("problem = %+v", pr)
	}
	if r.ID != fidTorn || r.Status != model.StatusBlocked || len(r.Stages) != 0 {
		t.Errorf("id %s status %s stages %d", r.ID, r.Status, len(r.Stages))
	}
}

func TestMissingManifestFixture(t *testing.T) {
	p := copyFixture(t)
	r := Load(p.feature(fidBare), realEnv())
	pr := problem(t, r, model.CodeManifestMissing)
	if pr.Severity != model.SeverityError || pr.Path != filepath.Join(p.feature(fidBare), ManifestName) {
		t.Errorf("problem = %+v", pr)
	}
	if r.ID != fidBare || r.Status != model.StatusBlocked || r.Title != "" {
		t.Errorf("id %s status %s", r.ID, r.Status)
	}
	if !equalStrings(r.Jonggrang.ProgressTail, []string{"- setup started, manifest never written"}) {
		t.Errorf("progress tail = %q", r.Jonggrang.ProgressTail)
	}
}

// A torn write seen on the first read is healed by the writer before the second read: no problem.
func TestManifestRereadAfterTornWrite(t *testing.T) {
	p := copyFixture(t)
	path := filepath.Join(p.feature(fidLogin), ManifestName)
	whole := p.read(path)
	p.write(path, whole[:len(whole)/2])
	calls := 0
	ld := loader{retryDelay: time.Millisecond, beforeRetry: func(string) {
		calls++
		p.write(path, whole)
	}}
	r := ld.load(p.feature(fidLogin), realEnv())
	if calls != 1 || hasProblem(r, model.CodeManifestUnparsable) || r.CurrentStage != "10" || len(r.Stages) != 18 {
		t.Errorf("retries %d, current %q, stages %d, problems:%s", calls, r.CurrentStage, len(r.Stages), problemList(r))
	}
}

// A manifest that stays broken is read exactly twice, then reported.
func TestManifestRereadOnlyOnce(t *testing.T) {
	p := copyFixture(t)
	calls := 0
	ld := loader{retryDelay: time.Millisecond, beforeRetry: func(string) { calls++ }}
	r := ld.load(p.feature(fidTorn), realEnv())
	if calls != 1 || !hasProblem(r, model.CodeManifestUnparsable) {
		t.Errorf("retries %d problems:%s", calls, problemList(r))
	}
}

// A lock of an agent registered in another feature belongs to that feature only.
func TestLockAttribution(t *testing.T) {
	p, _ := liveLoginProject(t)
	p.editManifest(fidBilling, "agents: {}", "agents:\n  developer-billing-007:\n    role: developer\n    status: running\n    started_at: '2026-02-16T02:20:00.000Z'\n    output_path: null\n    locked_files:\n      - src/billing.ts")
	// The file name says one agent and agent_id another: either id attributes it.
	p.setLock("developer-billing-007.lock", "developer-billing-007", []string{"src/billing.ts"}, time.Now().Add(-time.Minute), 0)
	p.setLock("renamed.lock", "developer-billing-007", []string{"src/tax.ts"}, time.Now().Add(-time.Minute), 0)

	login := Load(p.feature(fidLogin), realEnv())
	billing := Load(p.feature(fidBilling), realEnv())
	typo := Load(p.feature(fidTypo), realEnv())
	for _, name := range lockNames(login) {
		if name == "developer-billing-007.lock" || name == "renamed.lock" {
			t.Errorf("login run lists %s, which belongs to new-billing", name)
		}
	}
	if got := lockNames(billing); !equalStrings(got, []string{"broken.lock", "developer-billing-007.lock", "no-ts.lock", "renamed.lock", "reviewer-old.lock"}) {
		t.Errorf("billing locks = %v", got)
	}
	if len(typo.Locks) != 0 {
		t.Errorf("completed run lists locks %v", lockNames(typo))
	}
	// A live lock of its own agent makes the paused run running: someone is working on it.
	if billing.Status != model.StatusRunning {
		t.Errorf("billing status = %s", billing.Status)
	}
	// Locks no feature claims are shown, marked shared, so they cannot decide this run's status.
	for _, l := range billing.Locks {
		own := strings.HasPrefix(filepath.Base(l.Path), "developer-billing-007") || filepath.Base(l.Path) == "renamed.lock"
		if l.Shared == own {
			t.Errorf("%s: shared=%v, want %v", filepath.Base(l.Path), l.Shared, !own)
		}
	}
}

// While a parallel group runs, its worktree holds the live manifest; the main copy is stale.
func TestLiveGroupReadsWorktreeCopy(t *testing.T) {
	p := copyFixture(t)
	worktree := filepath.Join(t.TempDir(), "worktree")
	wt := &project{t: t, root: worktree}
	main := p.read(filepath.Join(p.feature(fidLogin), ManifestName))
	live := strings.Replace(main, "current_phase: 10", "current_phase: 11", 1)
	live = strings.Replace(live, "    name: design-verification\n    status: running", "    name: design-verification\n    status: completed", 1)
	live = strings.Replace(live, "    name: domain-compliance\n    status: pending", "    name: domain-compliance\n    status: running", 1)
	wt.write(filepath.Join(wt.feature(fidLogin), ManifestName), live)
	wt.write(filepath.Join(wt.feature(fidLogin), "progress.txt"), "- design-verification passed in the worktree\n")
	p.setGroup(livePID(t), time.Now().Add(time.Second), worktree)

	r := Load(p.feature(fidLogin), realEnv())
	if r.CurrentStage != "11" || r.Stage("10").Status != model.StageCompleted || r.Progress.Done != 11 {
		t.Errorf("current %q, phase 10 %s, progress %+v: the worktree copy was not read", r.CurrentStage, r.Stage("10").Status, r.Progress)
	}
	if r.Jonggrang.WorktreeCopyOf != filepath.Join(wt.feature(fidLogin), ManifestName) || r.StatePath != filepath.Join(p.feature(fidLogin), ManifestName) {
		t.Errorf("worktree copy %q state path %q", r.Jonggrang.WorktreeCopyOf, r.StatePath)
	}
	if !equalStrings(r.Jonggrang.ProgressTail, []string{"- design-verification passed in the worktree"}) {
		t.Errorf("progress tail = %q", r.Jonggrang.ProgressTail)
	}
	if pr := problem(t, r, model.CodeWorktreeStale); pr.Severity != model.SeverityInfo {
		t.Errorf("worktree problem = %+v", pr)
	}
	if r.Status != model.StatusRunning || !r.Jonggrang.Groups[0].Alive || r.Jonggrang.Groups[0].Interrupted || len(r.CrashSigns) != 0 {
		t.Errorf("status %s groups %+v crash %q", r.Status, r.Jonggrang.Groups, r.CrashSigns)
	}
}

func TestLiveGroupWithoutWorktreeCopyFallsBack(t *testing.T) {
	p := copyFixture(t)
	p.setGroup(livePID(t), time.Now().Add(time.Second), filepath.Join(t.TempDir(), "gone"))
	r := Load(p.feature(fidLogin), realEnv())
	if pr := problem(t, r, model.CodeWorktreeStale); pr.Severity != model.SeverityWarning || !strings.Contains(pr.Message, "main copy") {
		t.Errorf("problem = %+v", pr)
	}
	if r.CurrentStage != "10" || r.Jonggrang.WorktreeCopyOf != "" || r.Status != model.StatusRunning {
		t.Errorf("current %q copy %q status %s", r.CurrentStage, r.Jonggrang.WorktreeCopyOf, r.Status)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A rewrite caught at a line boundary parses as YAML but has no phases yet: it is read again too.
func TestManifestRereadWhenCutAtLineBoundary(t *testing.T) {
	p := copyFixture(t)
	path := filepath.Join(p.feature(fidLogin), ManifestName)
	whole := p.read(path)
	p.write(path, whole[:strings.Index(whole, "status:")])
	calls := 0
	ld := loader{retryDelay: time.Millisecond, beforeRetry: func(string) {
		calls++
		p.write(path, whole)
	}}
	r := ld.load(p.feature(fidLogin), realEnv())
	if calls != 1 || len(r.Stages) != 18 || r.RawStatus != "running" || hasProblem(r, model.CodeManifestInvalid) {
		t.Errorf("retries %d stages %d status %q problems:%s", calls, len(r.Stages), r.RawStatus, problemList(r))
	}
}

// Loading a feature that must know its siblings' agents parses their manifests; each sibling's own read then
// takes that parse instead of parsing the same bytes again, and parses afresh when the bytes changed between.
func TestSiblingManifestParseIsHandedOn(t *testing.T) {
	p, _ := liveLoginProject(t)
	env := realEnv()
	before := manifestParses.Load()
	login := Load(p.feature(fidLogin), env)
	if !contains(lockNames(login), "reviewer-old.lock") {
		t.Fatalf("login does not show the unclaimed reviewer-old.lock (%v): the siblings' agents were not read", lockNames(login))
	}
	if n := manifestParses.Load() - before; n < 3 {
		t.Fatalf("loading login parsed %d manifests; want its own and its siblings'", n)
	}

	before = manifestParses.Load()
	handed := Load(p.feature(fidBilling), env)
	if n := manifestParses.Load() - before; n != 0 {
		t.Errorf("billing's own read parsed %d manifests; want 0 (the sibling parse handed on)", n)
	}
	before = manifestParses.Load()
	fresh := Load(p.feature(fidBilling), env)
	if n := manifestParses.Load() - before; n != 1 {
		t.Errorf("billing's second read parsed %d manifests; want 1 (a handed parse is taken once)", n)
	}
	if !reflect.DeepEqual(handed, fresh) {
		t.Errorf("billing from the handed parse differs from a fresh read:\n%+v\n%+v", handed, fresh)
	}

	// The typo feature's parse is waiting to be taken; its manifest changes first.
	p.editManifest(fidTypo, "description: Fix typo in README", "description: Fix two typos in README")
	if typo := Load(p.feature(fidTypo), env); typo.Title != "Fix two typos in README" {
		t.Errorf("typo title = %q after the manifest changed; the handed parse of the old bytes was used", typo.Title)
	}
}

// Loading every feature of a project on several goroutines at once parses each manifest once: a read that
// finds the same manifest being parsed for its agents, or the other way round, waits for that parse and
// uses it.
func TestConcurrentLoadsParseEachManifestOnce(t *testing.T) {
	dir := t.TempDir()
	if _, err := sim.GenerateMix(dir, 25, 0); err != nil {
		t.Fatal(err)
	}
	features, err := filepath.Glob(filepath.Join(dir, "projects", "*", ".jonggrang", ".output", "features", "*"))
	if err != nil || len(features) != 25 {
		t.Fatalf("%d features generated (%v)", len(features), err)
	}
	// A lock no feature claims: every incomplete feature must read its siblings' agents to know that.
	p := &project{t: t, root: ProjectRootOf(features[0])}
	p.setLock("stray-agent.lock", "stray-agent", []string{"src/x.ts"}, time.Now(), 0)
	env := realEnv()
	before := manifestParses.Load()
	var next atomic.Int64
	var wg sync.WaitGroup
	siblings := atomic.Int64{}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(features); i = int(next.Add(1) - 1) {
				r := Load(features[i], env)
				for _, l := range r.Locks {
					if l.Shared {
						siblings.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	if siblings.Load() == 0 {
		t.Fatal("no feature shows the stray lock: none read its siblings' agents, so nothing was tested")
	}
	if n := manifestParses.Load() - before; n != int64(len(features)) {
		t.Errorf("%d manifests parsed for %d features", n, len(features))
	}
}
