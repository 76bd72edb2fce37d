package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/ui/keys"
)

// TestDetailOpensAtItsTopInTmux (issue 36, a trial at 80x24): Detail opens a run at its top, its first line
// under "Needs you" (the status, the current stage, the count done) in view. It opened scrolled down one
// line to bring the current stage's row into the few rows of the stacked layout, "↑ 1 more" on its border.
func TestDetailOpensAtItsTopInTmux(t *testing.T) {
	t.Parallel()
	ws := demoWorkspace(t)
	d, exitFile := dashboardOn(t, 80, 24, strings.Join(ws.Paths(), " "))
	s := d.waitText("Detail ")
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "Detail ") && strings.Contains(l, "↑") {
			t.Errorf("Detail opens scrolled down (%q):\n%s", strings.TrimSpace(l), s)
		}
	}
	if !strings.Contains(s, "⚠ stalled · stage verify") {
		t.Errorf("Detail's first line is not in view:\n%s", s)
	}
	d.press(keys.ActQuit)
	d.waitExit(exitFile)
}

// TestEventsRefusesAnAmbiguousRunFirst (issue 36, a trial): events --run naming several runs is refused
// before any line is printed, as brief refuses the same RUN: exit 1, the candidates, no usage. It printed
// every run-added line first, then the refusal with usage, exit 2.
func TestEventsRefusesAnAmbiguousRunFirst(t *testing.T) {
	dir := actionRun(t)
	other := filepath.Join(filepath.Dir(dir), "irm-20260301T000000Z")
	if err := os.CopyFS(other, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENCODE_CONFIG_DIR=" + filepath.Dir(filepath.Dir(dir))}
	code, out, errOut := runReal(t, env, "", "events", "--until", "completed", "--run", "irm", "--timeout", "5s")
	bcode, _, berr := runReal(t, env, "", "brief", "irm")
	if code != bcode || code != exitNoRun || out != "" || strings.Contains(errOut, "usage") || !strings.Contains(errOut, "matches 2 runs") {
		t.Errorf("events --run irm: exit %d (brief %d), stdout %q, stderr:\n%s\nbrief's:\n%s", code, bcode, out, errOut, berr)
	}
}

// TestBriefWriteFailureIsStatusCode (issue 36, a trial): brief that cannot finish writing its document (a
// full disk) exits as status does for the same failure (exitIncomplete), not 1 ("no such run").
func TestBriefWriteFailureIsStatusCode(t *testing.T) {
	dir := actionRun(t)
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	defer full.Close()
	for _, args := range [][]string{{"brief", dir}, {"status", dir}} {
		cmd := exec.Command(realBinary(t), args...)
		cmd.Stdout = full
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitIncomplete {
			t.Errorf("%s > /dev/full: %v, want exit %d", args[0], err, exitIncomplete)
		}
	}
}
