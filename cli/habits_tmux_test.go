package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"runwatch/sim"
	"runwatch/ui"
)

var (
	realBinOnce sync.Once
	realBinPath string
	realBinErr  error
)

// realBinary is runwatch built once for the package's tests, into the cache folder TestMain removes.
func realBinary(t *testing.T) string {
	t.Helper()
	realBinOnce.Do(func() {
		realBinPath = filepath.Join(os.Getenv("XDG_CACHE_HOME"), "habits-bin", "runwatch")
		out, err := exec.Command("go", "build", "-o", realBinPath, "..").CombinedOutput()
		if err != nil {
			realBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if realBinErr != nil {
		t.Fatal(realBinErr)
	}
	return realBinPath
}

// runReal runs the real binary with env added to the test's, and returns its exit code and output.
func runReal(t *testing.T, env []string, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(realBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// Issue 36: habits people bring from less, k9s, lazygit and kubectl, each tried on the real binary in tmux.

// startDemo opens the real demo at w×h in a private tmux and waits for its runs.
func startDemo(t *testing.T, w, h int) (d *tmuxDemo, dir, exitFile string) {
	d = newTmuxDemo(t)
	bin := realBinary(t)
	dir = filepath.Join(t.TempDir(), "ws")
	exitFile = filepath.Join(t.TempDir(), "exit")
	d.must("new-session", "-d", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-s", "demo",
		fmt.Sprintf("%s demo --dir %s --speed 8 2>%s.stderr; echo $? > %s", bin, dir, exitFile, exitFile))
	d.waitScreen("the demo's runs", func(s string) bool { return jonggrangRows.MatchString(s) })
	return d, dir, exitFile
}

// alive says the dashboard still runs: its header is drawn and no exit code was written.
func alive(d *tmuxDemo, exitFile string) bool {
	if _, err := os.Stat(exitFile); err == nil {
		return false
	}
	return strings.HasPrefix(d.screen(), "runwatch ")
}

// TestQClosesOverlayInTmux is point 1: q over the brief, the entry pager, the help and the X help closes
// that overlay, as in less and k9s; only q with none open quits.
func TestQClosesOverlayInTmux(t *testing.T) {
	d, _, exitFile := startDemo(t, 120, 40)
	d.selectRun("iso26262")
	open := []struct {
		name  string
		open  func()
		title string
	}{
		{"brief", func() { d.press(ui.ActBrief) }, "Resume brief "},
		{"help", func() { d.press(ui.ActHelp) }, "Help · "},
		{"X help", func() { d.press(ui.ActLaunch) }, "No resume command configured"},
		{"entry pager", func() { d.focus("Timeline"); d.press(ui.ActOpen) }, "Entry at line "},
	}
	for _, o := range open {
		o.open()
		d.waitText(o.title)
		d.press(ui.ActQuit)
		d.waitScreen("q to close the "+o.name, func(s string) bool { return !strings.Contains(s, o.title) })
		if !alive(d, exitFile) {
			t.Fatalf("q over the %s quit the dashboard:\n%s", o.name, d.screen())
		}
	}
	d.press(ui.ActQuit)
	d.waitExit(exitFile)
}

// TestCheckShortItem is point 2: check and uncheck take the part after CB_<STAGE>_ when it names one item,
// and say which items an ambiguous one names.
func TestCheckShortItem(t *testing.T) {
	dir := actionRun(t)
	cl := filepath.Join(dir, "checklist.state.env")
	if err := os.WriteFile(cl, []byte("CB_S2_A=\"1\"\nCB_S2_B=\"0\"\nCB_S3_A=\"0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENCODE_CONFIG_DIR=" + filepath.Dir(filepath.Dir(dir))}
	if code, out, errOut := runReal(t, env, "", "check", "irm", "B", "--yes"); code != 0 || envValue(cl, "CB_S2_B") != "1" {
		t.Fatalf("check irm B: exit %d, CB_S2_B=%q\n%s%s", code, envValue(cl, "CB_S2_B"), out, errOut)
	}
	if code, out, errOut := runReal(t, env, "", "uncheck", "irm", "b", "--yes"); code != 0 || envValue(cl, "CB_S2_B") != "0" {
		t.Fatalf("uncheck irm b: exit %d, CB_S2_B=%q\n%s%s", code, envValue(cl, "CB_S2_B"), out, errOut)
	}
	code, _, errOut := runReal(t, env, "", "check", "irm", "A", "--yes")
	if code == 0 || !strings.Contains(errOut, "CB_S2_A, CB_S3_A") || !strings.Contains(errOut, "whole key") {
		t.Fatalf("check irm A (two items): exit %d, want a refusal naming both\n%s", code, errOut)
	}
	if envValue(cl, "CB_S3_A") != "0" {
		t.Fatal("the ambiguous check wrote")
	}
}

// inPane runs a shell command line in a fresh tmux pane of w×h (a real terminal) and returns what it
// printed, wrapped lines joined, and its exit code.
func inPane(t *testing.T, w, h int, env []string, line string) (string, int) {
	t.Helper()
	d := newTmuxDemo(t)
	d.env = append(d.env, env...)
	d.must("new-session", "-d", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-s", "demo", line+"; echo EXIT=$?; sleep 600")
	d.waitText("EXIT=")
	out := d.must("capture-pane", "-p", "-J", "-S", "-", "-t", "demo")
	i := strings.LastIndex(out, "EXIT=")
	var code int
	fmt.Sscanf(out[i:], "EXIT=%d", &code)
	return out[:i], code
}

// demoWorkspace is the demo's runs as written before the simulator moves them.
func demoWorkspace(t *testing.T) *sim.Workspace {
	t.Helper()
	ws, err := sim.NewWorkspaceWith(filepath.Join(t.TempDir(), "ws"), sim.Options{Seed: sim.DefaultSeed})
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestStatusWideNeverCutsOnTerminal is point 3: on a 120-column terminal, -o wide keeps every column whole
// (kubectl's -o wide): NEXT, PROBLEMS and DIR are there, the command and the folder in full.
func TestStatusWideNeverCutsOnTerminal(t *testing.T) {
	ws := demoWorkspace(t)
	out, code := inPane(t, 120, 40, nil, realBinary(t)+" status -o wide "+strings.Join(ws.Paths(), " "))
	if code != exitProblems {
		t.Errorf("exit %d, want %d (demo runs need you)", code, exitProblems)
	}
	for _, h := range []string{"NEXT", "PROBLEMS", "DIR"} {
		if !strings.Contains(out, h) {
			t.Errorf("-o wide at 120 columns has no %s column:\n%s", h, out)
		}
	}
	if strings.Contains(out, "…") {
		t.Errorf("-o wide cut a cell:\n%s", out)
	}
	if !strings.Contains(out, ws.Dir) {
		t.Errorf("-o wide does not show the run folders whole (%s):\n%s", ws.Dir, out)
	}
}

// TestStatusExitCodesInTerminal is point 12: 0 when no run needs you, 1 when one does, 6 when status could not give
// the whole picture (here: the disk is full under its output), whatever the runs say.
func TestStatusExitCodesInTerminal(t *testing.T) {
	ws := demoWorkspace(t)
	bin := realBinary(t)
	paths := strings.Join(ws.Paths(), " ")
	calm := filepath.Dir(actionRun(t))
	cases := []struct {
		line string
		want int
	}{
		{bin + " status " + calm, exitOK},
		{bin + " status " + paths, exitProblems},
		{bin + " status " + paths + " >/dev/full", exitIncomplete},
		{bin + " status -o json " + calm + " >/dev/full", exitIncomplete},
	}
	for _, c := range cases {
		if out, code := inPane(t, 120, 40, nil, c.line); code != c.want {
			t.Errorf("%s: exit %d, want %d\n%s", c.line, code, c.want, out)
		}
	}
}
