// Package sim simulates the two run-root conventions' writers, for `runwatch demo`, tests and benchmarks. It
// writes files the way the real writers do (docs/FORMATS.md): jonggrang rewrites MANIFEST.yaml whole and
// non-atomically in js-yaml's style and creates and deletes agent lock files; resumable writes sorted,
// double-quoted env files through <file>.tmp and a rename, appends to run.log, and holds LOCK_FILE for the
// length of an invocation.
//
// For tests and benchmarks: NewWorkspace(dir) gives the seven demo scenarios (paths on the Workspace),
// NewSimulator(ws, speed).Start(ctx) makes them change live, GenerateRuns(dir, n) writes n run roots of both
// kinds, AppendLog paces entries into a run.log and GrowLog makes a large one quickly.
package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"time"
)

// DefaultSeed makes NewWorkspace and the simulator repeatable.
const DefaultSeed = 7

// Options tune a workspace and its simulator.
type Options struct {
	// Seed drives every random choice (durations, sizes, hashes); the same seed and clock give the same files.
	Seed uint64
	// Now is the clock; time.Now when nil. Timestamps of live runs come from it.
	Now func() time.Time
	// Host and User are written into the runs' locks; empty takes this machine's. DeadPID is the pid the
	// dead locks name (0: a child of ours that has exited) and LivePID the one the live runs' locks name
	// (0: this process). Fixed, they make the files the same on every machine (the README's screenshots);
	// whoever reads them then decides those pids' liveness itself (model.Env's Proc).
	Host, User       string
	DeadPID, LivePID int
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Workspace is a folder holding runs of both conventions in every state the demo shows.
type Workspace struct {
	Dir string

	// Project roots (holding .jonggrang/) and the resumable reports folder.
	WebApp, Billing, Reports string

	// The scenario runs, by state file path (a run's identity everywhere in runwatch).
	Advancing     string // jonggrang, advancing phase by phase under the simulator
	AwaitingInput string // jonggrang, phase 6 failed with "Awaiting human input (brainstorming)"
	Completed     string // jonggrang BUGFIX run, completed
	Stepping      string // resumable, advancing stage by stage under the simulator
	Paused        string // resumable, paused between stages with one checklist item left
	DeadLock      string // resumable, its lock held by a process that no longer exists
	// Orphaned is a jonggrang BUGFIX feature whose orchestrator died with phase 4 running: no lock, no worker,
	// its last write just before the demo opens, so it turns orphaned once the demo's grace has passed.
	Orphaned string

	// PausedStage is Paused's current stage and PausedItem the one checklist key of it still at 0.
	PausedStage, PausedItem string
	// DeadLockFile is DeadLock's LOCK_FILE; DeadPID the pid in it (a real child that has exited).
	DeadLockFile string
	DeadPID      int

	opts       Options
	shape      Shape // GenerateShaped's
	host, user string
	advJ       *jonggrangActor
	advR       *resumableActor
}

// NewWorkspace creates the demo runs under dir (which may exist; it should be empty) with DefaultSeed.
func NewWorkspace(dir string) (*Workspace, error) {
	return NewWorkspaceWith(dir, Options{Seed: DefaultSeed})
}

// historyScale stretches the simulated pauses of pre-built history so that finished work spans minutes, as
// real runs do, instead of the seconds a live demo uses.
const historyScale = 40

// NewWorkspaceWith creates the demo runs with explicit options.
func NewWorkspaceWith(dir string, opts Options) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	dead := opts.DeadPID
	if dead == 0 {
		if dead, err = DeadPID(); err != nil {
			return nil, err
		}
	}
	host, user := opts.Host, opts.User
	if host == "" {
		host, _ = os.Hostname()
	}
	if user == "" {
		user = currentUser()
	}
	w := &Workspace{
		Dir: abs, WebApp: filepath.Join(abs, "webapp"), Billing: filepath.Join(abs, "billing-service"),
		Reports: filepath.Join(abs, "reports"), DeadPID: dead, opts: opts, host: host, user: user,
	}
	for _, d := range []string{w.WebApp, w.Billing, w.Reports, w.Docs(), filepath.Join(abs, "plans"), filepath.Join(abs, "repos")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	now := opts.now()
	steps := []func(now time.Time) error{w.buildCompleted, w.buildAwaiting, w.buildAdvancing, w.buildPaused, w.buildDeadLock, w.buildStepping,
		w.buildOrphaned}
	for _, build := range steps {
		if err := build(now); err != nil {
			return nil, fmt.Errorf("demo workspace %s: %w", abs, err)
		}
	}
	return w, nil
}

func (o Options) livePID() int {
	if o.LivePID != 0 {
		return o.LivePID
	}
	return os.Getpid()
}

func (w *Workspace) rng(stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(w.opts.Seed, stream))
}

