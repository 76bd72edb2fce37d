package resumable

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"runwatch/model"
	"runwatch/state/procinfo"
	rt "runwatch/state/resumable/resumabletest"
	"runwatch/state/runlog"
)

func testEnv(t testing.TB) model.Env {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return model.Env{Now: time.Now(), Host: host, StaleAfter: model.DefaultStaleAfter, Proc: procinfo.System{}}
}

func load(t *testing.T, dir string) model.Run {
	t.Helper()
	return Load(filepath.Join(dir, "state.env"), testEnv(t))
}

func stageKeys(r model.Run) []string {
	var out []string
	for _, s := range r.Stages {
		out = append(out, s.Key)
	}
	return out
}

func stageStatuses(r model.Run) []model.StageStatus {
	var out []model.StageStatus
	for _, s := range r.Stages {
		out = append(out, s.Status)
	}
	return out
}

func problemCodes(r model.Run) []string {
	var out []string
	for _, p := range r.Problems {
		out = append(out, string(p.Severity)+":"+p.Code)
	}
	return out
}

func findProblem(r model.Run, code string) *model.Problem {
	for i := range r.Problems {
		if r.Problems[i].Code == code {
			return &r.Problems[i]
		}
	}
	return nil
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadIRMPausedBetweenStages(t *testing.T) {
	root := rt.Copy(t)
	dir := rt.Run(root, rt.IRM)
	r := load(t, dir)

	if r.ID != rt.IRM || r.Kind != model.KindResumable || r.Dir != dir || r.StatePath != filepath.Join(dir, "state.env") {
		t.Errorf("identity = %q %q %q %q", r.ID, r.Kind, r.Dir, r.StatePath)
	}
	if r.Title != "irm-id-full-backfill" || r.RawStatus != "in_progress" || r.CurrentStage != "S2" {
		t.Errorf("title/raw/current = %q %q %q", r.Title, r.RawStatus, r.CurrentStage)
	}
	if got := stageKeys(r); !reflect.DeepEqual(got, []string{"S1", "S2", "S3", "S4"}) {
		t.Errorf("stages = %v", got)
	}
	wantSt := []model.StageStatus{model.StageCompleted, model.StagePending, model.StagePending, model.StagePending}
	if got := stageStatuses(r); !reflect.DeepEqual(got, wantSt) {
		t.Errorf("stage statuses = %v", got)
	}
	if r.Status != model.StatusPaused || r.Progress != (model.Progress{Done: 1, Total: 4}) {
		t.Errorf("status %q progress %+v, want paused 1/4", r.Status, r.Progress)
	}
	if len(r.Problems) != 0 || len(r.Locks) != 0 {
		t.Errorf("problems %v locks %v, want none (no lock file: paused between stages)", r.Problems, r.Locks)
	}
	s1 := r.Stage("S1")
	if s1.DoneKey != "S1_DONE" || len(s1.Checklist) != 2 || !s1.Checklist[0].Done || s1.Checklist[1].Key != "CB_S1_VERIFY_GREEN" {
		t.Errorf("S1 = %+v", s1)
	}
	if s1.CompletedAt == nil || !s1.CompletedAt.Equal(time.Date(2026, 2, 15, 1, 58, 57, 0, time.UTC)) {
		t.Errorf("S1 completed_at = %v, want the checkpoint's timestamp", s1.CompletedAt)
	}
	if s2 := r.Stage("S2"); len(s2.Checklist) != 2 || s2.Checklist[0].Done || s2.Checklist[1].Done {
		t.Errorf("S2 checklist = %+v", s2.Checklist)
	}
	wantFlags := []model.Flag{
		{Group: "finalization", Name: "CANONICAL_STATE_UPDATED"},
		{Group: "finalization", Name: "REPORT_APPENDED"},
		{Group: "finalization", Name: "RUN_SUMMARY_UPDATED"},
	}
	if !reflect.DeepEqual(r.Flags, wantFlags) {
		t.Errorf("flags = %+v", r.Flags)
	}
	if len(r.Gates) != 1 || !r.Gates[0].Blocked || !strings.Contains(r.Gates[0].Detail, "CB_S2_SHADOW_REPORT_WRITTEN, CB_S2_VERIFY_GREEN") {
		t.Errorf("gates = %+v", r.Gates)
	}

	d := r.Resumable
	if d.RunID != "20260215T014733Z" || d.TaskName != "irm-id-full-backfill" || d.ResumeHint != "Resume from S2" ||
		d.LastCompleted != "S1" || d.StageOrderSource != "natural" || d.ChecklistPath != filepath.Join(dir, "checklist.state.env") {
		t.Errorf("detail = %+v", d)
	}
	if v, _ := d.Value("BASE_PIN_SHA"); v != "b55960aaeb1c8a5ebfc4af26db682ed21c45187b" || d.Keys.Len() != 22 || d.ChecklistKeys.Len() != 5 {
		t.Errorf("keys: BASE_PIN_SHA=%q, %d keys, %d checklist keys", v, d.Keys.Len(), d.ChecklistKeys.Len())
	}
	if len(d.Checkpoints) != 1 || d.Checkpoints[0].Stage != "S1" || d.Checkpoints[0].Status != "complete" {
		t.Errorf("checkpoints = %+v", d.Checkpoints)
	}
	if len(d.Ledger) != 1 || d.Ledger[0].Checkpoint != "S1" || !strings.HasPrefix(d.Ledger[0].SHA, "3f2a9c1d") || d.Ledger[0].Timestamp == nil {
		t.Errorf("ledger = %+v", d.Ledger)
	}
	wantArt := []string{"checkpoints/S1.done.json", "commits/commit-ledger.json", "s1/refactor-manifest.json", "s1/s1-verify.log"}
	if !reflect.DeepEqual(d.Artifacts, wantArt) {
		t.Errorf("artifacts = %v", d.Artifacts)
	}
	fi, _ := os.Stat(filepath.Join(dir, "run.log"))
	if r.Log == nil || r.Log.Path != filepath.Join(dir, "run.log") || r.Log.SizeBytes != fi.Size() {
		t.Errorf("log = %+v, want size %d", r.Log, fi.Size())
	}
}

// A run's checkpoints hold the folder's path once: each checkpoint's folder is CheckpointDir's string, not
// a path of its own; their stage and status are the words every run shares (model.Intern).
func TestLoadCheckpointsShareTheirFolderAndWords(t *testing.T) {
	root := rt.Copy(t)
	r := load(t, rt.Run(root, rt.IRM))
	d := r.Resumable
	if len(d.Checkpoints) == 0 {
		t.Fatal("no checkpoint")
	}
	cp := d.Checkpoints[0]
	if d.CheckpointDir == "" || cp.File() != filepath.Join(d.CheckpointDir, "S1.done.json") ||
		unsafe.StringData(d.CheckpointDir) != unsafe.StringData(cp.Dir()) {
		t.Errorf("checkpoint %q holds a folder of its own, not checkpoint_dir %q", cp.File(), d.CheckpointDir)
	}
	if unsafe.StringData(cp.Stage) != unsafe.StringData(model.Intern(cp.Stage)) ||
		unsafe.StringData(cp.Status) != unsafe.StringData(model.Intern(cp.Status)) {
		t.Errorf("checkpoint stage %q and status %q are not the shared words", cp.Stage, cp.Status)
	}
}

func TestLoadUpdatedAtIsNewestOfStateChecklistLog(t *testing.T) {
	dir := rt.Run(rt.Copy(t), rt.IRM)
	base := time.Date(2026, 2, 15, 2, 0, 0, 0, time.UTC)
	for i, name := range []string{"state.env", "run.log", "checklist.state.env"} {
		ts := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(dir, name), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	if r := load(t, dir); !r.UpdatedAt.Equal(base.Add(2 * time.Minute)) {
		t.Errorf("updated_at = %v, want the checklist's mtime", r.UpdatedAt)
	}
}

func TestLoadMiningNamedStagesInLogOrderWithDeadPidLock(t *testing.T) {
	dir := rt.Run(rt.Copy(t), rt.Mining)
	r := load(t, dir)

	want := []string{"ingest", "extract", "normalize", "anchor", "publish", "verify", "finalize"}
	if got := stageKeys(r); !reflect.DeepEqual(got, want) {
		t.Errorf("stages = %v, want run.log stage_start order %v", got, want)
	}
	if r.Resumable.StageOrderSource != "run.log" || !r.Resumable.StageOrderUncertain {
		t.Errorf("stage order source = %q", r.Resumable.StageOrderSource)
	}
	if r.CurrentStage != "verify" || r.Stage("verify").Status != model.StagePending || r.Stage("verify").DoneKey != "S_VERIFY_DONE" {
		t.Errorf("current = %q, verify = %+v", r.CurrentStage, r.Stage("verify"))
	}
	if items := r.Stage("ingest").Checklist; len(items) != 1 || items[0].Key != "CB_INGEST_HASHES_VERIFIED" || !items[0].Done {
		t.Errorf("ingest checklist = %+v", items)
	}
	if len(r.Locks) != 1 {
		t.Fatalf("locks = %+v", r.Locks)
	}
	l := r.Locks[0]
	if l.Path != filepath.Join(dir, "lock", "active.lock") {
		t.Errorf("lock path = %q: LOCK_FILE (another machine's path) must be re-rooted at the run folder", l.Path)
	}
	if l.Verdict != model.VerdictStale || !strings.Contains(strings.Join(l.Reasons, ";"), "is not running on this host") {
		t.Errorf("lock verdict %q reasons %v, want stale: pid dead", l.Verdict, l.Reasons)
	}
	if l.RunID != "20260215T143525Z" || l.User != "u" || l.AcquiredAt == nil || !l.AcquiredAt.Equal(time.Date(2026, 2, 15, 14, 37, 31, 0, time.UTC)) {
		t.Errorf("lock fields = %+v", l)
	}
	// No checkpoint for the five done stages: the mining tool reopens them on its next start. And nothing in
	// this run.log says where finalize goes (it was never started), so the step after verify is unknown.
	want = []string{"warning:lock-stale", "warning:checkpoint-missing", "warning:checkpoint-missing",
		"warning:checkpoint-missing", "warning:checkpoint-missing", "warning:checkpoint-missing", "warning:stage-order-unknown"}
	if got := problemCodes(r); !reflect.DeepEqual(got, want) {
		t.Errorf("problems = %v", got)
	}
	if next, known := r.Resumable.NextStage("verify"); known {
		t.Errorf("next after verify = %q, but nothing on disk says so", next)
	}
	if !r.Stage("finalize").OrderUnknown() || r.Stage("verify").OrderUnknown() || r.Stage("ingest").OrderUnknown() {
		t.Errorf("order marks: %+v", r.Stages)
	}
	if r.Status != model.StatusStalled || r.Progress != (model.Progress{Done: 5, Total: 7}) {
		t.Errorf("status %q progress %+v, want stalled 5/7", r.Status, r.Progress)
	}
}

func TestLoadSphinxOtherHostLockAndM3Inconsistency(t *testing.T) {
	dir := rt.Run(rt.Copy(t), rt.Sphinx)
	r := load(t, dir)

	want := []string{"M0", "M1", "M2", "M3", "M4", "M5", "M6", "M7", "M8", "M9", "M9B", "M10", "M11", "M12", "M13", "M14"}
	if got := stageKeys(r); !reflect.DeepEqual(got, want) {
		t.Errorf("stages = %v (PHASE_8_COMMIT4_DONE must not be a stage)", got)
	}
	if r.Resumable.StageOrderSource != "natural" {
		t.Errorf("order source = %q", r.Resumable.StageOrderSource)
	}
	m3 := r.Stage("M3")
	if m3.Status != model.StageCompleted || m3.ChecklistDoneKey != "M3_CHECKLIST_DONE" || m3.ChecklistDone == nil || !*m3.ChecklistDone {
		t.Errorf("M3 = %+v", m3)
	}
	var m3Items []string
	for _, it := range m3.Checklist {
		m3Items = append(m3Items, it.Key)
	}
	if !reflect.DeepEqual(m3Items, []string{"CB_M3_M7_BLOCKER_CLEARED", "CB_M3_NO_LEGACY_TOKENS", "CB_M3_STAGE_COMPLETE"}) {
		t.Errorf("M3 items = %v", m3Items)
	}
	p := findProblem(r, model.CodeStageDoneChecklistIncomplete)
	if p == nil || p.Severity != model.SeverityError || p.Message != "M3 is marked done but CB_M3_NO_LEGACY_TOKENS is 0" ||
		p.Path != filepath.Join(dir, "checklist.state.env") {
		t.Errorf("M3 problem = %+v", p)
	}
	if len(r.Locks) != 1 {
		t.Fatalf("locks = %+v", r.Locks)
	}
	l := r.Locks[0]
	if l.Verdict != model.VerdictUnknown || l.Host != "other-host" || l.PID != 123 || l.Reasons[0] != "held on other-host; liveness cannot be checked here" {
		t.Errorf("lock = %+v", l)
	}
	if findProblem(r, model.CodeLockUnknown) == nil {
		t.Errorf("problems = %v, want lock-unknown", problemCodes(r))
	}
	if r.Status != model.StatusBlocked || r.CurrentStage != "M4" || r.Stage("M4").Status != model.StagePending {
		t.Errorf("status %q current %q M4 %q", r.Status, r.CurrentStage, r.Stage("M4").Status)
	}
}

func TestLoadLiveLockMakesCurrentStageRunning(t *testing.T) {
	for _, style := range []string{"json", "env"} {
		t.Run(style, func(t *testing.T) {
			dir := rt.Run(rt.Copy(t), rt.IRM)
			env := testEnv(t)
			pid := rt.LivePID(t)
			lock := filepath.Join(dir, "run.lock")
			if style == "json" {
				rt.WriteJSONLock(t, lock, pid, env.Host, time.Now())
			} else {
				rt.WriteEnvLock(t, lock, pid, strings.ToUpper(env.Host), time.Now())
			}
			r := Load(filepath.Join(dir, "state.env"), env)
			if len(r.Locks) != 1 || r.Locks[0].Verdict != model.VerdictLive || r.Locks[0].PID != pid {
				t.Fatalf("locks = %+v", r.Locks)
			}
			if r.Status != model.StatusRunning || r.Stage("S2").Status != model.StageRunning {
				t.Errorf("status %q, S2 %q: want running", r.Status, r.Stage("S2").Status)
			}
			if len(r.Problems) != 0 {
				t.Errorf("problems = %v", r.Problems)
			}
		})
	}
}

func TestLoadArchived(t *testing.T) {
	r := load(t, rt.Run(rt.Copy(t), rt.Archived))
	if !r.Archived || r.ID != rt.Archived {
		t.Errorf("archived %v id %q", r.Archived, r.ID)
	}
	if p := findProblem(r, model.CodeArchived); p == nil || p.Severity != model.SeverityInfo {
		t.Errorf("problems = %v", problemCodes(r))
	}
}

func TestLoadUnparsableStateKeepsGoodLines(t *testing.T) {
	dir := rt.Run(rt.Copy(t), rt.Broken)
	r := load(t, dir)
	p := findProblem(r, model.CodeStateUnparsable)
	if p == nil || p.Severity != model.SeverityError || p.Path != filepath.Join(dir, "state.env") ||
		!strings.Contains(p.Message, "state.env: line 4: unterminated double quote") {
		t.Fatalf("problem = %+v", p)
	}
	if got := stageKeys(r); !reflect.DeepEqual(got, []string{"S1", "S2"}) || r.CurrentStage != "S1" {
		t.Errorf("stages %v current %q: the good lines must still count", got, r.CurrentStage)
	}
	if r.Status != model.StatusBlocked || r.Title != rt.Broken {
		t.Errorf("status %q title %q", r.Status, r.Title)
	}
}

func TestLoadExportStyle(t *testing.T) {
	r := load(t, rt.Run(rt.Copy(t), rt.Export))
	d := r.Resumable
	for key, want := range map[string]string{"FOO": "bar", "TASK_NAME": "export-style", "PATH_HINT": "$HOME/not/expanded",
		"CURRENT_STAGE": "S1", "RUN_ID": "20260216T010000Z"} {
		if got, _ := d.Value(key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if r.Title != "export-style" || len(r.Problems) != 0 {
		t.Errorf("title %q problems %v", r.Title, r.Problems)
	}
	if items := r.Stage("S1").Checklist; len(items) != 1 || items[0].Key != "CB_S1_READY" {
		t.Errorf("S1 checklist = %+v", items)
	}
}

func TestLoadMissingFiles(t *testing.T) {
	dir := t.TempDir()
	r := load(t, dir)
	// The checklist goes wherever state.env goes: its absence adds nothing to the missing state.
	if got := problemCodes(r); !reflect.DeepEqual(got, []string{"error:state-file-missing", "info:checklist-file-missing"}) {
		t.Errorf("problems = %v", got)
	}
	if r.Status != model.StatusBlocked || r.ID != filepath.Base(dir) {
		t.Errorf("status %q id %q", r.Status, r.ID)
	}
	if !strings.Contains(r.Problems[0].Message, filepath.Join(dir, "state.env")) {
		t.Errorf("message %q must name the file", r.Problems[0].Message)
	}
}

func TestLoadStateFileVariant(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "recovery.state.env"), "CURRENT_STAGE=\"R1B\"\nLOCK_FILE=\"\"\nR10_DONE=\"0\"\nR1B_DONE=\"0\"\nR1_DONE=\"1\"\nR9B_DONE=\"0\"\nR9_DONE=\"0\"\n")
	writeFile(t, filepath.Join(dir, "recovery.log"), "[2026-02-16T04:50:13Z] stage_start stage=R1B\n")
	writeFile(t, filepath.Join(dir, "recovery.checklist.state.env"), "CB_R1B_DONE_CHECK=\"1\"\nCB_R1_X=\"1\"\n")
	rt.WriteEnvLock(t, filepath.Join(dir, "recovery.state.lock"), rt.DeadPID(t), testEnv(t).Host, time.Now())

	r := Load(filepath.Join(dir, "recovery.state.env"), testEnv(t))
	if r.ID != "recovery" || r.Log == nil || r.Log.Path != filepath.Join(dir, "recovery.log") {
		t.Errorf("id %q log %+v", r.ID, r.Log)
	}
	if got := stageKeys(r); !reflect.DeepEqual(got, []string{"R1", "R1B", "R9", "R9B", "R10"}) {
		t.Errorf("stages = %v", got)
	}
	if items := r.Stage("R1B").Checklist; len(items) != 1 || items[0].Key != "CB_R1B_DONE_CHECK" {
		t.Errorf("R1B checklist = %+v (longest prefix)", items)
	}
	if len(r.Locks) != 1 || r.Locks[0].Verdict != model.VerdictStale || r.Locks[0].Path != filepath.Join(dir, "recovery.state.lock") {
		t.Errorf("locks = %+v", r.Locks)
	}
}

func TestLoadVariantWithoutChecklistWarns(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "remediation.state.env"), "CURRENT_STAGE=\"C0\"\nC0_DONE=\"0\"\n")
	r := Load(filepath.Join(dir, "remediation.state.env"), testEnv(t))
	p := findProblem(r, model.CodeChecklistMissing)
	if p == nil || p.Severity != model.SeverityWarning {
		t.Errorf("problems = %v", problemCodes(r))
	}
	if r.Status != model.StatusPaused {
		t.Errorf("status = %q", r.Status)
	}
}

