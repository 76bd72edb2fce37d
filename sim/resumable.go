package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stageDef is one stage of a resumable plan and its checklist items (CB_<STAGE>_<ITEM>).
type stageDef struct {
	ID    string // S1, M2, or a named stage such as verify
	Items []string
}

// logStyle picks which of the real tools' run.log vocabularies a run uses (docs/FORMATS.md B.5).
type logStyle int

const (
	styleIRM    logStyle = iota // "S1 complete" + "  next_stage=S2", artifact integrity blocks
	styleSphinx                 // "stage-complete M0 next=M1"
	styleMining                 // "stage_start stage=ingest", "stage_complete stage=ingest"
)

// resumablePlan describes one run of the resumable convention.
type resumablePlan struct {
	Task     string
	Stages   []stageDef
	Named    bool   // named stages: S_<NAME>_DONE flags, CURRENT_STAGE holds the lowercase name
	Checkbox bool   // <STAGE>_CHECKLIST_DONE keys exist
	LockRel  string // LOCK_FILE relative to the run folder: run.lock or lock/active.lock
	Style    logStyle
	Repo     string
	Plan     string
}

func (p *resumablePlan) flagBase(id string) string {
	if p.Named {
		return "S_" + strings.ToUpper(id)
	}
	return strings.ToUpper(id)
}

func (p *resumablePlan) doneKey(id string) string { return p.flagBase(id) + "_DONE" }

func itemKey(stage, item string) string { return "CB_" + strings.ToUpper(stage) + "_" + item }

// resumableActor is a resumable-execution run driven one invocation at a time (MAX_STAGES=1): take the lock,
// re-read the state files, work through the current stage ticking checklist items, write artifacts and a
// checkpoint, mark the stage done, release the lock. Between invocations the run is paused with no lock.
type resumableActor struct {
	plan    resumablePlan
	reports string
	dir     string
	runID   string
	pid     int
	host    string
	user    string
	rng     *rand.Rand

	// blockAt leaves blockItem at 0 when stage blockAt runs, so the gate refuses and the run pauses there.
	blockAt, blockItem string
	// dieIn makes the process vanish in the middle of that stage, leaving its lock behind.
	dieIn string

	batch *batchFiles // nil: write through (see batchFiles)
	steps
}

func (a *resumableActor) statePath() string     { return filepath.Join(a.dir, "state.env") }
func (a *resumableActor) checklistPath() string { return filepath.Join(a.dir, "checklist.state.env") }
func (a *resumableActor) logPath() string       { return filepath.Join(a.dir, "run.log") }
func (a *resumableActor) lockPath() string      { return filepath.Join(a.dir, a.plan.LockRel) }

func (a *resumableActor) log(at time.Time, msg string, cont ...string) error {
	if a.batch != nil {
		a.batch.log.WriteString(logEntry(at, msg, cont...))
		return nil
	}
	return appendFile(a.logPath(), logEntry(at, msg, cont...))
}

// batchFiles holds a generated run's env files and log in memory until flush, so generating a thousand runs
// writes each file once instead of once per step. Live runs never batch: there every write is the point.
type batchFiles struct {
	env map[string]map[string]string
	log strings.Builder
}

func (a *resumableActor) readEnv(path string) (map[string]string, error) {
	if a.batch == nil {
		return readEnvFile(path)
	}
	kv, ok := a.batch.env[path]
	if !ok {
		return nil, fmt.Errorf("%s: %w", path, os.ErrNotExist)
	}
	return maps.Clone(kv), nil
}

func (a *resumableActor) writeEnv(path string, kv map[string]string) error {
	if a.batch == nil {
		return writeEnvFile(path, kv)
	}
	a.batch.env[path] = maps.Clone(kv)
	return nil
}

// flush writes what a batch holds, in the writers' own formats.
func (a *resumableActor) flush() error {
	if a.batch == nil {
		return nil
	}
	for path, kv := range a.batch.env {
		if err := writeEnvFile(path, kv); err != nil {
			return err
		}
	}
	return appendFile(a.logPath(), a.batch.log.String())
}

func (a *resumableActor) step(at time.Time) (time.Duration, bool, error) {
	return a.next(at, a.planInvocation)
}

// planInvocation queues the next invocation (or the bootstrap of a new run).
func (a *resumableActor) planInvocation() {
	if a.dir == "" {
		a.then(a.bootstrap)
		return
	}
	a.then(a.acquire)
	a.then(a.beginStage)
}