var (
	loginFeature = feature{
		Description: "Add login form with validation", WorkType: "MEDIUM", HasUI: true, Topic: "auth",
		Tasks: []featureTask{
			{ID: "task-001", Title: "Login form", Files: []string{"src/auth/login-form.tsx"}},
			{ID: "task-002", Title: "Session client", Files: []string{"src/auth/session.ts", "src/auth/session-store.ts"}},
		},
	}
	typoFeature = feature{
		Description: "Fix typo in footer copyright", WorkType: "BUGFIX", Topic: "footer",
		Tasks: []featureTask{{ID: "task-001", Title: "Footer copy", Files: []string{"src/layout/footer.tsx"}}},
	}
	billingFeature = feature{
		Description: "New billing page with invoice history", WorkType: "LARGE", HasUI: true, Topic: "billing",
		Tasks: []featureTask{{ID: "task-001", Title: "Invoice list", Files: []string{"src/billing/invoices.tsx"}}},
	}
	// laterFeatures follow the login form when the simulator starts a new feature after one completes.
	laterFeatures = []feature{
		{Description: "Password reset flow", WorkType: "SMALL", Topic: "reset", Tasks: []featureTask{
			{ID: "task-001", Title: "Reset request form", Files: []string{"src/auth/reset-request.tsx"}},
			{ID: "task-002", Title: "Reset token check", Files: []string{"src/auth/reset-token.ts"}},
		}},
		{Description: "Dark mode toggle in settings", WorkType: "MEDIUM", HasUI: true, Topic: "theme", Tasks: []featureTask{
			{ID: "task-001", Title: "Theme toggle", Files: []string{"src/settings/theme-toggle.tsx"}},
		}},
		{Description: "Audit log for admin actions", WorkType: "SMALL", Topic: "audit", Tasks: []featureTask{
			{ID: "task-001", Title: "Audit trail", Files: []string{"src/server/audit-log.ts"}},
		}},
	}
	// rateLimitFeature is a BUGFIX of the generated workloads only: the simulator's later features are of no
	// work type the demo's orphaned BUGFIX shares, so their seconds-long phases never become the history
	// its ETA and "usually" lines are told from.
	rateLimitFeature = feature{Description: "Rate limit the login endpoint", WorkType: "BUGFIX", Topic: "ratelimit",
		Tasks: []featureTask{{ID: "task-001", Title: "Login rate limiter", Files: []string{"src/server/rate-limit.ts"}}}}
)

func (w *Workspace) plan(name string) string {
	return filepath.Join(w.Dir, "plans", name+".md")
}

func (w *Workspace) writePlan(task string, stages []stageDef) (string, error) {
	path := w.plan(task)
	text := "# Plan: " + task + "\n\n"
	// The real plans name their pipeline in one line, which is what runwatch reads the order from when the
	// run's own files leave it open (the mining tool's).
	ids := make([]string, len(stages))
	for i, s := range stages {
		ids[i] = s.ID
	}
	text += "Run the stages in canonical order (`" + strings.Join(ids, " -> ") + "`), one per invocation.\n\n"
	for _, s := range stages {
		text += "## Stage " + s.ID + "\n\n"
		for _, it := range s.Items {
			text += "- [ ] " + itemKey(s.ID, it) + "\n"
		}
		text += "\n"
	}
	return path, os.WriteFile(path, []byte(text), 0o644)
}

func (w *Workspace) buildCompleted(now time.Time) error {
	a := &jonggrangActor{project: w.WebApp, feat: typoFeature, rng: w.rng(1), pid: w.DeadPID}
	end, err := replay(a, now.Add(-3*time.Hour), historyScale)
	if err != nil {
		return err
	}
	w.Completed = a.manifestPath()
	return settle(a.dir, end)
}