func TestLoadStageOrderKey(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "state.env"), "CURRENT_STAGE=\"beta\"\nSTAGE_ORDER=\"gamma, S_BETA alpha\"\nS_ALPHA_DONE=\"0\"\nS_BETA_DONE=\"0\"\nS_GAMMA_DONE=\"1\"\n")
	writeFile(t, filepath.Join(dir, "checklist.state.env"), "CHECKLIST_SCHEMA_VERSION=\"1\"\n")
	r := load(t, dir)
	if got := stageKeys(r); !reflect.DeepEqual(got, []string{"gamma", "beta", "alpha"}) || r.Resumable.StageOrderSource != "STAGE_ORDER" {
		t.Errorf("stages %v source %q", got, r.Resumable.StageOrderSource)
	}
}

func TestLoadRelativeLockFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "state.env"), "CURRENT_STAGE=\"S1\"\nLOCK_FILE=\"locks/run.lock\"\nS1_DONE=\"0\"\n")
	writeFile(t, filepath.Join(dir, "checklist.state.env"), "")
	rt.WriteJSONLock(t, filepath.Join(dir, "locks", "run.lock"), rt.DeadPID(t), testEnv(t).Host, time.Now())
	r := load(t, dir)
	if len(r.Locks) != 1 || r.Locks[0].Path != filepath.Join(dir, "locks", "run.lock") {
		t.Errorf("locks = %+v", r.Locks)
	}
}

