package resumable

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"runwatch/model"
	rt "runwatch/state/resumable/resumabletest"
)

// runDir makes a run folder with the given state and checklist content.
func runDir(t *testing.T, state, checklist string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "task-20260215T000000Z")
	writeFile(t, filepath.Join(dir, "state.env"), state)
	writeFile(t, filepath.Join(dir, "checklist.state.env"), checklist)
	return dir
}

const okState = "CURRENT_STAGE=\"S1\"\nS1_DONE=\"0\"\nS2_DONE=\"0\"\n"

func TestLoadBadStateFiles(t *testing.T) {
	tests := []struct {
		name     string
		state    string
		checkl   string
		code     string
		sev      model.Severity
		contains string
	}{
		{"unterminated quote", "S1_DONE=\"0\nCURRENT_STAGE=\"S1\"\n", "", model.CodeStateUnparsable, model.SeverityError, "line 1: unterminated double quote"},
		{"NUL byte", "CURRENT_STAGE=\"S1\"\nS1_DONE=\"0\x00\"\n", "", model.CodeStateUnparsable, model.SeverityError, "line 2: contains a NUL byte"},
		{"over 1 MiB", "CURRENT_STAGE=\"S1\"\nS1_DONE=\"0\"\nBIG=\"" + strings.Repeat("x", 1<<20) + "\"\n", "", model.CodeStateTooLarge, model.SeverityError, "limit"},
		{"checklist unterminated", okState, "CB_S1_A='1\n", model.CodeChecklistUnparsable, model.SeverityError, "line 1: unterminated single quote"},
		{"checklist value not 0/1", okState, "CB_S1_A=\"yes\"\n", model.CodeChecklistValue, model.SeverityWarning, `CB_S1_A has value "yes"`},
		{"done flag not 0/1", "CURRENT_STAGE=\"S1\"\nS1_DONE=\"true\"\n", "", model.CodeFlagValue, model.SeverityWarning, `S1_DONE has value "true"`},
		{"finalization flag not 0/1", okState + "REPORT_APPENDED=\"2\"\n", "", model.CodeFlagValue, model.SeverityWarning, "REPORT_APPENDED"},
		{"current stage unknown", "CURRENT_STAGE=\"S9\"\nS1_DONE=\"0\"\n", "", model.CodeCurrentStageUnknown, model.SeverityError, `CURRENT_STAGE "S9" is not one of the run's stages (S1)`},
		{"current stage unset", "S1_DONE=\"0\"\n", "", model.CodeCurrentStageUnknown, model.SeverityWarning, "not set"},
		{"no stages", "RUN_ID=\"x\"\n", "", model.CodeNoStages, model.SeverityWarning, "no <STAGE>_DONE"},
		{"done with invalid item", "CURRENT_STAGE=\"S2\"\nS1_DONE=\"1\"\nS2_DONE=\"0\"\n", "CB_S1_A=\"yes\"\n", model.CodeStageDoneChecklistIncomplete, model.SeverityError, `S1 is marked done but CB_S1_A is "yes"`},
		{"checklist-done with open item", "CURRENT_STAGE=\"M2\"\nM1_CHECKLIST_DONE=\"1\"\nM2_DONE=\"0\"\n", "CB_M1_A=\"0\"\n", model.CodeStageDoneChecklistIncomplete, model.SeverityError, "M1_CHECKLIST_DONE is 1 but CB_M1_A is 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := load(t, runDir(t, tc.state, tc.checkl))
			p := findProblem(r, tc.code)
			if p == nil {
				t.Fatalf("problems = %v, want %s", problemCodes(r), tc.code)
			}
			if p.Severity != tc.sev || !strings.Contains(p.Message, tc.contains) {
				t.Errorf("problem = %+v, want severity %s and %q", p, tc.sev, tc.contains)
			}
		})
	}
}