func (w *Workspace) buildAwaiting(now time.Time) error {
	a := &jonggrangActor{project: w.Billing, feat: billingFeature, rng: w.rng(2), pid: w.DeadPID, stopAt: "6", stopReason: AwaitingInputReason}
	end, err := replay(a, now.Add(-50*time.Minute), historyScale)
	if err != nil {
		return err
	}
	w.AwaitingInput = a.manifestPath()
	return settle(a.dir, end)
}

// buildAdvancing starts the login feature a few phases in, so the demo opens on a run already under way; the
// simulator continues it live.
func (w *Workspace) buildAdvancing(now time.Time) error {
	a := &jonggrangActor{project: w.WebApp, feat: loginFeature, rng: w.rng(3), pid: w.opts.livePID()}
	at := now.Add(-2 * time.Minute)
	for a.m == nil || a.m.CurrentPhase != "4" || a.m.phase("4").Status != "running" {
		pause, done, err := a.step(at)
		if err != nil {
			return err
		}
		if done {
			return errors.New("advancing run finished while being prepared")
		}
		at = at.Add(pause * 10)
	}
	a.live = true
	w.advJ = a
	w.Advancing = a.manifestPath()
	return nil
}

// docsFeature is the orphaned scenario's feature: a BUGFIX like the completed typo fix, so the history of
// that run says how long its phases usually take.
var docsFeature = feature{
	Description: "Fix broken links in the docs", WorkType: "BUGFIX", Topic: "docs",
	Tasks: []featureTask{{ID: "task-001", Title: "Docs links", Files: []string{"docs/index.md"}}},
}

// OrphanLead is how long before the workspace's clock the orphaned feature last wrote its manifest.
const OrphanLead = 30 * time.Second

// buildOrphaned replays the docs fix at the history's pace up to phase 4 running, then stops: the
// orchestrator is gone. It is replayed once into a scratch folder to learn how long that takes, so the real
// replay ends OrphanLead before now (the same seed gives the same steps).
func (w *Workspace) buildOrphaned(now time.Time) error {
	upTo := func(project string, start time.Time) (*jonggrangActor, time.Time, error) {
		a := &jonggrangActor{project: project, feat: docsFeature, rng: w.rng(8), pid: w.DeadPID}
		at := start
		for a.m == nil || a.m.CurrentPhase != "4" || a.m.phase("4").Status != "running" {
			pause, done, err := a.step(at)
			if err != nil {
				return nil, at, err
			}
			if done {
				return nil, at, errors.New("orphaned run finished while being prepared")
			}
			at = at.Add(pause * historyScale)
		}
		return a, at, nil
	}
	scratch, err := os.MkdirTemp("", "runwatch-orphan-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	start := now.Add(-time.Hour)
	a, _, err := upTo(scratch, start)
	if err != nil {
		return err
	}
	// The last write is the phase start, made at the time of the step before the last pause.
	last := a.m.phase("4").StartedAt
	lastAt, err := time.Parse(time.RFC3339Nano, *last)
	if err != nil {
		return err
	}
	shift := now.Add(-OrphanLead).Sub(lastAt)
	if a, _, err = upTo(w.Docs(), start.Add(shift)); err != nil {
		return err
	}
	w.Orphaned = a.manifestPath()
	return settle(a.dir, now.Add(-OrphanLead))
}

// Docs is the project of the orphaned feature.
func (w *Workspace) Docs() string { return filepath.Join(w.Dir, "docs-site") }

var (
	irmStages = []stageDef{
		{ID: "S1", Items: []string{"REFACTOR_MANIFEST_WRITTEN", "VERIFY_GREEN"}},
		{ID: "S2", Items: []string{"SHADOW_REPORT_WRITTEN", "ID_CHECK_PASSED", "VERIFY_GREEN"}},
		{ID: "S3", Items: []string{"GENERATOR_SMOKE_GREEN", "BACKFILL_DRY_RUN_WRITTEN"}},
		{ID: "S4", Items: []string{"ID_MAPPING_WRITTEN", "REWRITE_SUMMARY_WRITTEN", "VALIDATION_GREEN"}},
	}
	sphinxStages = []stageDef{
		{ID: "M0", Items: []string{"STAGE_START", "BASELINE_CAPTURED"}},
		{ID: "M1", Items: []string{"CONF_MIGRATED", "BUILD_GREEN"}},
		{ID: "M2", Items: []string{"DIRECTIVES_PORTED", "XREFS_RESOLVED", "NO_LEGACY_TOKENS"}},
		{ID: "M3", Items: []string{"TRACE_TABLES_RENDERED", "LINKCHECK_GREEN"}},
		{ID: "M4", Items: []string{"PUBLISH_DRY_RUN"}},
	}
	miningStages = []stageDef{
		{ID: "ingest", Items: []string{"HASHES_VERIFIED"}},
		{ID: "extract", Items: []string{"CLAUSES_EXTRACTED", "TABLES_EXTRACTED"}},
		{ID: "normalize", Items: []string{"IDS_NORMALIZED"}},
		{ID: "anchor", Items: []string{"ANCHORS_RESOLVED"}},
		{ID: "publish", Items: []string{"SITE_BUILT"}},
		{ID: "verify", Items: []string{"LINKS_CHECKED", "COUNTS_MATCH", "SPOT_CHECK_DONE"}},
		{ID: "finalize", Items: []string{"LEDGER_WRITTEN"}},
	}
)

func (w *Workspace) resumable(task string, stages []stageDef, style logStyle, lockRel string, checkbox bool, stream uint64, pid int) (*resumableActor, error) {
	planPath, err := w.writePlan(task, stages)
	if err != nil {
		return nil, err
	}
	repo := filepath.Join(w.Dir, "repos", task)
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return nil, err
	}
	return &resumableActor{
		plan: resumablePlan{
			Task: task, Stages: stages, Named: style == styleMining, Checkbox: checkbox, LockRel: lockRel,
			Style: style, Repo: repo, Plan: planPath,
		},
		reports: w.Reports, pid: pid, host: w.host, user: w.user, rng: w.rng(stream),
	}, nil
}

