package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// actionRun writes a small resumable run and returns its dir.
func actionRun(t *testing.T) string {
	t.Helper()
	dir, env := actionRunEnv(t)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return dir
}

// actionRunEnv is actionRun for a test that runs runwatch as a child: the environment (a journal and a
// config folder of its own, $OPENCODE_CONFIG_DIR so RUN can be given as an id prefix) is returned for the
// child's, and this process's is left alone, so the test can run in parallel.
func actionRunEnv(t *testing.T) (dir string, env []string) {
	t.Helper()
	cfgDir := t.TempDir()
	env = []string{"XDG_STATE_HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(), "OPENCODE_CONFIG_DIR=" + cfgDir}
	dir = filepath.Join(cfgDir, "reports", "irm-20260215T014733Z")
	files := map[string]string{
		"state.env":           "CURRENT_STAGE=\"S2\"\nRUN_ID=\"20260215T014733Z\"\nS1_DONE=\"1\"\nS2_DONE=\"0\"\nS3_DONE=\"0\"\n",
		"checklist.state.env": "CB_S2_A=\"1\"\nCB_S2_B=\"0\"\n",
		"run.log":             "[2026-02-15T01:50:43Z] run bootstrapped\n",
	}
	for name, content := range files {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, env
}

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

func fakeTerminal(t *testing.T, input string) {
	t.Helper()
	oldIn, oldTerm := actionStdin, stdinIsTerminal
	actionStdin = strings.NewReader(input)
	stdinIsTerminal = func() bool { return true }
	t.Cleanup(func() { actionStdin, stdinIsTerminal = oldIn, oldTerm })
}

func TestActionCommands(t *testing.T) {
	dir := actionRun(t)
	checklist := filepath.Join(dir, "checklist.state.env")
	before, _ := os.ReadFile(checklist)

	code, out, _ := runCmd("check", dir, "CB_S2_B", "--dry-run")
	if after, _ := os.ReadFile(checklist); code != 0 || !strings.Contains(out, `+CB_S2_B="1"`) || !bytes.Equal(before, after) {
		t.Fatalf("dry run: code %d out %q", code, out)
	}
	code, _, errOut := runCmd("step", dir, "--yes")
	if code != 1 || !strings.Contains(errOut, "gate not met") || !strings.Contains(errOut, "CB_S2_B=0") {
		t.Fatalf("gate: code %d stderr %q", code, errOut)
	}
	stdinIsTerminalOld := stdinIsTerminal
	stdinIsTerminal = func() bool { return false }
	code, _, errOut = runCmd("check", dir, "CB_S2_B")
	stdinIsTerminal = stdinIsTerminalOld
	if code != 1 || !strings.Contains(errOut, "no terminal") {
		t.Fatalf("no terminal: code %d stderr %q", code, errOut)
	}
	fakeTerminal(t, "n\n")
	if code, _, errOut = runCmd("check", dir, "CB_S2_B"); code != 1 || !strings.Contains(errOut, "not confirmed") {
		t.Fatalf("answered no: code %d stderr %q", code, errOut)
	}
	fakeTerminal(t, "y\n")
	if code, out, errOut = runCmd("check", dir, "CB_S2_B", "--reason", "seen green"); code != 0 || !strings.Contains(out, "applied") {
		t.Fatalf("answered yes: code %d out %q stderr %q", code, out, errOut)
	}
	if code, _, errOut = runCmd("step", "irm-2026", "--yes", "--read-only"); code != 1 || !strings.Contains(errOut, "read-only") {
		t.Fatalf("read-only: code %d stderr %q", code, errOut)
	}
	if code, _, errOut = runCmd("step", dir, "--yes"); code != 0 {
		t.Fatalf("step: code %d stderr %q", code, errOut)
	}
	state, _ := os.ReadFile(filepath.Join(dir, "state.env"))
	if !strings.Contains(string(state), `CURRENT_STAGE="S3"`) {
		t.Fatalf("state.env after step:\n%s", state)
	}
	logData, _ := os.ReadFile(filepath.Join(dir, "run.log"))
	if !strings.Contains(string(logData), `reason="seen green"`) || !strings.Contains(string(logData), "stage_complete stage=S2 next=S3") {
		t.Fatalf("run.log:\n%s", logData)
	}
	if code, _, errOut = runCmd("undo", dir, "--yes"); code != 0 {
		t.Fatalf("undo: code %d stderr %q", code, errOut)
	}
	if state, _ := os.ReadFile(filepath.Join(dir, "state.env")); !strings.Contains(string(state), `CURRENT_STAGE="S2"`) {
		t.Fatalf("undo did not restore:\n%s", state)
	}
}

func TestActionTypedConfirmation(t *testing.T) {
	dir := actionRun(t)
	lock := filepath.Join(dir, "run.lock")
	os.WriteFile(lock, []byte(`{"acquired_at_utc": "2026-11-30T00:00:00Z", "host": "elsewhere", "pid": 7, "run_id": "x", "user": "u"}`+"\n"), 0o644)
	fakeTerminal(t, "yes\n")
	if code, _, errOut := runCmd("unlock", dir, "run.lock", "--yes"); code != 1 || !strings.Contains(errOut, `typed "yes"`) {
		t.Fatalf("wrong word: code %d stderr %q", code, errOut)
	}
	fakeTerminal(t, "u@elsewhere\n")
	if code, out, errOut := runCmd("unlock", dir, "run.lock"); code != 0 || !strings.Contains(out, `Type "u@elsewhere"`) {
		t.Fatalf("typed: code %d out %q stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatal("lock not cleared")
	}
}

func TestActionUsage(t *testing.T) {
	actionRun(t)
	for _, args := range [][]string{{"step"}, {"check", "x"}, {"step", "a", "b"}, {"unlock", "a", "b", "c"}, {"step", "--nope", "x"}} {
		if code, _, _ := runCmd(args...); code != 2 {
			t.Errorf("%v: code %d, want 2", args, code)
		}
	}
	if code, _, errOut := runCmd("step", "no-such-run-anywhere", "--yes"); code != 1 || !strings.Contains(errOut, "no such run") {
		t.Errorf("unknown run: code %d stderr %q", code, errOut)
	}
}

// An action that was applied but could not be fully recorded exits 4, not 1 ("refused" would be a lie: the
// change is on disk), and says what is missing.
func TestActionAppliedButNotRecordedExits4(t *testing.T) {
	dir := actionRun(t)
	// The journal is opened and locked before the first change; its append fails after it (as on a full disk).
	actionSeams.BeforeJournalAppend = func(f *os.File, _ []byte) { f.Close() }
	defer func() { actionSeams.BeforeJournalAppend = nil }()
	code, out, errOut := runCmd("check", dir, "CB_S2_B", "--yes")
	if code != exitAppliedUnaudit || code == exitRefused || !strings.Contains(out, "applied") || !strings.Contains(errOut, "journal could not be written") {
		t.Fatalf("code %d stdout %q stderr %q", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "checklist.state.env")); !strings.Contains(string(b), `CB_S2_B="1"`) {
		t.Fatal("not applied")
	}
}
