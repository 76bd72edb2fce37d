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