func TestLoadTolerantSyntax(t *testing.T) {
	state := "\xEF\xBB\xBFCURRENT_STAGE=\"S1\"\r\ns1_done=\"1\"\r\nS2_DONE=\"0\"\r\nS2_DONE=\"1\"\r\nCURRENT_STAGE=\"S3\"\r\nS3_DONE=0\r\n"
	r := load(t, runDir(t, state, "CB_S3_A=1\r\n"))
	if len(r.Problems) != 0 {
		t.Fatalf("problems = %v", r.Problems)
	}
	if got := stageKeys(r); strings.Join(got, ",") != "s1,S2,S3" {
		t.Errorf("stages = %v (lower-case keys accepted)", got)
	}
	if r.Stage("S2").Status != model.StageCompleted || r.CurrentStage != "S3" {
		t.Errorf("later duplicate must win: S2 %q, current %q", r.Stage("S2").Status, r.CurrentStage)
	}
	if r.Stage("S1").Status != model.StageCompleted || !r.Stage("S3").Checklist[0].Done {
		t.Errorf("stages = %+v", r.Stages)
	}
}

func TestLoadNonRegularFilesNeverBlock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fifo-run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"state.env", "checklist.state.env", "run.log", "run.lock"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := load(t, dir)
	want := map[string]model.Severity{model.CodeStateUnreadable: model.SeverityError, model.CodeChecklistUnreadable: model.SeverityError,
		model.CodeLogUnreadable: model.SeverityWarning, model.CodeLockUnreadable: model.SeverityWarning}
	for code, sev := range want {
		if p := findProblem(r, code); p == nil || p.Severity != sev || !strings.Contains(p.Message, "FIFO") {
			t.Errorf("%s: %+v (all problems %v)", code, p, problemCodes(r))
		}
	}
	if r.Log != nil || len(r.Locks) != 0 {
		t.Errorf("log %+v locks %+v: a FIFO is neither", r.Log, r.Locks)
	}
}

func TestLoadDirectoriesWhereFilesBelong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dir-run")
	for _, name := range []string{"state.env", "checklist.state.env", "run.log", "run.lock"} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := load(t, dir)
	for _, code := range []string{model.CodeStateUnreadable, model.CodeChecklistUnreadable, model.CodeLogUnreadable, model.CodeLockUnreadable} {
		if p := findProblem(r, code); p == nil || !strings.Contains(p.Message, "directory") {
			t.Errorf("%s: %+v", code, p)
		}
	}
	if r.Status != model.StatusBlocked {
		t.Errorf("status = %q", r.Status)
	}
}

func TestLoadLogSymlinkToDevZero(t *testing.T) {
	dir := runDir(t, okState, "")
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "run.log")); err != nil {
		t.Fatal(err)
	}
	r := load(t, dir)
	if p := findProblem(r, model.CodeLogUnreadable); p == nil || !strings.Contains(p.Message, "device") || r.Log != nil {
		t.Errorf("problem %+v log %+v", p, r.Log)
	}
}

