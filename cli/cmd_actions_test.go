package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// actionRun writes a small resumable run and returns its dir, and the environment to act on it in (see
// actionRunEnv).
func actionRun(t *testing.T) (string, env) {
	t.Helper()
	dir, vars := actionRunEnv(t)
	var kv []string
	for _, v := range vars {
		k, v, _ := strings.Cut(v, "=")
		kv = append(kv, k, v)
	}
	return dir, testEnv(t, kv...)
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

// runCmd runs `runwatch args...` in process in e and returns its exit code and outputs.
func runCmd(e env, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(args, &out, &errb, e)
	return code, out.String(), errb.String()
}

// fakeTerminal is e on a terminal where a person types input.
func fakeTerminal(e env, input string) env {
	e.stdin = strings.NewReader(input)
	e.stdinTerminal = func() bool { return true }
	return e
}

func TestActionCommands(t *testing.T) {
	t.Parallel()
	dir, e := actionRun(t)
	checklist := filepath.Join(dir, "checklist.state.env")
	before, _ := os.ReadFile(checklist)

	code, out, _ := runCmd(e, "check", dir, "CB_S2_B", "--dry-run")
	if after, _ := os.ReadFile(checklist); code != 0 || !strings.Contains(out, `+CB_S2_B="1"`) || !bytes.Equal(before, after) {
		t.Fatalf("dry run: code %d out %q", code, out)
	}
	code, _, errOut := runCmd(e, "step", dir, "--yes")
	if code != 1 || !strings.Contains(errOut, "gate not met") || !strings.Contains(errOut, "CB_S2_B=0") {
		t.Fatalf("gate: code %d stderr %q", code, errOut)
	}
	noTerminal := e
	noTerminal.stdinTerminal = func() bool { return false }
	code, _, errOut = runCmd(noTerminal, "check", dir, "CB_S2_B")
	if code != 1 || !strings.Contains(errOut, "no terminal") {
		t.Fatalf("no terminal: code %d stderr %q", code, errOut)
	}
	if code, _, errOut = runCmd(fakeTerminal(e, "n\n"), "check", dir, "CB_S2_B"); code != 1 || !strings.Contains(errOut, "not confirmed") {
		t.Fatalf("answered no: code %d stderr %q", code, errOut)
	}
	if code, out, errOut = runCmd(fakeTerminal(e, "y\n"), "check", dir, "CB_S2_B", "--reason", "seen green"); code != 0 || !strings.Contains(out, "applied") {
		t.Fatalf("answered yes: code %d out %q stderr %q", code, out, errOut)
	}
	if code, _, errOut = runCmd(e, "step", "irm-2026", "--yes", "--read-only"); code != 1 || !strings.Contains(errOut, "read-only") {
		t.Fatalf("read-only: code %d stderr %q", code, errOut)
	}
	if code, _, errOut = runCmd(e, "step", dir, "--yes"); code != 0 {
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
	if code, _, errOut = runCmd(e, "undo", dir, "--yes"); code != 0 {
		t.Fatalf("undo: code %d stderr %q", code, errOut)
	}
	if state, _ := os.ReadFile(filepath.Join(dir, "state.env")); !strings.Contains(string(state), `CURRENT_STAGE="S2"`) {
		t.Fatalf("undo did not restore:\n%s", state)
	}
}

func TestActionTypedConfirmation(t *testing.T) {
	t.Parallel()
	dir, e := actionRun(t)
	lock := filepath.Join(dir, "run.lock")
	os.WriteFile(lock, []byte(`{"acquired_at_utc": "2026-11-30T00:00:00Z", "host": "elsewhere", "pid": 7, "run_id": "x", "user": "u"}`+"\n"), 0o644)
	if code, _, errOut := runCmd(fakeTerminal(e, "yes\n"), "unlock", dir, "run.lock", "--yes"); code != 1 || !strings.Contains(errOut, `typed "yes"`) {
		t.Fatalf("wrong word: code %d stderr %q", code, errOut)
	}
	if code, out, errOut := runCmd(fakeTerminal(e, "u@elsewhere\n"), "unlock", dir, "run.lock"); code != 0 || !strings.Contains(out, `Type "u@elsewhere"`) {
		t.Fatalf("typed: code %d out %q stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatal("lock not cleared")
	}
}

func TestActionUsage(t *testing.T) {
	t.Parallel()
	_, e := actionRun(t)
	for _, args := range [][]string{{"step"}, {"check", "x"}, {"step", "a", "b"}, {"unlock", "a", "b", "c"}, {"step", "--nope", "x"}} {
		if code, _, _ := runCmd(e, args...); code != 2 {
			t.Errorf("%v: code %d, want 2", args, code)
		}
	}
	if code, _, errOut := runCmd(e, "step", "no-such-run-anywhere", "--yes"); code != 1 || !strings.Contains(errOut, "no such run") {
		t.Errorf("unknown run: code %d stderr %q", code, errOut)
	}
}

// An action that was applied but could not be fully recorded exits 4, not 1 ("refused" would be a lie: the
// change is on disk), and says what is missing.
func TestActionAppliedButNotRecordedExits4(t *testing.T) {
	t.Parallel()
	dir, e := actionRun(t)
	// The journal is opened and locked before the first change; its append fails after it (as on a full disk).
	e.actionSeams.BeforeJournalAppend = func(f *os.File, _ []byte) { f.Close() }
	code, out, errOut := runCmd(e, "check", dir, "CB_S2_B", "--yes")
	if code != exitAppliedUnaudit || code == exitRefused || !strings.Contains(out, "applied") || !strings.Contains(errOut, "journal could not be written") {
		t.Fatalf("code %d stdout %q stderr %q", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "checklist.state.env")); !strings.Contains(string(b), `CB_S2_B="1"`) {
		t.Fatal("not applied")
	}
}
