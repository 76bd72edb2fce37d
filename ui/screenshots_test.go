// The README's screenshots, drawn from the demo workspace (freeze).

package ui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"

	"runwatch/model"
	"runwatch/notify"
	"runwatch/sim"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/state/fixturetest"
	"runwatch/ui/app"
	"runwatch/ui/text"
)

// screenshotsDir holds each screenshot as the frame the dashboard draws (NAME.ansi), the PNG freeze makes of
// it (NAME.png), and SHA256SUMS, the hashes of both taken when the PNGs were drawn.
const screenshotsDir = "../screenshots"

// remakeScreenshots is the one command that brings every screenshot up to date.
const remakeScreenshots = "screenshots/make.sh (it needs freeze and rsvg-convert: docs/DEVELOPMENT.md, Generated text)"

// TestScreenshots draws the README's screenshots with the real model over the demo workspace, driven by the
// keys a person would press, and fails when a committed frame (screenshots/NAME.ansi) is not what the
// dashboard draws now, or when a PNG was not drawn from the committed frame; -update rewrites the frames
// (screenshots/make.sh does, then draws the PNGs). The workspace's facts that differ between machines are
// fixed (loadDemoWorkspace), so the frames are the same on every machine.
func TestScreenshots(t *testing.T) {
	t.Parallel()
	frames := screenshotFrames(t)
	update := false
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		update = true
	}
	for _, name := range slices.Sorted(maps.Keys(frames)) {
		path := filepath.Join(screenshotsDir, name+".ansi")
		if update {
			if err := os.WriteFile(path, []byte(frames[name]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		committed, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("screenshot %s has no committed frame (%v): run %s", name, err, remakeScreenshots)
			continue
		}
		if string(committed) != frames[name] {
			t.Errorf("screenshots/%s.ansi is stale: the dashboard draws it differently now; run %s and commit what it changes. %s",
				name, remakeScreenshots, firstDifference(string(committed), frames[name]))
		}
	}
	checkPNGsDrawnFromFrames(t, slices.Sorted(maps.Keys(frames)))
}

// firstDifference names the first line where two frames differ, as it reads on the screen.
func firstDifference(committed, now string) string {
	a, b := strings.Split(text.Stripped(committed), "\n"), strings.Split(text.Stripped(now), "\n")
	for i := range max(len(a), len(b)) {
		var la, lb string
		if i < len(a) {
			la = a[i]
		}
		if i < len(b) {
			lb = b[i]
		}
		if la != lb {
			return fmt.Sprintf("First difference, line %d:\n  committed: %s\n  drawn now: %s", i+1, strings.TrimRight(la, " "), strings.TrimRight(lb, " "))
		}
	}
	return "Only the colours or styles differ."
}

// checkPNGsDrawnFromFrames proves each PNG was drawn from the committed frame: make.sh records the hashes of
// the frames and PNGs it drew together in SHA256SUMS (sha256sum's format), and both must still be those.
func checkPNGsDrawnFromFrames(t *testing.T, names []string) {
	t.Helper()
	sumsPath := filepath.Join(screenshotsDir, "SHA256SUMS")
	data, err := os.ReadFile(sumsPath)
	if err != nil {
		t.Fatalf("screenshots/SHA256SUMS: %v; run %s", err, remakeScreenshots)
	}
	recorded := map[string]string{}
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		sum, file, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("screenshots/SHA256SUMS line %d is not \"HASH  FILE\": %q; run %s", i+1, line, remakeScreenshots)
		}
		recorded[file] = sum
	}
	for _, name := range names {
		for _, file := range []string{name + ".ansi", name + ".png"} {
			b, err := os.ReadFile(filepath.Join(screenshotsDir, file))
			if err != nil {
				t.Errorf("screenshots/%s: %v; run %s", file, err, remakeScreenshots)
				continue
			}
			sum := sha256.Sum256(b)
			if got := hex.EncodeToString(sum[:]); recorded[file] != got {
				t.Errorf("screenshots/%s is not the one screenshots/%s.png was drawn with (its hash is not in screenshots/SHA256SUMS): run %s",
					file, name, remakeScreenshots)
			}
		}
	}
	// A screenshot the test no longer draws would go stale unseen.
	for file := range recorded {
		if !slices.Contains(names, strings.TrimSuffix(strings.TrimSuffix(file, ".ansi"), ".png")) {
			t.Errorf("screenshots/SHA256SUMS names %s, which TestScreenshots does not draw: remove it, or draw it in TestScreenshots", file)
		}
	}
}