func TestLoadNamedStagesWithLogFifoAreUnordered(t *testing.T) {
	dir := runDir(t, "CURRENT_STAGE=\"b\"\nS_A_DONE=\"1\"\nS_B_DONE=\"0\"\n", "")
	if err := syscall.Mkfifo(filepath.Join(dir, "run.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := load(t, dir)
	// Nothing orders named stages a and b: they are shown done-first and marked, never silently sorted.
	if r.Resumable.StageOrderSource != "none" || strings.Join(stageKeys(r), ",") != "a,b" ||
		r.Stages[0].OrderUnknown() || !r.Stages[1].OrderUnknown() || !r.Resumable.StageOrderUncertain {
		t.Errorf("source %q stages %+v", r.Resumable.StageOrderSource, r.Stages)
	}
}

func TestLoadBadLocks(t *testing.T) {
	env := testEnv(t)
	future := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	tests := []struct {
		name    string
		content string
		verdict model.Verdict
		reason  string
	}{
		{"empty", "", model.VerdictStale, "the lock file is empty"},
		{"binary", "\x00\x01\x02\xff\xfe", model.VerdictStale, "neither JSON nor KEY=value"},
		{"broken JSON", `{"pid": 12`, model.VerdictStale, "not valid JSON"},
		{"pid not a number", `{"pid": "abc", "host": "` + env.Host + `"}`, model.VerdictStale, `pid "abc" is not an integer`},
		{"pid fractional", `{"pid": 1.5}`, model.VerdictStale, "not an integer"},
		{"pid 0", `{"pid": 0, "host": "` + env.Host + `"}`, model.VerdictUnknown, "no pid recorded"},
		{"pid -1", `{"pid": -1, "host": "` + env.Host + `"}`, model.VerdictUnknown, "pid -1 is not a valid process id"},
		{"huge pid", `{"pid": 99999999999, "host": "` + env.Host + `"}`, model.VerdictUnknown, "not a valid process id"},
		{"pid beyond int64", `{"pid": 999999999999999999999999}`, model.VerdictStale, "not an integer"},
		{"timestamp in the future", `{"pid": 1, "host": "` + env.Host + `", "acquired_at_utc": "` + future + `"}`, model.VerdictLive, "in the future"},
		{"timestamp in another format", `{"pid": 1, "host": "` + env.Host + `", "timestamp": "15 Feb 2026"}`, model.VerdictLive, `timestamp "15 Feb 2026" is not a time`},
		{"upper-case keys and alias", "PID=\"" + strconv.Itoa(os.Getpid()) + "\"\nHOST=\"" + env.Host + "\"\nCREATED_AT=\"" + time.Now().UTC().Format("20060102T150405Z") + "\"\n", model.VerdictLive, "is running"},
		{"over the size cap", strings.Repeat("x", maxLockSize+1), model.VerdictStale, "limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := runDir(t, okState, "")
			writeFile(t, filepath.Join(dir, "run.lock"), tc.content)
			r := Load(filepath.Join(dir, "state.env"), env)
			if len(r.Locks) != 1 {
				t.Fatalf("locks = %+v problems %v", r.Locks, problemCodes(r))
			}
			l := r.Locks[0]
			if l.Verdict != tc.verdict || !strings.Contains(strings.Join(l.Reasons, "; "), tc.reason) {
				t.Errorf("verdict %q reasons %q, want %q with %q", l.Verdict, l.Reasons, tc.verdict, tc.reason)
			}
		})
	}
}

func TestLoadLockNotReadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads mode-000 files")
	}
	dir := runDir(t, okState, "")
	lock := filepath.Join(dir, "run.lock")
	writeFile(t, lock, `{"pid": 1}`)
	if err := os.Chmod(lock, 0); err != nil {
		t.Fatal(err)
	}
	r := load(t, dir)
	if p := findProblem(r, model.CodeLockUnreadable); p == nil || !strings.Contains(p.Message, "permission denied") {
		t.Errorf("problems = %v", r.Problems)
	}
}

func TestLoadArtifactsBadJSONAndBounds(t *testing.T) {
	dir := runDir(t, okState, "")
	writeFile(t, filepath.Join(dir, "artifacts", "checkpoints", "S1.done.json"), "{not json")
	writeFile(t, filepath.Join(dir, "artifacts", "checkpoints", "S2.done.json"), `{"status": "complete"}`)
	writeFile(t, filepath.Join(dir, "artifacts", "commits", "commit-ledger.json"), `{"entries": 3}`)
	deep := filepath.Join(dir, "artifacts")
	for i := 0; i < maxArtifactDepth+2; i++ {
		deep = filepath.Join(deep, "d")
	}
	writeFile(t, filepath.Join(deep, "f"), "")
	r := load(t, dir)
	var unparsable []string
	for _, p := range r.Problems {
		if p.Code == model.CodeFileUnparsable && p.Severity == model.SeverityWarning {
			unparsable = append(unparsable, filepath.Base(p.Path))
		}
	}
	if strings.Join(unparsable, ",") != "S1.done.json,commit-ledger.json" {
		t.Errorf("unparsable = %v", unparsable)
	}
	if cps := r.Resumable.Checkpoints; len(cps) != 1 || cps[0].Stage != "S2" {
		t.Errorf("checkpoints = %+v (stage taken from the file name)", cps)
	}
	arts := r.Resumable.Artifacts
	if len(arts) == 0 || !strings.HasPrefix(arts[len(arts)-1], "… (listing stopped") {
		t.Errorf("artifacts = %v, want the depth bound stated", arts)
	}
}

