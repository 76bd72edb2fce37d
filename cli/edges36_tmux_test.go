package cli

import (
	"errors"
	"fmt"
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
	t.Parallel()
	dir, env := actionRunEnv(t)
	other := filepath.Join(filepath.Dir(dir), "irm-20260301T000000Z")
	if err := os.CopyFS(other, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runReal(t, env, "", "events", "--until", "completed", "--run", "irm", "--timeout", "5s")
	bcode, _, berr := runReal(t, env, "", "brief", "irm")
	if code != bcode || code != exitNoRun || out != "" || strings.Contains(errOut, "usage") || !strings.Contains(errOut, "matches 2 runs") {
		t.Errorf("events --run irm: exit %d (brief %d), stdout %q, stderr:\n%s\nbrief's:\n%s", code, bcode, out, errOut, berr)
	}
}

// TestBriefWriteFailureIsStatusCode (issue 36, a trial): brief that cannot finish writing its document (a
// full disk) exits as status does for the same failure (exitIncomplete), not 1 ("no such run").
func TestBriefWriteFailureIsStatusCode(t *testing.T) {
	t.Parallel()
	dir, env := actionRunEnv(t)
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	defer full.Close()
	for _, args := range [][]string{{"brief", dir}, {"status", dir}} {
		cmd := exec.Command(realBinary(t), args...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout = full
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitIncomplete {
			t.Errorf("%s > /dev/full: %v, want exit %d", args[0], err, exitIncomplete)
		}
	}
}

// TestDemoExitNamesItsJournalInTmux (issue 36, a trial): the demo's exit message says how the CLI reaches
// the workspace's journal, and that line, run as printed, finds the action taken in the dashboard. `runwatch
// undo iso --dry-run` in the workspace read the person's own journal and found no action.
func TestDemoExitNamesItsJournalInTmux(t *testing.T) {
	t.Parallel()
	d := newTmuxDemo(t)
	dir := filepath.Join(t.TempDir(), "ws")
	exitFile := filepath.Join(t.TempDir(), "exit")
	// The pane stays open after the demo, so its exit message can be read.
	d.must("new-session", "-d", "-x", "120", "-y", "40", "-s", "demo",
		fmt.Sprintf("%s demo --dir %s --speed 8 2>%s.stderr; echo $? > %s; sleep 600", realBinary(t), dir, exitFile, exitFile))
	d.waitScreen("the demo's runs", func(s string) bool { return jonggrangRows.MatchString(s) })
	deadLock := only(t, filepath.Join(dir, "reports", "iso26262-mining-*", "lock", "active.lock"))
	d.selectRun("iso26262")
	d.press(keys.ActUnlock)
	d.confirm("clear the dead lock", func() bool { _, err := os.Stat(deadLock); return os.IsNotExist(err) })
	d.press(keys.ActQuit)
	d.waitExit(exitFile)
	d.waitText("XDG_STATE_HOME=")
	s := d.must("capture-pane", "-p", "-J", "-S", "-", "-t", "demo")
	i := strings.Index(s, "XDG_STATE_HOME=")
	if i < 0 {
		t.Fatalf("the demo's exit message does not say how to reach its journal:\n%s", s)
	}
	line, _, _ := strings.Cut(s[i:], "\n")
	line = strings.Replace(strings.TrimSpace(line), "runwatch ", realBinary(t)+" ", 1)
	line = strings.Replace(line, "RUN", "iso26262", 1)
	out, err := exec.Command("sh", "-c", "cd "+dir+" && "+line).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "unlock") {
		t.Errorf("%s: %v\n%s", line, err, out)
	}
}

// TestUncheckNamesAMissingItemBeforeTheLock (issue 36, a trial): uncheck of a word that is no item of a run
// with a dead writer's lock says there is no such item (it needs no lock to know); it answered with the
// stale-lock refusal, so the typo went unseen until the lock was cleared.
func TestUncheckNamesAMissingItemBeforeTheLock(t *testing.T) {
	t.Parallel()
	ws := demoWorkspace(t)
	dir := filepath.Dir(filepath.Dir(only(t, filepath.Join(ws.Dir, "reports", "iso26262-mining-*", "lock", "active.lock"))))
	code, out, errOut := runReal(t, nil, "", "uncheck", dir, "COUNTS", "--yes")
	if code == 0 || !strings.Contains(errOut, `no checklist item "COUNTS"`) {
		t.Errorf("uncheck ISO COUNTS: exit %d, want the missing item named\n%s%s", code, out, errOut)
	}
}

// TestMessageNeverCutInsideAWordInTmux (issue 36, a trial): a message too long for the footer is cut between
// words, never inside the item it names: at 80x24 an unknown filter word read `left out: fo … kind:` (and at
// 50x20 S on the paused run `gate n … CY_TOKENS=0`: the same cut, ui.TestMessagesLeadWithTheReason's rule).
func TestMessageNeverCutInsideAWordInTmux(t *testing.T) {
	t.Parallel()
	d, _, exitFile := startDemo(t, 80, 24)
	d.send("/")
	d.typeText("foo:bar")
	d.send("enter")
	s := d.waitText("foo:bar left out")
	if strings.Contains(s, " fo …") {
		t.Errorf("the message is cut inside a word:\n%s", s)
	}
	d.press(keys.ActQuit)
	d.waitExit(exitFile)
}
