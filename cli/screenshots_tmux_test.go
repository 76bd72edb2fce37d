package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"runwatch/sim"
	"runwatch/ui/text"
)

// The facts of a frame that depend on the clock or the machine, not on what the program draws: numbers
// (times, ages, pids, run ids; an age under a minute, "<1m", as any) and the time-based suffix of a jonggrang
// feature's folder name.
var (
	frameNumbers       = regexp.MustCompile(`[0-9]+`)
	frameFeatureSuffix = regexp.MustCompile(`-mx[0-9a-z]{6}\b`)
	frameSpaces        = regexp.MustCompile(` {2,}`)
	// A pid or an age one digit shorter than the frame's leaves one more blank before a pane's border.
	frameBorderGap = regexp.MustCompile(` +([┃│])`)
)

// frameWords is a screen without what differs between two drawings of the demo on two clocks and machines,
// line by line.
func frameWords(screen string) []string {
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(screen, "\n "), "\n") {
		line = frameFeatureSuffix.ReplaceAllString(line, "-mx…")
		line = frameNumbers.ReplaceAllString(line, "#")
		line = strings.ReplaceAll(line, "<#", "#") // "<1m" turns "1m" as the test runs
		line = frameBorderGap.ReplaceAllString(frameSpaces.ReplaceAllString(line, " "), "$1")
		lines = append(lines, strings.TrimRight(line, " "))
	}
	return lines
}

// TestScreenshotsAreWhatTheProgramPrints (issue 36 point 16): the README's screenshots, which ui's
// TestScreenshots draws with the model over a workspace with fixed facts, read as the real binary prints the
// same demo workspace in tmux at the size each shows (the tour's 120x40 and the narrow 50x20): the same lines,
// words and marks, numbers aside (the clock and the machine differ). "now" where the program printed an age,
// or a frame drawn at another size than the page says, fails here.
func TestScreenshotsAreWhatTheProgramPrints(t *testing.T) {
	t.Parallel()
	d := newTmuxDemo(t)
	// A terminal known to show no desktop notifications, as the frames' (notify.Detect goes by these).
	var env []string
	for _, e := range d.env {
		name, _, _ := strings.Cut(e, "=")
		if !slices.Contains([]string{"KITTY_WINDOW_ID", "ITERM_SESSION_ID", "WEZTERM_PANE", "VTE_VERSION", "TERM_PROGRAM", "LC_TERMINAL"}, name) {
			env = append(env, e)
		}
	}
	d.env = env
	bin := buildRunwatch(t)
	dir := filepath.Join(t.TempDir(), "ws")
	// The demo's runs with its seed, on this machine's clock, pids and host; no simulator moves them.
	if _, err := sim.NewWorkspace(dir); err != nil {
		t.Fatal(err)
	}
	shots := []struct {
		name          string
		width, height int
	}{{"overview", 120, 40}, {"narrow-50x20", 50, 20}}
	// Every size at once, so the runs' ages have moved as little as can be when each is compared.
	for _, shot := range shots {
		d.must("new-session", "-d", "-x", fmt.Sprint(shot.width), "-y", fmt.Sprint(shot.height), "-s", shot.name, bin+" "+dir)
	}
	for _, shot := range shots {
		frame, err := os.ReadFile(filepath.Join("..", "screenshots", shot.name+".ansi"))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Join(frameWords(text.Stripped(string(frame))), "\n")
		// The first frames are drawn before the first scan has read every run; the one to compare is the one
		// the program settles on. The deadline only bounds a screen that never comes.
		var screen string
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			screen, _ = d.tmux("capture-pane", "-p", "-t", shot.name)
			if strings.Join(frameWords(screen), "\n") == want || time.Now().After(deadline) {
				break
			}
		}
		if got := strings.Join(frameWords(screen), "\n"); got != want {
			w, g := strings.Split(want+"\n", "\n"), strings.Split(got+"\n", "\n")
			i := 0
			for i < len(w)-1 && i < len(g)-1 && w[i] == g[i] {
				i++
			}
			t.Errorf("screenshots/%s.ansi is not what runwatch prints over the demo's runs at %dx%d (numbers aside): line %d\n"+
				"  screenshot: %s\n  program:    %s\nIf the program is right, run screenshots/make.sh; the program's screen was:\n%s",
				shot.name, shot.width, shot.height, i+1, w[i], g[i], screen)
		}
	}
}
