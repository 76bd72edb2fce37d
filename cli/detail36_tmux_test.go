package cli

import (
	"strings"
	"testing"

	"runwatch/ui/keys"
)

// TestDetailUsualLeavesTheRunOutInTmux (issue 36, a trial): a finished run's phase is no measure of itself.
// The demo's completed bugfix is the only run of its work type past phase 8: Detail said `implementation 3m
// · usually 3m (1 run)`, its own 3m. It now says nothing of a usual there, and the usual of phase 1 is the
// other bugfix run's alone.
func TestDetailUsualLeavesTheRunOutInTmux(t *testing.T) {
	t.Parallel()
	ws := demoWorkspace(t)
	d, exitFile := dashboardOn(t, 120, 40, strings.Join(ws.Paths(), " "))
	d.selectRun("fix-typo")
	d.focus("Detail")
	d.press(keys.ActTop)
	d.send("enter")
	s := d.waitText("implementation ")
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "implementation ") && strings.Contains(l, "usually") {
			t.Errorf("the run's own phase is its usual: %q\n%s", strings.TrimSpace(l), s)
		}
		if strings.Contains(l, " setup ") && !strings.Contains(l, "(1 run)") {
			t.Errorf("phase 1's usual is not the other run's alone: %q", strings.TrimSpace(l))
		}
	}
	d.press(keys.ActQuit)
	d.waitExit(exitFile)
}