func TestLoadFlsLockVariant(t *testing.T) {
	dir := t.TempDir()
	env := testEnv(t)
	writeFile(t, filepath.Join(dir, "state.env"), "CURRENT_STAGE=\"S1\"\nLOCK_FILE=\""+filepath.Join(dir, "x.lock")+"\"\nS1_DONE=\"0\"\n")
	writeFile(t, filepath.Join(dir, "checklist.state.env"), "")
	writeFile(t, filepath.Join(dir, "x.lock"), "PID=1\nHOST="+env.Host+"\nCREATED_AT=2026-02-15T14:37:31Z\n")
	r := Load(filepath.Join(dir, "state.env"), env)
	if len(r.Locks) != 1 || r.Locks[0].PID != 1 || r.Locks[0].AcquiredAt == nil || r.Locks[0].Host != env.Host {
		t.Fatalf("locks = %+v", r.Locks)
	}
}

func TestLoadCompletedNeedsFinalization(t *testing.T) {
	base := "CURRENT_STAGE=\"S2\"\nS1_DONE=\"1\"\nS2_DONE=\"1\"\nPUSH_ATTEMPTED=\"1\"\nPUSH_CONFIRMED=\"0\"\n"
	for _, tc := range []struct {
		flags string
		want  model.RunStatus
	}{
		{"CANONICAL_STATE_UPDATED=\"1\"\nREPORT_APPENDED=\"1\"\nRUN_SUMMARY_UPDATED=\"1\"\n", model.StatusCompleted},
		{"CANONICAL_STATE_UPDATED=\"1\"\nREPORT_APPENDED=\"0\"\nRUN_SUMMARY_UPDATED=\"1\"\n", model.StatusPaused},
	} {
		r := load(t, runDir(t, base+tc.flags, "CB_S2_A=\"1\"\n"))
		if r.Status != tc.want || r.Progress != (model.Progress{Done: 2, Total: 2}) {
			t.Errorf("flags %q: status %q progress %+v, want %q", tc.flags, r.Status, r.Progress, tc.want)
		}
		var push []string
		for _, f := range r.Flags {
			if f.Group == model.FlagGroupPush {
				push = append(push, fmt.Sprintf("%s=%v", f.Name, f.Value))
			}
		}
		if strings.Join(push, ",") != "PUSH_ATTEMPTED=true,PUSH_CONFIRMED=false" {
			t.Errorf("push flags = %v", push)
		}
		if len(r.Gates) != 0 {
			t.Errorf("gates = %+v: a done stage has no open gate", r.Gates)
		}
	}
}

