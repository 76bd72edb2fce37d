package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/ui"
)

// Issue 36: habits people bring from less, k9s, lazygit and kubectl, each tried on the real binary in tmux.

// startDemo opens the real demo at w×h in a private tmux and waits for its runs.
func startDemo(t *testing.T, w, h int) (d *tmuxDemo, dir, exitFile string) {
	d = newTmuxDemo(t)
	bin := buildRunwatch(t)
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