// screenshotFrames draws each screenshot: the real model's View over the demo workspace (the runs `runwatch
// demo` opens), at the sizes the README and docs/ show, in the terminal colours freeze paints.
func screenshotFrames(t *testing.T) map[string]string {
	t.Helper()
	runList, demoNow, demoEnv, dir := demoWorkspace(t)
	frames := map[string]string{}
	write := func(name string, m Model) {
		t.Helper()
		frame := render(t, m, colorprofile.TrueColor)
		// freeze ignores "default foreground" (ESC[39m); full resets keep colours from bleeding.
		frame = strings.ReplaceAll(frame, "\x1b[39m", "\x1b[0m")
		frames[name] = shownAsDemo(t, name, dir, frame)
	}
	notifier := inTmuxNotifier(t)
	opts := func() app.Options {
		return app.Options{Theme: "dark", Now: demoNow, OpenLog: OpenIndexedLog, Env: demoEnv, Notifier: notifier}
	}
	ks := func(m Model, ks ...string) Model {
		for _, k := range ks {
			m = send(t, m, press(k))
		}
		return m
	}

	// Each frame starts from a fresh model: models share their open log index, and moving one to another run
	// closes it, so branching one model into several screenshots would read a closed index.
	wide := func() Model { return newTestModel(t, 120, 40, runList, opts()) }
	write("overview", wide())
	write("detail-jonggrang", ks(wide(), "j", "enter", "j", "j"))
	write("timeline-search", ks(wide(), "/", "m", "i", "n", "i", "n", "g", "enter", "tab", "tab", "g", "/", "s", "t", "a", "g", "e", "_", "c", "enter", "n"))
	write("brief", ks(wide(), "b"))
	// The orphaned docs fix: its phases as bars on one time scale, what is usual for the rest from the
	// completed BUGFIX run; Detail scrolled down to its Time section, at the tour's size.
	write("detail-timing", ks(wide(), "/", "d", "o", "c", "s", "enter", "tab", "ctrl+d", "ctrl+d", "ctrl+d"))
	// The light theme, for a light terminal: make.sh paints this one on a white window.
	light := opts()
	light.Theme = "light"
	write("overview-light", newTestModel(t, 120, 40, runList, light))

	stacked := newTestModel(t, 90, 30, runList, opts())
	write("stacked-90x30", ks(stacked, "tab"))
	narrow := newTestModel(t, 50, 20, runList, opts())
	write("narrow-50x20", narrow)

	// freeze paints a dark window, so the light theme would not show what a light terminal shows.
	ro := opts()
	ro.ReadOnly = true
	write("read-only-help", ks(newTestModel(t, 120, 40, runList, ro), "?"))

	// The confirmation shows the real plan of the real action: clearing the demo's dead-pid lock.
	withActor := opts()
	withActor.Actor = NewActor(action.Options{User: "you", JournalPath: filepath.Join(t.TempDir(), "journal.jsonl")}, demoEnv)
	write("confirm-unlock", ks(newTestModel(t, 120, 40, runList, withActor), "/", "m", "i", "n", "i", "n", "g", "enter", "U"))

	// Notifications on: the footer names the channels and counts what went out; the message line shows
	// the one-time note about tmux passthrough.
	channels := []string{"bell", "osc777", "tmux", "hook"}
	notifying := opts()
	notifying.Notifier = &fakeNotifier{status: notify.Status{Channels: channels}}
	write("notify-footer", send(t, newTestModel(t, 110, 16, runList, notifying), notify.Status{Channels: channels, Sent: 3,
		Note: "desktop notifications (osc777) need tmux passthrough: tmux set -g allow-passthrough on"}))
	return frames
}

