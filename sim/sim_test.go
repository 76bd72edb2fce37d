package sim_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"runwatch/model"
	"runwatch/sim"
	"runwatch/state"
	"runwatch/state/runlog"
)

// load reads one run through the real readers, found by the real discovery.
func load(t *testing.T, ws *sim.Workspace, statePath string) model.Run {
	t.Helper()
	locs, err := state.Discover(ws.Paths(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range locs {
		if loc.StatePath == statePath {
			return state.Load(loc, state.NewEnv(0))
		}
	}
	t.Fatalf("discovery did not find %s among %d runs", statePath, len(locs))
	return model.Run{}
}

func newWorkspace(t *testing.T) *sim.Workspace {
	t.Helper()
	ws, err := sim.NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestWorkspaceScenariosReadAsIntended(t *testing.T) {
	ws := newWorkspace(t)
	locs, err := state.Discover(ws.Paths(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(locs) != 7 {
		t.Fatalf("discovered %d runs, want the 7 scenarios: %+v", len(locs), locs)
	}
	want := map[string]model.RunStatus{
		ws.Advancing:     model.StatusRunning,
		ws.AwaitingInput: model.StatusAwaitingInput,
		ws.Completed:     model.StatusCompleted,
		// The writer stopped at the stage's gate and logged stage_blocked: a stop condition, not a pause
		// (docs/FORMATS.md C.1).
		ws.Paused:   model.StatusBlocked,
		ws.DeadLock: model.StatusStalled,
		// Running as far as its files say; the clock makes it orphaned (below).
		ws.Orphaned: model.StatusRunning,
	}
	for path, status := range want {
		run := load(t, ws, path)
		if run.Status != status {
			t.Errorf("%s: status %s, want %s (problems %+v, locks %+v)", path, run.Status, status, run.Problems, run.Locks)
		}
		for _, p := range run.Problems {
			if p.Severity == model.SeverityError && p.Code != model.CodeStageBlocked {
				t.Errorf("%s: error problem %+v: the simulator wrote something the reader rejects", path, p)
			}
		}
	}

	awaiting := load(t, ws, ws.AwaitingInput)
	if st := awaiting.Stage("6"); st == nil || st.Status != model.StageFailed || st.ErrorText() != sim.AwaitingInputReason || awaiting.RawStatus != "failed" {
		t.Errorf("awaiting-input run: raw status %q, phase 6 %+v", awaiting.RawStatus, st)
	}

	paused := load(t, ws, ws.Paused)
	if paused.CurrentStage != ws.PausedStage || len(paused.Locks) != 0 {
		t.Errorf("paused run: current stage %q (want %s), locks %+v", paused.CurrentStage, ws.PausedStage, paused.Locks)
	}
	var open []string
	if st := paused.Stage(ws.PausedStage); st != nil {
		for _, it := range st.Checklist {
			if !it.Done {
				open = append(open, it.Key)
			}
		}
	}
	if len(open) != 1 || open[0] != ws.PausedItem {
		t.Errorf("paused run: unticked items of %s are %v, want exactly [%s]", ws.PausedStage, open, ws.PausedItem)
	}

	dead := load(t, ws, ws.DeadLock)
	if len(dead.Locks) != 1 || dead.Locks[0].Verdict != model.VerdictStale || dead.Locks[0].PID != ws.DeadPID {
		t.Fatalf("dead-lock run: locks %+v, want one stale lock of pid %d", dead.Locks, ws.DeadPID)
	}
	if !strings.Contains(strings.Join(dead.Locks[0].Reasons, ";"), "not running") {
		t.Errorf("dead lock judged stale for another reason: %v", dead.Locks[0].Reasons)
	}

	// The orphaned feature: nothing runs phase 4 and its last write is OrphanLead old, so a grace shorter than
	// that calls it orphaned and a longer one does not; the completed BUGFIX run says how long phase 4 takes.
	orphan := load(t, ws, ws.Orphaned)
	if orphan.CurrentStage != "4" || len(orphan.Locks) != 0 || orphan.ActiveAt == nil {
		t.Fatalf("orphaned run: phase %s locks %+v active_at %v", orphan.CurrentStage, orphan.Locks, orphan.ActiveAt)
	}
	h := model.NewHistory()
	done := load(t, ws, ws.Completed)
	h.Observe(&done)
	now := orphan.ActiveAt.Add(sim.OrphanLead)
	model.JudgeTime(&orphan, now, model.LivenessRules{OrphanAfter: sim.OrphanLead + time.Second}, h)
	if orphan.Attention.NeedsYou {
		t.Errorf("orphaned run within its grace: %+v", orphan.Attention)
	}
	model.JudgeTime(&orphan, now, model.LivenessRules{OrphanAfter: sim.OrphanLead}, h)
	if orphan.Attention.Code != model.AttentionOrphaned {
		t.Errorf("orphaned run past its grace: %+v", orphan.Attention)
	}
	if u := orphan.Stage("4").Timing.Usual(); !u.Known() {
		t.Errorf("phase 4 has no usual duration from the completed BUGFIX run")
	}

	advancing := load(t, ws, ws.Advancing)
	if advancing.CurrentStage != "4" || advancing.Progress.Done != 3 {
		t.Errorf("advancing run starts at phase %s with %d done, want phase 4 with 3 done", advancing.CurrentStage, advancing.Progress.Done)
	}
}

var envLine = regexp.MustCompile(`^[A-Z][A-Z0-9_]*="(?:[^"\\]|\\.)*"$`)

// checkEnvFile asserts the resumable writers' style: sorted keys, KEY="value" lines, one final newline.
func checkEnvFile(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("\n")) || bytes.HasSuffix(data, []byte("\n\n")) {
		t.Errorf("%s: does not end with exactly one newline", path)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var keys []string
	for _, l := range lines {
		if !envLine.MatchString(l) {
			t.Errorf("%s: line %q is not KEY=\"value\"", path, l)
		}
		keys = append(keys, l[:strings.IndexByte(l, '=')])
	}
	if !sort.StringsAreSorted(keys) {
		t.Errorf("%s: keys not sorted: %v", path, keys)
	}
	if _, err := os.Stat(path + ".tmp"); err == nil {
		t.Errorf("%s.tmp left behind", path)
	}
}

func TestFilesFollowTheWritersFormats(t *testing.T) {
	ws := newWorkspace(t)
	for _, p := range []string{ws.Stepping, ws.Paused, ws.DeadLock} {
		checkEnvFile(t, p)
		checkEnvFile(t, filepath.Join(filepath.Dir(p), "checklist.state.env"))

		data, err := os.ReadFile(filepath.Join(filepath.Dir(p), "run.log"))
		if err != nil {
			t.Fatal(err)
		}
		entries, rest := runlog.ParseEntries(data, 0)
		if len(rest) != 0 || len(entries) == 0 {
			t.Errorf("%s run.log: %d entries, %d bytes of partial line", p, len(entries), len(rest))
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if !regexp.MustCompile(`^(\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\] \S|  \S)`).MatchString(l) {
				t.Errorf("%s run.log line %q is neither an entry nor an indented continuation", p, l)
			}
		}
	}

	// The dead run's lock: one line of JSON, sorted keys, Python separators, this host, the dead pid.
	raw, err := os.ReadFile(ws.DeadLockFile)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if !regexp.MustCompile(`^\{"acquired_at_utc": "[^"]+", "host": "` + regexp.QuoteMeta(host) + `", "pid": ` + strconv.Itoa(ws.DeadPID) + `, "run_id": "[^"]+", "user": "[^"]+"\}\n$`).Match(raw) {
		t.Errorf("dead lock payload %q is not the locking.py style", raw)
	}

	for _, m := range []string{ws.Advancing, ws.AwaitingInput, ws.Completed} {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if !regexp.MustCompile(`(?m)^created_at: '\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z'$`).MatchString(text) {
			t.Errorf("%s: created_at is not a single-quoted ISO-ms timestamp", m)
		}
		keys := regexp.MustCompile(`(?m)^  '([0-9.]+)':$`).FindAllStringSubmatch(text, -1)
		var order []string
		for _, k := range keys {
			order = append(order, k[1])
		}
		// JavaScript key order: integers ascending, then fractional keys.
		seenFraction := false
		for i, k := range order {
			frac := strings.Contains(k, ".")
			if seenFraction && !frac {
				t.Errorf("%s: integer key %s after a fractional key: %v", m, k, order)
			}
			seenFraction = seenFraction || frac
			if !frac && i > 0 && !strings.Contains(order[i-1], ".") {
				a, _ := strconv.Atoi(order[i-1])
				b, _ := strconv.Atoi(k)
				if a >= b {
					t.Errorf("%s: integer keys out of order: %v", m, order)
				}
			}
		}
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Errorf("%s: does not parse: %v", m, err)
		}
	}
	// The login feature has a UI, so its manifest shows the '6.5' after '17' quirk.
	data, _ := os.ReadFile(ws.Advancing)
	if i, j := bytes.Index(data, []byte("\n  '17':\n")), bytes.Index(data, []byte("\n  '6.5':\n")); i < 0 || j < i {
		t.Errorf("advancing manifest: '6.5' (at %d) is not written after '17' (at %d)", j, i)
	}
}

// testSpeed is fast, yet slow enough that a run a test watches is not finished and retired (deleted) before
// a poll sees the state it waits for, even on a loaded machine.
const testSpeed = 50

// waitFor polls cond until it holds; the deadline only bounds a broken simulator, it asserts no timing.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSimulatorAdvancesRunsAndReleasesOnStop(t *testing.T) {
	ws := newWorkspace(t)
	s := sim.NewSimulator(ws, testSpeed)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = s.Stop()
		}
	}()
	if err := s.Start(context.Background()); err == nil {
		t.Error("a second Start was accepted")
	}

	// The jonggrang run passes implementation: its developers registered with locked files, and resolving
	// them deleted their lock files.
	waitFor(t, "the jonggrang run to pass implementation", func() bool {
		r := load(t, ws, ws.Advancing)
		st := r.Stage("8")
		return st != nil && st.Status == model.StageCompleted
	})
	run := load(t, ws, ws.Advancing)
	devs := 0
	for _, a := range run.Jonggrang.Agents {
		if a.Role == "developer" {
			devs++
			if a.Status != "completed" || len(a.LockedFiles) == 0 {
				t.Errorf("developer agent %+v: want completed with locked files", a)
			}
			if _, err := os.Stat(filepath.Join(ws.WebApp, ".jonggrang", "locks", a.ID+".lock")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("lock of resolved agent %s still there (%v)", a.ID, err)
			}
		}
	}
	if devs != 2 {
		t.Errorf("%d developer agents, want one per task (2)", devs)
	}
	// The resumable run completes S1 and S2, each in its own invocation holding the run lock.
	waitFor(t, "the resumable run to finish two stages", func() bool {
		run := load(t, ws, ws.Stepping)
		done := 0
		for _, st := range run.Stages {
			if st.Status == model.StageCompleted {
				done++
				for _, it := range st.Checklist {
					if !it.Done {
						t.Fatalf("stage %s marked done with %s unticked", st.Key, it.Key)
					}
				}
			}
		}
		return done >= 2
	})
	logData, err := os.ReadFile(filepath.Join(filepath.Dir(ws.Stepping), "run.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(logData, []byte("] lock_acquired pid="+strconv.Itoa(os.Getpid())+" ")); n < 2 {
		t.Errorf("run.log records %d lock acquisitions by this process, want one per invocation (>= 2)", n)
	}
	if s.Steps() == 0 {
		t.Fatal("no writes counted")
	}

	stopped = true
	if err := s.Stop(); err != nil {
		t.Fatalf("simulator error: %v", err)
	}
	// Stop ends a resumable invocation cleanly: no lock of ours is left at LOCK_FILE.
	run = load(t, ws, ws.Stepping)
	for _, l := range run.Locks {
		if l.PID == os.Getpid() {
			t.Errorf("lock of this process left behind after Stop: %+v", l)
		}
	}
	checkEnvFile(t, ws.Stepping)
	// The static scenarios were not touched.
	if r := load(t, ws, ws.Paused); r.Status != model.StatusBlocked {
		t.Errorf("run blocked at its gate changed to %s", r.Status)
	}
}

func TestSimulatorWaitsWhileManifestIsPaused(t *testing.T) {
	ws := newWorkspace(t)
	data, err := os.ReadFile(ws.Advancing)
	if err != nil {
		t.Fatal(err)
	}
	paused := bytes.Replace(data, []byte("\nstatus: running\n"), []byte("\nstatus: paused\n"), 1)
	if bytes.Equal(paused, data) {
		t.Fatal("advancing manifest has no status: running line")
	}
	if err := os.WriteFile(ws.Advancing, paused, 0o644); err != nil {
		t.Fatal(err)
	}
	s := sim.NewSimulator(ws, testSpeed)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The resumable run keeps going; by the time it has finished a stage the jonggrang one has had many
	// chances to write and must not have.
	waitFor(t, "the resumable run to finish a stage", func() bool {
		return load(t, ws, ws.Stepping).Progress.Done >= 1
	})
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(ws.Advancing)
	if !bytes.Equal(after, paused) {
		t.Fatal("the simulator rewrote a manifest a person had paused")
	}
}

func TestSameSeedSameFiles(t *testing.T) {
	clock := func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }
	a, err := sim.NewWorkspaceWith(t.TempDir(), sim.Options{Seed: 3, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	b, err := sim.NewWorkspaceWith(t.TempDir(), sim.Options{Seed: 3, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	fa, fb := snapshotTree(t, a), snapshotTree(t, b)
	if len(fa) == 0 || len(fa) != len(fb) {
		t.Fatalf("%d files vs %d", len(fa), len(fb))
	}
	for name, content := range fa {
		if fb[name] != content {
			t.Errorf("%s differs between two workspaces with the same seed", name)
		}
	}
	c, err := sim.NewWorkspaceWith(t.TempDir(), sim.Options{Seed: 4, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	fc := snapshotTree(t, c)
	differs := false
	for name, content := range fa {
		differs = differs || fc[name] != content
	}
	if !differs {
		t.Error("a different seed produced identical files")
	}
}

// snapshotTree maps relative paths to contents with the workspace path and the dead pid normalised.
func snapshotTree(t *testing.T, ws *sim.Workspace) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(ws.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(ws.Dir, path)
		s := strings.ReplaceAll(string(data), ws.Dir, "<ws>")
		// Whole numbers only: a pid's digits inside a sha or a size are not the pid, and replacing them made
		// two workspaces differ whenever one's dead pid happened to occur there.
		s = regexp.MustCompile(`\b`+strconv.Itoa(ws.DeadPID)+`\b`).ReplaceAllString(s, "<pid>")
		s = regexp.MustCompile(`\b`+strconv.Itoa(os.Getpid())+`\b`).ReplaceAllString(s, "<self>")
		out[rel] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenerateRuns(t *testing.T) {
	dir := t.TempDir()
	const n = 120 // enough for every state of both kinds (the shapes cycle every 3, 4 and 5 runs)
	paths, err := sim.GenerateRuns(dir, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != n {
		t.Fatalf("%d paths, want %d", len(paths), n)
	}
	locs, err := state.Discover([]string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(locs) != n {
		t.Fatalf("discovery found %d runs, want %d", len(locs), n)
	}
	kinds := map[model.Kind]int{}
	statuses := map[model.RunStatus]int{}
	env := state.NewEnv(0)
	for _, loc := range locs {
		run := state.Load(loc, env)
		kinds[run.Kind]++
		statuses[run.Status]++
		for _, p := range run.Problems {
			if p.Severity == model.SeverityError && p.Code != model.CodeStageBlocked {
				t.Errorf("%s: %s: %s", loc.StatePath, p.Code, p.Message)
			}
		}
	}
	if kinds[model.KindJonggrang] != n/2 || kinds[model.KindResumable] != n/2 {
		t.Errorf("kinds %v, want %d of each", kinds, n/2)
	}
	for _, s := range []model.RunStatus{model.StatusCompleted, model.StatusPaused, model.StatusStalled, model.StatusAwaitingInput, model.StatusFailed} {
		if statuses[s] == 0 {
			t.Errorf("no generated run is %s (statuses %v)", s, statuses)
		}
	}
	if _, err := sim.GenerateRuns(dir, -1); err == nil {
		t.Error("n = -1 accepted")
	}
}

// GenerateMix writes the counts asked for, and its runs are GenerateRuns' runs: the same bytes for the same
// index, so benchmarks of either workspace compare.
func TestGenerateMixCountsAndBytes(t *testing.T) {
	mix, all := t.TempDir(), t.TempDir()
	paths, err := sim.GenerateMix(mix, 2, 7)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, p := range paths {
		kinds[filepath.Base(p)]++
	}
	if kinds["MANIFEST.yaml"] != 2 || kinds["state.env"] != 7 || len(paths) != 9 {
		t.Fatalf("GenerateMix(2 jonggrang, 7 resumable) wrote %v", kinds)
	}
	if _, err := sim.GenerateRuns(all, 4); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"reports", "projects"} {
		a, b := filesUnder(t, mix, rel), filesUnder(t, all, rel)
		for name, data := range b {
			// Lock files name the dead pid, which the kernel picks anew for each call.
			if got, ok := a[name]; !ok || (got != data && !strings.Contains(data, "pid")) {
				t.Errorf("%s/%s differs between GenerateMix and GenerateRuns", rel, name)
			}
		}
	}
	if _, err := sim.GenerateMix(mix, -1, 0); err == nil {
		t.Error("a negative count accepted")
	}
}

// filesUnder reads every file under root/rel, with root in their contents replaced by ROOT.
func filesUnder(t *testing.T, root, rel string) map[string]string {
	t.Helper()
	out := map[string]string{}
	dir := filepath.Join(root, rel)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		name, _ := filepath.Rel(dir, p)
		out[name] = strings.ReplaceAll(string(data), root, "ROOT")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAppendLogAndGrowLogWriteParsableEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	n, err := sim.AppendLog(path, 2000, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	entries, rest := runlog.ParseEntries(data, 0)
	if len(entries) != n || len(rest) != 0 || n != 100 {
		t.Fatalf("AppendLog reported %d entries (want 2000/s × 50ms = 100); file parses to %d entries and %d partial bytes", n, len(entries), len(rest))
	}

	big := filepath.Join(t.TempDir(), "big.log")
	m, err := sim.GrowLog(big, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(big)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() < 1<<20 {
		t.Fatalf("GrowLog left %d bytes, want at least 1 MiB", st.Size())
	}
	data, _ = os.ReadFile(big)
	entries, rest = runlog.ParseEntries(data, 0)
	if len(entries) != m || len(rest) != 0 {
		t.Fatalf("GrowLog reported %d entries; file parses to %d and %d partial bytes", m, len(entries), len(rest))
	}
	levels := map[model.Level]int{}
	for _, e := range entries {
		levels[e.Level]++
	}
	if levels[model.LevelError] == 0 {
		t.Errorf("no error-level entries in a generated log (levels %v): error jumps have nothing to find", levels)
	}
	if _, err := sim.AppendLog(path, 0, time.Millisecond); err == nil {
		t.Error("a rate of 0 was accepted")
	}
}

func TestDeadPIDIsNotRunning(t *testing.T) {
	pid, err := sim.DeadPID()
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("kill(%d, 0) = %v, want ESRCH", pid, err)
	}
}

// A live lock held by another process makes the simulated writer wait, as the real locking.py refuses; once
// that process is gone the lock is stale, and the writer logs stale_lock_replaced and takes over.
func TestSimulatorWaitsForLiveForeignLock(t *testing.T) {
	ws := newWorkspace(t)
	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Skipf("cannot start a lock holder: %v", err)
	}
	defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()
	runDir := filepath.Dir(ws.Stepping)
	host, _ := os.Hostname()
	payload := fmt.Sprintf(`{"acquired_at_utc": "2026-11-30T00:00:00Z", "host": %q, "pid": %d, "run_id": "other", "user": "u"}`+"\n", host, holder.Process.Pid)
	if err := os.WriteFile(filepath.Join(runDir, "run.lock"), []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(ws.Stepping)

	s := sim.NewSimulator(ws, testSpeed)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Stop() }()
	// While the holder lives the jonggrang run moves on (every counted write is its) but the resumable one
	// must not.
	waitFor(t, "the jonggrang run to write", func() bool { return s.Steps() >= 40 })
	if after, _ := os.ReadFile(ws.Stepping); !bytes.Equal(after, before) {
		t.Fatal("state.env changed while another live process held the run lock")
	}
	_ = holder.Process.Kill()
	_ = holder.Wait()
	waitFor(t, "the writer to replace the stale lock and finish a stage", func() bool {
		return load(t, ws, ws.Stepping).Progress.Done >= 1
	})
	logData, _ := os.ReadFile(filepath.Join(runDir, "run.log"))
	if !bytes.Contains(logData, []byte("] stale_lock_replaced payload="+strings.TrimSpace(payload)+"\n")) {
		t.Errorf("run.log does not record the replaced lock:\n%s", logData)
	}
}

// When an advancing run finishes, a new one starts; old finished ones are deleted so a long demo stays small.
func TestSimulatorStartsNewRunsAndRetiresOldOnes(t *testing.T) {
	ws := newWorkspace(t)
	s := sim.NewSimulator(ws, 3000)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Stop() }()
	gone := func(path string) bool {
		_, err := os.Stat(filepath.Dir(path))
		return errors.Is(err, os.ErrNotExist)
	}
	waitFor(t, "the first advancing runs to be retired", func() bool { return gone(ws.Advancing) && gone(ws.Stepping) })
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	irm, _ := filepath.Glob(filepath.Join(ws.Reports, "irm-id-full-backfill-*"))
	features, _ := filepath.Glob(filepath.Join(ws.WebApp, ".jonggrang", ".output", "features", "*"))
	// At most two finished runs plus the one in progress; the webapp also keeps its completed bugfix.
	if len(irm) < 2 || len(irm) > 3 || len(features) < 3 || len(features) > 4 {
		t.Fatalf("after retiring: %d resumable runs %v and %d jonggrang features %v", len(irm), irm, len(features), features)
	}
	locs, err := state.Discover(ws.Paths(), 0)
	if err != nil {
		t.Fatal(err)
	}
	env := state.NewEnv(0)
	completed := 0
	for _, loc := range locs {
		run := state.Load(loc, env)
		for _, p := range run.Problems {
			if p.Severity == model.SeverityError && p.Code != model.CodeStageBlocked {
				t.Errorf("%s: %+v", loc.StatePath, p)
			}
		}
		if run.Status == model.StatusCompleted {
			completed++
		}
	}
	if completed < 3 {
		t.Errorf("%d completed runs after several generations, want the bugfix plus finished generations", completed)
	}
	// The orphaned BUGFIX is timed by the completed typo fix alone: the generations' seconds-long phases are
	// of other work types, so its ETA and "usually" lines read the same however long the demo runs.
	history := model.NewHistory()
	var orphaned model.Run
	for _, loc := range locs {
		run := state.Load(loc, env)
		history.Observe(&run)
		if loc.StatePath == ws.Orphaned {
			orphaned = run
		}
	}
	model.JudgeTime(&orphaned, time.Now(), model.LivenessRules{}, history)
	if orphaned.Timing == nil || orphaned.Timing.Task != "jonggrang:BUGFIX" || orphaned.Timing.Runs != 1 {
		t.Errorf("the orphaned bugfix's timing after several generations: %+v, want BUGFIX told from 1 past run", orphaned.Timing)
	}
}

// GenerateShaped's runs have the stages, phases and log lines asked for, and read as the stock ones do: no run has a
// problem a stock run has not, and the states still spread.
func TestGenerateShapedStagesAndPhases(t *testing.T) {
	dir := t.TempDir()
	const stages, phases, lines = 11, 60, 150
	if _, err := sim.GenerateShaped(dir, 10, 12, sim.Shape{Stages: stages, Phases: phases, LogLines: lines}); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "reports", "*", "run.log"))
	for _, p := range logs {
		if b, err := os.ReadFile(p); err != nil || strings.Count(string(b), "\n") < lines {
			t.Errorf("%s: %d lines (%v), want at least %d", p, strings.Count(string(b), "\n"), err, lines)
		}
	}
	if len(logs) != 12 {
		t.Errorf("%d run.logs, want 12", len(logs))
	}
	locs, err := state.Discover([]string{dir}, 0)
	if err != nil || len(locs) != 22 {
		t.Fatalf("discovery found %d runs (%v), want 22", len(locs), err)
	}
	statuses := map[model.RunStatus]int{}
	env := state.NewEnv(0)
	for _, loc := range locs {
		run := state.Load(loc, env)
		statuses[run.Status]++
		want := stages
		if run.Kind == model.KindJonggrang {
			want = phases
		}
		if len(run.Stages) != want {
			t.Errorf("%s: %d stages, want %d", loc.StatePath, len(run.Stages), want)
		}
		for _, p := range run.Problems {
			if p.Severity == model.SeverityError && p.Code != model.CodeStageBlocked {
				t.Errorf("%s: %s: %s", loc.StatePath, p.Code, p.Message)
			}
		}
		if run.Kind == model.KindJonggrang && len(run.Stages) == phases {
			if last := run.Stages[len(run.Stages)-1]; last.Key != "17" {
				t.Errorf("%s: last phase %q, want completion (17) after the filler", loc.StatePath, last.Key)
			}
		}
	}
	if statuses[model.StatusCompleted] == 0 || statuses[model.StatusStalled] == 0 {
		t.Errorf("statuses %v: the shapes lost the spread of states", statuses)
	}
}

// Generated runs start in the past however many there are (a bench of 100,000 runs judged thousands dated
// ahead of the clock), one after the other, and the first 5,000 keep their 7-minute spacing (the names the
// benchmarks' notes quote).
func TestGeneratedRunsStartInOrderAndNotAhead(t *testing.T) {
	limit := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i < 200_000; i++ {
		if !sim.GeneratedAt(i).After(sim.GeneratedAt(i - 1)) {
			t.Fatalf("run %d starts at %s, not after run %d", i, sim.GeneratedAt(i), i-1)
		}
	}
	if last := sim.GeneratedAt(200_000); !last.Before(limit) {
		t.Errorf("run 200,000 starts %s, after %s", last, limit)
	}
	if got := sim.GeneratedAt(1).Sub(sim.GeneratedAt(0)); got != 7*time.Minute {
		t.Errorf("runs 0 and 1 are %s apart, want 7m", got)
	}
}
