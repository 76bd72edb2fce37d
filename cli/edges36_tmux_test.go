package cli

import (
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