// inTmuxNotifier is the notifier the program makes with its default settings (cli's newDashboardNotifier) in
// a tmux pane, where the README has it run: the footer names its channels. The pane's outer terminal is one
// known to show no desktop notifications, so the frames do not depend on the terminal they are drawn from.
func inTmuxNotifier(t *testing.T) app.Notifier {
	t.Helper()
	env := map[string]string{"TMUX": "/tmp/tmux-1000/default,4242,0", "TMUX_PANE": "%0", "TERM": "tmux-256color", "TERM_PROGRAM": "tmux"}
	n, err := notify.New(notify.Options{Terminal: func(string) {}, Env: func(k string) string { return env[k] },
		TmuxClient: &notify.Tmux{Pane: "%0", Run: func(context.Context, ...string) (string, error) {
			return "xterm-256color\t", nil // client_termname and client_termtype: a plain xterm
		}}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The facts of the machine the demo's files hold, fixed so that the frames are the same on every machine:
// the host and user its locks name, the pid of its dead lock (no process on any machine the frames are
// drawn on: demoProcs says so) and of its live runs (alive: demoProcs).
const (
	demoHost    = "devbox"
	demoUser    = "ada"
	demoDeadPID = 48213
	demoLivePID = 4242
	// demoDir is the workspace's folder as the frames show it. Tests draw from a folder of their own whose
	// name is as long (demoDirPrefix and four hex digits: the lines wrap and cut where they would), and show
	// it as this one: the same place for every test would be shared by the tests of every checkout.
	demoDir       = "/tmp/runwatch-demo"
	demoDirPrefix = "rw-shots-"
)

// actionIDSuffix is the random part of an action id (state/action's newID), which the confirmation shows.
var actionIDSuffix = regexp.MustCompile(`(action_id=[0-9]{8}T[0-9.]+Z-)[0-9a-f]{8}`)

// shownAsDemo shows frame as drawn in demoDir, with a fixed action id.
func shownAsDemo(t *testing.T, name, dir, frame string) string {
	t.Helper()
	frame = strings.ReplaceAll(frame, filepath.Base(dir), filepath.Base(demoDir))
	frame = actionIDSuffix.ReplaceAllString(frame, "${1}5eed0007")
	if strings.Contains(text.Stripped(frame), demoDirPrefix) {
		t.Fatalf("screenshot %s shows the test's folder %s cut or styled, where the frame should show %s:\n%s", name, dir, demoDir, text.Stripped(frame))
	}
	return frame
}

// demoProcs decides the liveness of the demo's pids the same way on every machine: the live runs' pid runs
// (started before any of their locks), the dead lock's does not, nor does any other.
type demoProcs struct{ now time.Time }

func (demoProcs) Alive(pid int) bool { return pid == demoLivePID }
func (p demoProcs) StartTime(pid int) (time.Time, bool) {
	if pid == demoLivePID {
		return p.now.Add(-3 * time.Hour), true
	}
	return time.Time{}, false
}

// loadDemoWorkspace is demoWorkspace for the tests that do not show its folder.
func loadDemoWorkspace(t *testing.T) ([]model.Run, func() time.Time, func() model.Env) {
	t.Helper()
	runList, clock, env, _ := demoWorkspace(t)
	return runList, clock, env
}

// demoWorkspace creates the demo's runs with a fixed seed, clock and machine facts in a folder of the test's
// own (see demoDir), and reads them with the real readers.
func demoWorkspace(t *testing.T) ([]model.Run, func() time.Time, func() model.Env, string) {
	t.Helper()
	now := time.Date(2026, 11, 30, 9, 41, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	dir := makeDemoDir(t)
	_, err := sim.NewWorkspaceWith(dir, sim.Options{Seed: sim.DefaultSeed, Now: clock, Host: demoHost, User: demoUser,
		DeadPID: demoDeadPID, LivePID: demoLivePID})
	if err != nil {
		t.Fatal(err)
	}
	env := func() model.Env {
		e := state.NewEnv(0)
		e.Now, e.Host, e.Proc = now, demoHost, demoProcs{now: now}
		return e
	}
	// The simulator writes some files at the wall clock, after the fixed one: such a run would read as changed
	// in the future, where the program, whose clock is the simulator's, shows the age it prints for a change
	// just made ("<1m"). They are dated at the clock.
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if st, err := d.Info(); err == nil && st.ModTime().After(now) {
			return os.Chtimes(p, now, now)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover([]string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	runList := fixturetest.LoadAll(locs, env())
	// As the watcher does: every run teaches the history, then each is judged by the clock with it.
	h := model.NewHistory()
	for i := range runList {
		h.Observe(&runList[i])
	}
	for i := range runList {
		model.JudgeTime(&runList[i], now, model.LivenessRules{}, h)
	}
	return runList, clock, env, dir
}

// makeDemoDir makes an empty folder of the test's own, under /tmp, whose path is as long as demoDir's.
func makeDemoDir(t *testing.T) string {
	t.Helper()
	for range 100 {
		dir := filepath.Join(filepath.Dir(demoDir), fmt.Sprintf("%s%04x", demoDirPrefix, rand.IntN(1<<16)))
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			t.Skipf("the demo's frames are drawn in a folder under %s: %v", filepath.Dir(demoDir), err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		return dir
	}
	t.Fatalf("no free folder %s* under %s after 100 tries", demoDirPrefix, filepath.Dir(demoDir))
	return ""
}