// buildPaused runs the sphinx migration through M0 and M1; in M2 the agent could not confirm one item, so the
// gate refused and the invocation stopped. A person ticks that item, then steps the run.
func (w *Workspace) buildPaused(now time.Time) error {
	a, err := w.resumable("sphinx-traceability-migration", sphinxStages, styleSphinx, "run.lock", true, 4, w.DeadPID)
	if err != nil {
		return err
	}
	a.blockAt, a.blockItem = "M2", "NO_LEGACY_TOKENS"
	end, err := replay(a, now.Add(-90*time.Minute), historyScale)
	if err != nil {
		return err
	}
	w.Paused = a.statePath()
	w.PausedStage, w.PausedItem = "M2", itemKey("M2", "NO_LEGACY_TOKENS")
	return settle(a.dir, end)
}

// buildDeadLock runs the mining pipeline until its process vanishes in the verify stage, leaving
// lock/active.lock naming a pid that no longer exists on this host.
func (w *Workspace) buildDeadLock(now time.Time) error {
	a, err := w.resumable("iso26262-mining", miningStages, styleMining, filepath.Join("lock", "active.lock"), false, 5, w.DeadPID)
	if err != nil {
		return err
	}
	a.dieIn = "verify"
	end, err := replay(a, now.Add(-40*time.Minute), historyScale/2)
	if err != nil {
		return err
	}
	w.DeadLock = a.statePath()
	w.DeadLockFile = a.lockPath()
	return settle(a.dir, end)
}

// buildStepping bootstraps the irm backfill; the simulator runs its invocations live.
func (w *Workspace) buildStepping(now time.Time) error {
	a, err := w.resumable("irm-id-full-backfill", irmStages, styleIRM, "run.lock", false, 6, w.opts.livePID())
	if err != nil {
		return err
	}
	if _, _, err := a.step(now.Add(-time.Minute)); err != nil {
		return err
	}
	w.advR = a
	w.Stepping = a.statePath()
	return nil
}

// DeadPID returns the pid of a child process that has run and been reaped, so it names no process on this
// host (until the kernel reuses it, which takes a full cycle of the pid space).
func DeadPID() (int, error) {
	var cmd *exec.Cmd
	if p, err := exec.LookPath("true"); err == nil {
		cmd = exec.Command(p)
	} else if self, err := os.Executable(); err == nil {
		// Any binary that exits will do; our own with an unknown flag exits at once.
		cmd = exec.Command(self, "-runwatch-sim-dead-pid")
	} else {
		return 0, fmt.Errorf("no program to spawn for a dead pid: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("spawn a short-lived child: %w", err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Wait() // the exit status does not matter, only that the child is gone and reaped
	return pid, nil
}

func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}
