package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"runwatch/state/resumable/resumabletest"
)

// Each mistake a person makes on the command line gets one message that says what to do, and exit 2.
func TestErrorsAPersonCanActOn(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no", "such", "path")
	for _, tc := range []struct {
		args []string
		want []string // each must appear exactly once on stderr
	}{
		{[]string{"stauts"}, []string{`"stauts" is not a runwatch command`, "Did you mean 'status'?"}},
		{[]string{"evnets", "--json"}, []string{"Did you mean 'events'?"}},
		{[]string{"unlcok", "x"}, []string{"Did you mean 'unlock'?"}},
		{[]string{"qwertyuiop"}, []string{`"qwertyuiop" is neither a runwatch command nor a file or folder here`}},
		{[]string{missing}, []string{"runwatch: " + missing + ": no such file or directory"}},
		{[]string{"--read-only", missing}, []string{missing}},
		{[]string{"dashboard", missing}, []string{missing}},
		{[]string{"status", missing}, []string{"runwatch status: " + missing + ": no such file or directory"}},
		{[]string{"events", missing}, []string{"runwatch events: " + missing + ": no such file or directory"}},
		{[]string{"status", "--jsn"}, []string{"unknown flag --jsn; did you mean --json?", "usage: runwatch status"}},
		{[]string{"--raed-only"}, []string{"runwatch: unknown flag --raed-only; did you mean --read-only?"}},
		{[]string{"step", "x", "--dryrun"}, []string{"unknown flag --dryrun; did you mean --dry-run?"}},
		{[]string{"status", "--frobnicate"}, []string{"runwatch status: unknown flag --frobnicate\n"}},
		{[]string{"status", "--output"}, []string{"--output needs a value"}},
		{[]string{"status", "-o", "yaml"}, []string{`--output "yaml" is not table, wide, json or jsonl`}},
		{[]string{"status", "--sort", "atention"}, []string{"did you mean attention?"}},
		{[]string{"status", "--json", "-o", "wide"}, []string{"--json is --output json"}},
		{[]string{"status", "--stale-after", "soon"}, []string{`--stale-after invalid value "soon"`}},
		{[]string{"help", "stauts"}, []string{`"stauts" is not a runwatch command; did you mean 'status'?`}},
		{[]string{"completion", "tcsh"}, []string{`no completion for "tcsh"`}},
		{[]string{"completion"}, []string{"name one SHELL"}},
		{[]string{"version", "extra"}, []string{"takes no arguments"}},
		{[]string{t.TempDir()}, []string{noTerminalMessage}},
		{[]string{"demo"}, []string{noTerminalMessage}},
	} {
		code, stdout, stderr := run(t, tc.args...)
		if code != exitUsage {
			t.Errorf("runwatch %s: exit %d, want 2 (stderr %q)", strings.Join(tc.args, " "), code, stderr)
		}
		if stdout != "" {
			t.Errorf("runwatch %s: stdout %q, want nothing", strings.Join(tc.args, " "), stdout)
		}
		for _, w := range tc.want {
			if n := strings.Count(stderr, w); n != 1 {
				t.Errorf("runwatch %s: %q appears %d times on stderr, want once:\n%s", strings.Join(tc.args, " "), w, n, stderr)
			}
		}
		// A path is named once: os errors repeat it ("stat X: ... X").
		for _, a := range tc.args {
			if strings.HasPrefix(a, "/") && strings.Count(stderr, a) > 1 {
				t.Errorf("runwatch %s names %s %d times:\n%s", strings.Join(tc.args, " "), a, strings.Count(stderr, a), stderr)
			}
		}
	}
}

// helperProcess runs the test binary as runwatch (see TestMain) with no terminal at all: stdin /dev/null,
// stdout a pipe, and a new session, so /dev/tty cannot be opened either.
func helperProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv, _ := json.Marshal(args)
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), helperArgsEnv+"="+string(argv), "XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

func exitCodeOf(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	t.Fatalf("running runwatch: %v", err)
	return -1
}

// The real process, without any terminal, says what to use instead of the raw "could not open TTY".
func TestDashboardWithoutTerminal(t *testing.T) {
	t.Parallel()
	cmd := helperProcess(t, t.TempDir())
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	var err error
	within(t, "runwatch without a terminal", func() { err = cmd.Run() })
	if code := exitCodeOf(t, err); code != exitUsage || strings.TrimSpace(errOut.String()) != noTerminalMessage || out.Len() > 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out.String(), errOut.String(), noTerminalMessage)
	}
}