func TestLoadDeadPidLockAndStaleAfterGeneratedFixtureCopies(t *testing.T) {
	// The fixture copy rewrites the placeholder host; an untouched copy would judge the lock as foreign.
	root := rt.Copy(t)
	data, err := os.ReadFile(filepath.Join(rt.Run(root, rt.Mining), "lock", "active.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), rt.HostPlaceholder) {
		t.Errorf("placeholder left in %s", data)
	}
}

func TestLoadHostileVolumeIsCapped(t *testing.T) {
	var state, checklist strings.Builder
	state.WriteString("CURRENT_STAGE=\"X1\"\n")
	for i := range 20000 {
		fmt.Fprintf(&state, "X%d_DONE=\"1\"\n", i)
		fmt.Fprintf(&checklist, "CB_X%d_A=\"0\"\nbad%d=\"\n", i, i)
	}
	r := load(t, runDir(t, state.String(), checklist.String()))
	if len(r.Stages) != 20000 || r.Stage("X19999") == nil || len(r.Stage("X7").Checklist) != 1 {
		t.Fatalf("%d stages", len(r.Stages))
	}
	count := map[string]int{}
	for _, p := range r.Problems {
		count[p.Code]++
	}
	for _, code := range []string{model.CodeStageDoneChecklistIncomplete, model.CodeChecklistUnparsable} {
		if count[code] != maxProblemsPerCode+1 {
			t.Errorf("%s: %d problems, want %d plus one summary", code, count[code], maxProblemsPerCode)
		}
	}
	last := r.Problems[len(r.Problems)-1]
	if !strings.Contains(last.Message, "and 19980 more") {
		t.Errorf("summary = %q", last.Message)
	}
}

func TestLoadLockEchoedOnOneLine(t *testing.T) {
	env := testEnv(t)
	dir := runDir(t, okState, "")
	writeFile(t, filepath.Join(dir, "run.lock"), `acquired_at_utc="2026-02-15T09:00:00Z" host="far away" pid="123" run_id="r" user="u"`)
	r := Load(filepath.Join(dir, "state.env"), env)
	if len(r.Locks) != 1 || r.Locks[0].Host != "far away" || r.Locks[0].PID != 123 || r.Locks[0].Verdict != model.VerdictUnknown {
		t.Errorf("locks = %+v", r.Locks)
	}
}

func TestLoadLockDanglingSymlink(t *testing.T) {
	dir := runDir(t, okState, "")
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "run.lock")); err != nil {
		t.Fatal(err)
	}
	r := load(t, dir)
	if p := findProblem(r, model.CodeLockUnreadable); p == nil || !strings.Contains(p.Message, "does not exist") || len(r.Locks) != 0 {
		t.Errorf("problem %+v locks %+v", p, r.Locks)
	}
}

func TestLoadOddFolderNames(t *testing.T) {
	for _, name := range []string{"run\nwith newline", "bad-utf8-\xff\xfe", "run.reset-x\x1b[2J"} {
		dir := filepath.Join(t.TempDir(), name)
		writeFile(t, filepath.Join(dir, "state.env"), okState)
		writeFile(t, filepath.Join(dir, "checklist.state.env"), "")
		r := load(t, dir)
		if r.ID != name || (r.Status != model.StatusPaused && !r.Archived) {
			t.Errorf("%q: id %q status %q", name, r.ID, r.Status)
		}
	}
}

func TestLoadRunFolderGone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deleted-run")
	r := load(t, dir)
	if findProblem(r, model.CodeStateMissing) == nil || r.Status != model.StatusBlocked {
		t.Errorf("problems %v status %q", problemCodes(r), r.Status)
	}
}

// A FIFO where artifacts/checkpoints should be is not a folder to list: opening it as one must not wait for
// a writer (os.Open of a FIFO does).
func TestLoadCheckpointsFifoNeverBlocks(t *testing.T) {
	dir := runDir(t, "CURRENT_STAGE=\"S2\"\nS1_DONE=\"1\"\nS2_DONE=\"0\"\n", "")
	if err := os.MkdirAll(filepath.Join(dir, "artifacts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "artifacts", "checkpoints"), 0o644); err != nil {
		t.Fatal(err)
	}
	loaded := make(chan model.Run)
	go func() { loaded <- load(t, dir) }()
	select {
	case r := <-loaded:
		if len(r.Resumable.Checkpoints) != 0 || strings.Join(stageKeys(r), ",") != "S1,S2" {
			t.Errorf("checkpoints %v stages %v", r.Resumable.Checkpoints, stageKeys(r))
		}
		if !slices.Contains(r.Resumable.Artifacts, "checkpoints") {
			t.Errorf("artifacts %v: the FIFO is listed as a file of artifacts/", r.Resumable.Artifacts)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Load blocked on a FIFO named checkpoints")
	}
}