func TestLockCandidates(t *testing.T) {
	dir := "/here/reports/run-1"
	state := filepath.Join(dir, "state.env")
	tests := []struct {
		keys []model.KV
		want []string
	}{
		{nil, []string{dir + "/run.lock"}},
		{[]model.KV{{Key: "LOCK_FILE", Value: "/there/reports/run-1/lock/active.lock"}},
			[]string{"/there/reports/run-1/lock/active.lock", dir + "/lock/active.lock", dir + "/active.lock"}},
		{[]model.KV{{Key: "LOCK_FILE", Value: "/x/ctl/lock/a.lock"}, {Key: "CONTROL_RUN_ROOT", Value: "/x/ctl"}, {Key: "RUN_ROOT", Value: "/x/ctl/lock/a.lock"}},
			[]string{"/x/ctl/lock/a.lock", dir + "/lock/a.lock", dir + "/a.lock"}},
		{[]model.KV{{Key: "LOCK_FILE", Value: "locks/r.lock"}}, []string{dir + "/locks/r.lock", dir + "/r.lock"}},
	}
	for _, tc := range tests {
		if got := LockCandidates(state, model.PackKVs(tc.keys)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("LockCandidates(%v) = %v, want %v", tc.keys, got, tc.want)
		}
	}
	if got := LockCandidates("/r/fix.state.env", model.KVs{}); !reflect.DeepEqual(got, []string{"/r/fix.state.lock", "/r/fix.lock"}) {
		t.Errorf("variant defaults = %v", got)
	}
}