func (a *resumableActor) bootstrap(at time.Time) (time.Duration, error) {
	a.runID = at.UTC().Format("20060102T150405Z")
	a.dir = filepath.Join(a.reports, a.plan.Task+"-"+a.runID)
	for n := 2; exists(a.dir); n++ {
		// Two runs of one task in the same second (a fast simulation) get a prefixed id, as real ids may be.
		a.runID = fmt.Sprintf("r%d-%s", n, at.UTC().Format("20060102T150405Z"))
		a.dir = filepath.Join(a.reports, a.plan.Task+"-"+a.runID)
	}
	if err := os.MkdirAll(filepath.Join(a.dir, "artifacts", "checkpoints"), 0o755); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(a.lockPath()), 0o755); err != nil {
		return 0, err
	}
	st := map[string]string{
		"ARTIFACT_ROOT":           filepath.Join(a.dir, "artifacts"),
		"BASE_BRANCH":             "main",
		"BASE_PIN_SHA":            a.hex(40),
		"CANONICAL_STATE_UPDATED": "0",
		"CURRENT_STAGE":           a.plan.Stages[0].ID,
		"LAST_RESUME_HINT":        "Resume from " + a.plan.Stages[0].ID,
		"LOCK_FILE":               a.lockPath(),
		"PLAN_PATH":               a.plan.Plan,
		"REPO_ROOT":               a.plan.Repo,
		"REPORT_APPENDED":         "0",
		"RUN_ID":                  a.runID,
		"RUN_ROOT":                a.dir,
		"RUN_SUMMARY_UPDATED":     "0",
		"STAGE_STATUS":            "in_progress",
		"STARTED_AT_UTC":          logStamp(at),
		"STATE_SCHEMA_VERSION":    "1",
		"TARGET_BRANCH":           "runs/" + a.plan.Task + "-" + a.runID,
		"TASK_NAME":               a.plan.Task,
	}
	if a.plan.Style == styleMining {
		// The mining tool keeps its reports in CONTROL_RUN_ROOT and points RUN_ROOT at a data cache.
		st["CONTROL_RUN_ROOT"] = a.dir
		st["RUN_ROOT"] = filepath.Join(a.plan.Repo, ".cache", "mining", "runs", a.runID)
		st["MODE"] = "full"
	}
	cl := map[string]string{"CHECKLIST_SCHEMA_VERSION": "1"}
	for _, s := range a.plan.Stages {
		st[a.plan.doneKey(s.ID)] = "0"
		if a.plan.Checkbox {
			st[a.plan.flagBase(s.ID)+"_CHECKLIST_DONE"] = "0"
		}
		for _, it := range s.Items {
			cl[itemKey(s.ID, it)] = "0"
		}
	}
	if err := a.writeEnv(a.statePath(), st); err != nil {
		return 0, err
	}
	if err := a.writeEnv(a.checklistPath(), cl); err != nil {
		return 0, err
	}
	err := a.log(at, "run_bootstrap mode=kickoff-new run_id="+a.runID,
		"run_root="+a.dir, "lock_file="+a.lockPath(), "plan="+a.plan.Plan)
	return 3 * time.Second, err
}

// acquire takes LOCK_FILE as the mining tool's locking.py does: exclusive create with a one-line JSON payload;
// a lock whose pid is gone is logged as stale_lock_replaced and overwritten; a live one makes us wait.
func (a *resumableActor) acquire(at time.Time) (time.Duration, error) {
	payload, err := pythonJSONLine(map[string]any{
		"acquired_at_utc": logStamp(at), "host": a.host, "pid": a.pid, "run_id": a.runID, "user": a.user,
	})
	if err != nil {
		return 0, err
	}
	f, err := os.OpenFile(a.lockPath(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		raw, rerr := os.ReadFile(a.lockPath())
		if rerr != nil {
			return 0, rerr
		}
		if pid := lockPID(raw); pid > 0 && pidAlive(pid) {
			return 0, errHeld
		}
		if err := a.log(at, "stale_lock_replaced payload="+strings.TrimSpace(string(raw))); err != nil {
			return 0, err
		}
		f, err = os.OpenFile(a.lockPath(), os.O_WRONLY|os.O_TRUNC, 0o644)
	}
	if err != nil {
		return 0, err
	}
	_, werr := f.WriteString(payload)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return 0, werr
	}
	return 600 * time.Millisecond, a.log(at, fmt.Sprintf("lock_acquired pid=%d run_id=%s", a.pid, a.runID))
}

