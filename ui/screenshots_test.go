// The README's screenshots, drawn from the demo workspace (freeze).

package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"

	"runwatch/model"
	"runwatch/notify"
	"runwatch/sim"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/ui/app"
)

// TestScreenshots writes the frames that screenshots/make.sh turns into PNGs with freeze. It runs only when
// RUNWATCH_SCREENSHOTS names the output folder, so the normal test run does not write into the repo. The
// frames are the real model's View over a demo workspace (the runs `runwatch demo` opens, with a fixed seed and
// clock so the pictures do not change between regenerations), driven by the keys a person would press.
// Not parallel: the demo workspace is at a fixed path, the one the screenshots show.
func TestScreenshots(t *testing.T) {
	out := os.Getenv("RUNWATCH_SCREENSHOTS")
	if out == "" {
		t.Skip("set RUNWATCH_SCREENSHOTS=DIR to write screenshot frames (screenshots/make.sh does)")
	}
	runList, demoNow, demoEnv := loadDemoWorkspace(t)
	write := func(name string, m Model) {
		t.Helper()
		frame := render(t, m, colorprofile.TrueColor)
		// freeze ignores "default foreground" (ESC[39m); full resets keep colours from bleeding.
		frame = strings.ReplaceAll(frame, "\x1b[39m", "\x1b[0m")
		if err := os.WriteFile(filepath.Join(out, name+".ansi"), []byte(frame), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := func() app.Options {
		return app.Options{Theme: "dark", Now: demoNow, OpenLog: OpenIndexedLog, Env: demoEnv}
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
	ro := newTestModel(t, 120, 40, runList, app.Options{Theme: "dark", ReadOnly: true, Now: demoNow, OpenLog: OpenIndexedLog})
	write("read-only-help", ks(ro, "?"))

	// The confirmation shows the real plan of the real action: clearing the demo's dead-pid lock.
	actor := NewActor(action.Options{User: "you", JournalPath: filepath.Join(t.TempDir(), "journal.jsonl")}, demoEnv)
	cm := newTestModel(t, 120, 40, runList, app.Options{Theme: "dark", Actor: actor, Now: demoNow, OpenLog: OpenIndexedLog, Env: demoEnv})
	write("confirm-unlock", ks(cm, "/", "m", "i", "n", "i", "n", "g", "enter", "U"))

	// Notifications on: the footer names the channels and counts what went out; the message line shows
	// the one-time note about tmux passthrough.
	channels := []string{"bell", "osc777", "tmux", "hook"}
	nm := newTestModel(t, 110, 16, runList, app.Options{Theme: "dark", Now: demoNow, OpenLog: OpenIndexedLog, Env: demoEnv,
		Notifier: &fakeNotifier{status: notify.Status{Channels: channels}}})
	write("notify-footer", send(t, nm, notify.Status{Channels: channels, Sent: 3,
		Note: "desktop notifications (osc777) need tmux passthrough: tmux set -g allow-passthrough on"}))
}

// loadDemoWorkspace creates the demo's runs at a fixed place, seed and clock, and reads them with the real
// readers. The place is fixed because the detail pane shows it.
func loadDemoWorkspace(t *testing.T) ([]model.Run, func() time.Time, func() model.Env) {
	t.Helper()
	now := time.Date(2026, 11, 30, 9, 41, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	dir := filepath.Join(os.TempDir(), "runwatch-demo")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if _, err := sim.NewWorkspaceWith(dir, sim.Options{Seed: 7, Now: clock}); err != nil {
		t.Fatal(err)
	}
	env := func() model.Env {
		e := state.NewEnv(0)
		e.Now = now
		return e
	}
	// The simulator writes some files at the wall clock, after the fixed one: such a run would read as changed
	// in the future, where the program, whose clock is the simulator's, shows the age it prints for a change
	// just made ("<1m"). They are dated at the clock.
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
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
	runList := state.LoadAll(locs, env())
	// As the watcher does: every run teaches the history, then each is judged by the clock with it.
	h := model.NewHistory()
	for i := range runList {
		h.Observe(&runList[i])
	}
	for i := range runList {
		model.JudgeTime(&runList[i], now, model.LivenessRules{}, h)
	}
	return runList, clock, env
}