// TestStageTimesAreOneArray: the times the log gives a run's stages are made in one array, not an object
// each (a watcher keeps every run's; issue 35), and they are the log's: each stage's start and end, a stage
// the log never says started beginning when the one before ended.
func TestStageTimesAreOneArray(t *testing.T) {
	base := time.Date(2026, 11, 8, 21, 0, 0, 0, time.UTC)
	var stages []model.Stage
	ev := runlog.StageEvidence{Spans: map[string]model.StageSpan{}}
	for i := range 10 {
		key := fmt.Sprintf("M%d", i)
		stages = append(stages, model.Stage{Key: key, Status: model.StageCompleted})
		if i != 4 {
			ev.Spans[key] = model.StageSpan{Start: base.Add(time.Duration(2*i) * time.Minute),
				End: base.Add(time.Duration(2*i+1) * time.Minute)}
		}
	}
	var run model.Run
	allocs := testing.AllocsPerRun(10, func() {
		run = model.Run{Stages: slices.Clone(stages)}
		stageTimes(&run, ev)
	})
	if allocs > 3 {
		t.Errorf("%v allocations for 20 times; want the stages, the times and one scratch list", allocs)
	}
	m4 := run.Stages[4]
	if m4.StartedAt == nil || !m4.StartedAt.Equal(base.Add(7*time.Minute)) || m4.CompletedAt != nil {
		t.Errorf("M4 (no log span) = %v–%v, want the start at M3's end and no end", m4.StartedAt, m4.CompletedAt)
	}
	if s := run.Stages[9]; !s.StartedAt.Equal(base.Add(18*time.Minute)) || !s.CompletedAt.Equal(base.Add(19*time.Minute)) {
		t.Errorf("M9 = %v–%v", s.StartedAt, s.CompletedAt)
	}
}

// TestCheckpointTimesAreOneArray: a run's checkpoints' times are one array, not an object each.
func TestCheckpointTimesAreOneArray(t *testing.T) {
	dir := rt.MinimalRun(t, t.TempDir(), "irm-stamps-20261201T080000Z")
	for i, stage := range []string{"S1", "S2", "S3"} {
		writeFile(t, filepath.Join(dir, "artifacts", "checkpoints", stage+".done.json"),
			fmt.Sprintf(`{"stage": %q, "status": "complete", "timestamp_utc": "2026-12-01T08:0%d:00Z"}`, stage, i+1))
	}
	cps := load(t, dir).Resumable.Checkpoints
	if len(cps) != 3 {
		t.Fatalf("checkpoints %+v", cps)
	}
	for i := range cps {
		if cps[i].Timestamp == nil || cps[i].Timestamp.Minute() != i+1 {
			t.Fatalf("checkpoint %d's time %v", i, cps[i].Timestamp)
		}
		if i > 0 && uintptr(unsafe.Pointer(cps[i].Timestamp))-uintptr(unsafe.Pointer(cps[i-1].Timestamp)) != unsafe.Sizeof(time.Time{}) {
			t.Errorf("checkpoint %d's time is not next to the one before", i)
		}
	}
}