// beginStage re-reads both files, as each invocation of the real tool starts from disk, and queues the work
// of the current stage.
func (a *resumableActor) beginStage(at time.Time) (time.Duration, error) {
	st, err := a.readEnv(a.statePath())
	if err != nil {
		return 0, err
	}
	cl, err := a.readEnv(a.checklistPath())
	if err != nil {
		return 0, err
	}
	cur := a.stageIndex(st["CURRENT_STAGE"])
	if cur < 0 {
		a.then(a.stopWith("stage_blocked stage="+st["CURRENT_STAGE"]+" failed_metrics=current_stage_unknown", true))
		return 0, nil
	}
	stage := a.plan.Stages[cur]
	if st[a.plan.doneKey(stage.ID)] == "1" {
		// Every stage is done: this invocation only finalizes.
		a.then(a.finalize)
		return 0, nil
	}
	if err := a.writeState(at, map[string]string{"STAGE_STATUS": "in_progress"}); err != nil {
		return 0, err
	}
	msg := "stage_start stage=" + stage.ID
	if err := a.log(at, msg); err != nil {
		return 0, err
	}
	for i, item := range stage.Items {
		key := itemKey(stage.ID, item)
		if cl[key] == "1" {
			continue
		}
		a.then(a.progress(stage.ID, item))
		if stage.ID == a.dieIn && i >= len(stage.Items)/2 {
			a.then(a.die)
			return time.Second, nil
		}
		if stage.ID == a.blockAt && item == a.blockItem {
			continue
		}
		a.then(a.tick(key))
	}
	a.then(a.gate(cur))
	return time.Second, nil
}

func (a *resumableActor) stageIndex(id string) int {
	for i, s := range a.plan.Stages {
		if strings.EqualFold(s.ID, id) {
			return i
		}
	}
	return -1
}

func (a *resumableActor) progress(stage, item string) writeStep {
	return func(at time.Time) (time.Duration, error) {
		n := 40 + a.rng.IntN(400)
		err := a.log(at, fmt.Sprintf("check_progress stage=%s item=%s files_checked=%d", stage, strings.ToLower(item), n))
		return 800 * time.Millisecond, err
	}
}

// tick sets one checklist item to 1, re-reading the file first so a person's concurrent ticks are kept.
func (a *resumableActor) tick(key string) writeStep {
	return func(at time.Time) (time.Duration, error) {
		cl, err := a.readEnv(a.checklistPath())
		if err != nil {
			return 0, err
		}
		cl[key] = "1"
		if err := a.writeEnv(a.checklistPath(), cl); err != nil {
			return 0, err
		}
		return 900 * time.Millisecond, a.log(at, "checklist_item_done key="+key)
	}
}

// gate checks every CB_<STAGE>_* item; if one is 0 the stage is blocked and the invocation stops there.
func (a *resumableActor) gate(cur int) writeStep {
	return func(at time.Time) (time.Duration, error) {
		stage := a.plan.Stages[cur]
		cl, err := a.readEnv(a.checklistPath())
		if err != nil {
			return 0, err
		}
		var missing []string
		for _, it := range stage.Items {
			if cl[itemKey(stage.ID, it)] != "1" {
				missing = append(missing, itemKey(stage.ID, it))
			}
		}
		if len(missing) > 0 {
			// A run built to pause at its gate ends here; a live run tries again on its next invocation.
			a.then(a.stopWith(fmt.Sprintf("stage_blocked stage=%s failed_metrics=%s", stage.ID, strings.Join(missing, ",")), stage.ID == a.blockAt))
			return 0, nil
		}
		if err := a.writeArtifacts(at, stage); err != nil {
			return 0, err
		}
		a.then(a.completeStage(cur))
		return 800 * time.Millisecond, nil
	}
}

func (a *resumableActor) writeArtifacts(at time.Time, stage stageDef) error {
	dir := filepath.Join(a.dir, "artifacts", strings.ToLower(stage.ID))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var cont []string
	for _, name := range []string{strings.ToLower(stage.ID) + "-verify.log", "summary.json"} {
		var body string
		if strings.HasSuffix(name, ".json") {
			body = fmt.Sprintf("{\"stage\": %q, \"items\": %d, \"checked\": %d}\n", stage.ID, len(stage.Items), 100+a.rng.IntN(900))
		} else {
			body = fmt.Sprintf("verify %s: %d checks passed\n", stage.ID, 10+a.rng.IntN(90))
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(body))
		cont = append(cont, "artifact="+path, "sha256="+hex.EncodeToString(sum[:]), "size_bytes="+strconv.Itoa(len(body)))
	}
	return a.log(at, stage.ID+" artifact integrity", cont...)
}

