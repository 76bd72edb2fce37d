package cli

import (
	"fmt"
	"os"
	"path/filepath"
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

// TestStalledRunReadsStalledEverywhereInTmux is point 10 (issue 36, a trial): a stalled run's current stage
// reads stalled in Detail, as the header, the Runs row, the brief and status say, and no ETA is shown. The
// demo's orphaned bugfix (its orchestrator gone, orphan_after 1s here) read `▶ 4 skill-discovery … running`
// in Detail, and the brief's restart line `4 skill-discovery — running`.
func TestStalledRunReadsStalledEverywhereInTmux(t *testing.T) {
	t.Parallel()
	ws := demoWorkspace(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("orphan_after: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	paths := strings.Join(ws.Paths(), " ")
	d, exitFile := dashboardOn(t, 120, 40, paths, "--config", cfg)
	d.selectRun("fix-broken")
	s := d.waitText("◀ current")
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "skill-discovery") && strings.Contains(l, "◀ current") &&
			(!strings.Contains(l, "stalled") || strings.Contains(l, "running")) {
			t.Errorf("the stalled run's current phase: %q\n%s", strings.TrimSpace(l), s)
		}
		if strings.Contains(l, "fix-broken-links") && !strings.Contains(l, "Detail ") && (!strings.Contains(l, "stalled") || strings.Contains(l, " left")) {
			t.Errorf("the Runs row: %q", strings.TrimSpace(l))
		}
	}
	d.press(keys.ActQuit)
	d.waitExit(exitFile)
	_, brief, _ := runReal(t, nil, "", "brief", "--config", cfg, only(t, filepath.Join(ws.Dir, "docs-site", ".jonggrang", ".output", "features", "fix-broken-*")))
	if !strings.Contains(brief, "Restart at: 4 skill-discovery — stalled") || strings.Contains(brief, " left by ") {
		t.Errorf("the brief does not call the phase stalled, or gives an ETA:\n%s", brief)
	}
	_, status, _ := runReal(t, nil, "", append([]string{"status", "--config", cfg}, ws.Paths()...)...)
	for _, l := range strings.Split(status, "\n") {
		if strings.HasPrefix(l, "fix-broken-links") && !strings.Contains(l, "stalled") {
			t.Errorf("status: %q", l)
		}
	}
}

// TestUnreachableHostSaysSoInTmux (issue 36, a trial): the dashboard on a root whose host cannot be reached
// says so in the Runs pane, with ssh's reason, in the words status uses; it said "no runs found in
// nohost:/x", as if the folder had been read and held nothing.
func TestUnreachableHostSaysSoInTmux(t *testing.T) {
	t.Parallel()
	_, _, statusErr := runReal(t, nil, "", "status", "nohost:/x")
	said := strings.TrimSpace(lastSaid(statusErr, "runwatch status: "))
	if !strings.HasPrefix(said, "nohost cannot be reached: ") {
		t.Fatalf("status does not say the host cannot be reached: %q", statusErr)
	}
	d, exitFile := dashboardOn(t, 120, 40, "nohost:/x")
	s := d.waitText("cannot be reached")
	// The Runs pane's column only: Detail may stand beside it.
	var cells []string
	for _, l := range strings.Split(s, "\n") {
		if parts := strings.Split(l, "┃"); len(parts) >= 3 {
			cells = append(cells, parts[1])
		}
	}
	pane := strings.Join(strings.Fields(strings.Join(cells, " ")), " ")
	if !strings.Contains(pane, "✗ "+said) || strings.Contains(s, "no runs found") {
		t.Errorf("the Runs pane does not say what status says (%q):\n%s", said, s)
	}
	d.press(keys.ActQuit)
	d.waitExit(exitFile)
}

// TestTimelineDatesStayWhileScrollingInTmux (issue 36, point 9): with `t`, a log whose entries span two days
// dates every entry, at its top (where the entries in view are all of the first day) as at its end, so the
// time column keeps its width while scrolling. It was decided per window: `22:00:00` at the top, `Feb 16
// 00:05:00` at the end.
func TestTimelineDatesStayWhileScrollingInTmux(t *testing.T) {
	t.Parallel()
	dir, _ := actionRunEnv(t)
	var log strings.Builder
	for i := range 50 {
		fmt.Fprintf(&log, "[2026-02-15T22:%02d:00Z] check_progress item=%d\n", i, i)
	}
	log.WriteString("[2026-02-16T00:05:00Z] stage_start stage=S2\n")
	if err := os.WriteFile(filepath.Join(dir, "run.log"), []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	d, exitFile := dashboardOn(t, 120, 40, filepath.Dir(dir))
	d.focus("Timeline")
	d.send("t")
	d.waitText("Feb 16 00:05:00")
	d.press(keys.ActTop)
	s := d.waitText("item=0")
	if !strings.Contains(s, "Feb 15 22:00:00") {
		t.Errorf("at the log's top the time column is not dated:\n%s", s)
	}
	d.press(keys.ActQuit)
	d.waitExit(exitFile)
}