// Every exit code in the table that help and the README show is produced by the case it describes.
func TestExitCodesTable(t *testing.T) {
	t.Parallel()
	jg, oc := fixtureWorkspace(t)
	healthy := resumabletest.Run(oc, resumabletest.IRM)
	cases := map[int][][]string{
		exitOK: {
			{"status", healthy}, {"help"}, {"version"}, {"brief", healthy}, {"check", healthy, "CB_S2_VERIFY_GREEN", "--dry-run"},
			{"completion", "bash"},
		},
		exitProblems: {
			{"status", jg}, {"brief", filepath.Join(t.TempDir(), "x")}, {"check", healthy, "CB_NO_SUCH_ITEM", "--yes"}, {"step", healthy, "--yes"},
		},
		exitUsage:         {{"stauts"}, {"status", "--jsn"}, {"status", "/no/such/path"}, {healthy}},
		exitEventsTimeout: {{"events", "--timeout", "10ms", "--until", "completed", "--run", "irm", healthy}, {"goto", "--print", healthy}},
	}
	// The change is applied, and its journal entry's write fails (as on a full disk): the journal is opened
	// and locked before the first change, so only its append can fail after it.
	unjournaled, env := actionRun(t)
	env.actionSeams.BeforeJournalAppend = func(f *os.File, line []byte) {
		if bytes.Contains(line, []byte(unjournaled)) {
			f.Close()
		}
	}
	cases[exitAppliedUnaudit] = [][]string{{"check", unjournaled, "CB_S2_B", "--yes"}}
	zeros := strings.Repeat("0", 64)
	cases[exitNotAsShown] = [][]string{{"check", healthy, "CB_S2_VERIFY_GREEN", "--yes", "--expect=" + zeros + ":" + zeros}}
	elsewhere := map[int]string{
		exitEventsInterrupted: "needs a signal: TestEventsInterruptedWhileWaiting",
		exitIncomplete:        "needs a terminal and a full disk: TestStatusExitCodesInTerminal",
		exitAppliedOver:       "needs a writer racing the rename whose file cannot be put back (a failed RENAME_EXCHANGE): the code's use in cmd_actions.go",
	}
	for _, e := range exitCodes {
		if elsewhere[e.code] != "" {
			continue
		}
		if len(cases[e.code]) == 0 {
			t.Errorf("exit code %d (%s) has no test case", e.code, e.meaning)
		}
		for _, args := range cases[e.code] {
			var code int
			var stderr string
			within(t, "runwatch "+strings.Join(args, " "), func() { code, _, stderr = runIn(t, env, args...) })
			if code != e.code {
				t.Errorf("runwatch %s: exit %d, want %d (%s); stderr %q", strings.Join(args, " "), code, e.code, e.meaning, stderr)
			}
		}
	}
	documented := map[int]bool{}
	for _, e := range exitCodes {
		documented[e.code] = true
	}
	for _, c := range []int{exitOK, exitProblems, exitUsage, exitRefused, exitNoRun, exitEventsFailed, exitEventsTimeout,
		exitEventsInterrupted, exitAppliedUnaudit, exitAppliedOver, exitIncomplete, exitNotAsShown, exitNoAgent} {
		if !documented[c] {
			t.Errorf("exit code %d is used but not in the exit code table", c)
		}
	}
}

// events interrupted while it waits for --until exits 130, as the table says; the signal goes to a real
// process.
func TestEventsInterruptedWhileWaiting(t *testing.T) {
	t.Parallel()
	cmd := helperProcess(t, "events", "--until", "completed", "--run", "not-there-yet", t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "waiting for it to appear") {
				waiting <- true
			}
		}
		close(waiting)
	}()
	select {
	case ok := <-waiting:
		if !ok {
			cmd.Wait()
			t.Fatal("events ended without saying it waits")
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("events never said it waits")
	}
	cmd.Process.Signal(os.Interrupt)
	if code := exitCodeOf(t, cmd.Wait()); code != exitEventsInterrupted {
		t.Fatalf("exit %d, want %d", code, exitEventsInterrupted)
	}
}