func (a *resumableActor) completeStage(cur int) writeStep {
	return func(at time.Time) (time.Duration, error) {
		stage := a.plan.Stages[cur]
		next := ""
		if cur+1 < len(a.plan.Stages) {
			next = a.plan.Stages[cur+1].ID
		}
		cp, err := pythonJSONLine(map[string]any{"run_id": a.runID, "stage": stage.ID, "status": "complete", "timestamp_utc": logStamp(at)})
		if err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(a.dir, "artifacts", "checkpoints", stage.ID+".done.json"), []byte(cp), 0o644); err != nil {
			return 0, err
		}
		set := map[string]string{a.plan.doneKey(stage.ID): "1", "LAST_COMPLETED_STAGE": stage.ID}
		if a.plan.Checkbox {
			set[a.plan.flagBase(stage.ID)+"_CHECKLIST_DONE"] = "1"
		}
		if next != "" {
			set["CURRENT_STAGE"] = next
			set["LAST_RESUME_HINT"] = "Resume from " + next
		}
		if err := a.writeState(at, set); err != nil {
			return 0, err
		}
		switch a.plan.Style {
		case styleSphinx:
			err = a.log(at, fmt.Sprintf("stage-complete %s next=%s", stage.ID, orNone(next)))
		case styleMining:
			err = a.log(at, "stage_complete stage="+stage.ID)
		default:
			err = a.log(at, stage.ID+" complete", "next_stage="+orNone(next))
		}
		if err != nil {
			return 0, err
		}
		if next == "" {
			a.then(a.finalize)
			return 700 * time.Millisecond, nil
		}
		a.then(a.stopWith("stopping after MAX_STAGES=1", false, "resume_target_stage="+next))
		return 500 * time.Millisecond, nil
	}
}

func (a *resumableActor) finalize(at time.Time) (time.Duration, error) {
	if err := a.writeState(at, map[string]string{
		"CANONICAL_STATE_UPDATED": "1", "REPORT_APPENDED": "1", "RUN_SUMMARY_UPDATED": "1", "STAGE_STATUS": "complete",
	}); err != nil {
		return 0, err
	}
	ids := make([]string, len(a.plan.Stages))
	for i, s := range a.plan.Stages {
		ids[i] = s.ID
	}
	if err := a.log(at, "finalize_complete checkpoint="+ids[len(ids)-1]); err != nil {
		return 0, err
	}
	if err := a.log(at, "run_complete stop_reason=completed_all_phases"); err != nil {
		return 0, err
	}
	if err := a.log(at, "full plan complete", "completed_stages="+strings.Join(ids, ",")); err != nil {
		return 0, err
	}
	if err := a.release(at); err != nil {
		return 0, err
	}
	a.ended = true
	return 0, nil
}

// stopWith ends the invocation: a closing log entry, then the lock released. end finishes the actor too.
func (a *resumableActor) stopWith(msg string, end bool, cont ...string) writeStep {
	return func(at time.Time) (time.Duration, error) {
		if err := a.log(at, msg, cont...); err != nil {
			return 0, err
		}
		if err := a.release(at); err != nil {
			return 0, err
		}
		if end {
			a.ended = true
		}
		return 4 * time.Second, nil
	}
}

// release deletes the lock only when it is still ours (its run_id matches), as locking.py does.
func (a *resumableActor) release(at time.Time) error {
	raw, err := os.ReadFile(a.lockPath())
	if errors.Is(err, os.ErrNotExist) {
		return a.log(at, "lock_release_skipped reason=lock_missing run_id="+a.runID)
	}
	if err != nil {
		return err
	}
	if !strings.Contains(string(raw), `"run_id": "`+a.runID+`"`) {
		return a.log(at, "lock_release_skipped reason=run_id_mismatch run_id="+a.runID)
	}
	if err := os.Remove(a.lockPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return a.log(at, "lock_released run_id="+a.runID)
}

// die is the process vanishing mid-stage: no log line, no release. Its lock stays behind.
func (a *resumableActor) die(at time.Time) (time.Duration, error) {
	a.ended = true
	return 0, nil
}

// interrupt ends a live invocation cleanly when the simulator stops, as the tool's finally-block does.
func (a *resumableActor) interrupt(at time.Time) error {
	if a.dir == "" || a.ended {
		return nil
	}
	raw, err := os.ReadFile(a.lockPath())
	if err != nil || lockPID(raw) != a.pid {
		return nil
	}
	if err := a.log(at, "stopping after signal", "signal=SIGTERM"); err != nil {
		return err
	}
	return a.release(at)
}

func (a *resumableActor) writeState(at time.Time, set map[string]string) error {
	st, err := a.readEnv(a.statePath())
	if err != nil {
		return err
	}
	for k, v := range set {
		st[k] = v
	}
	st["LAST_UPDATED_AT_UTC"] = logStamp(at)
	return a.writeEnv(a.statePath(), st)
}

func (a *resumableActor) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[a.rng.IntN(16)]
	}
	return string(b)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// lockPID reads the pid of a JSON or env-style lock payload; 0 when there is none.
func lockPID(raw []byte) int {
	s := string(raw)
	i := strings.Index(s, `"pid"`)
	if i < 0 {
		i = strings.Index(s, "pid=")
		if i < 0 {
			return 0
		}
		s = s[i+4:]
	} else {
		s = s[i+5:]
	}
	s = strings.TrimLeft(s, `:= "`)
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(s[:end])
	return n
}

// pidAlive is kill(pid, 0): nil or EPERM means the process exists.
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
