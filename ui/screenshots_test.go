package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/state/resumable/resumabletest"
)

// TestScreenshots writes the frames that screenshots/make.sh turns into PNGs with freeze. It runs only when
// RUNWATCH_SCREENSHOTS names the output folder, so the normal test run does not write into the repo. The
// frames are the real model's View over the fixture runs, driven by the same keys a person would press.
func TestScreenshots(t *testing.T) {
	out := os.Getenv("RUNWATCH_SCREENSHOTS")
	if out == "" {
		t.Skip("set RUNWATCH_SCREENSHOTS=DIR to write screenshot frames (screenshots/make.sh does)")
	}
	runs := loadFixtures(t)
	write := func(name string, m Model) {
		t.Helper()
		frame := render(t, m, colorprofile.TrueColor)
		// freeze ignores "default foreground" (ESC[39m); full resets keep colours from bleeding.
		frame = strings.ReplaceAll(frame, "\x1b[39m", "\x1b[0m")
		if err := os.WriteFile(filepath.Join(out, name+".ansi"), []byte(frame), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := func() Options {
		return Options{Theme: "dark", Now: fixtureClock(), OpenLog: OpenIndexedLog, Env: fixtureEnv}
	}
	keys := func(m Model, ks ...string) Model {
		for _, k := range ks {
			m = send(t, m, key(k))
		}
		return m
	}

	// Each frame starts from a fresh model: models share their open log index, and moving one to another run
	// closes it, so branching one model into several screenshots would read a closed index.
	wide := func() Model { return newTestModel(t, 140, 40, runs, opts()) }
	write("overview", wide())
	write("detail-jonggrang", keys(wide(), "j", "enter", "j", "j"))
	write("timeline-search", keys(wide(), "tab", "tab", "g", "/", "s", "t", "a", "g", "e", "_", "c", "enter", "n"))
	write("brief", keys(wide(), "b"))

	stacked := newTestModel(t, 90, 30, runs, opts())
	write("stacked-90x30", keys(stacked, "tab"))
	narrow := newTestModel(t, 50, 20, runs, opts())
	write("narrow-50x20", narrow)

	// freeze paints a dark window, so the light theme would not show what a light terminal shows.
	ro := newTestModel(t, 140, 40, runs, Options{Theme: "dark", ReadOnly: true, Now: fixtureClock(), OpenLog: OpenIndexedLog})
	write("read-only-help", keys(ro, "?"))

	// The confirmation shows the real plan of the real action on a private copy of the fixtures.
	root := resumabletest.Copy(t)
	locs, err := state.Discover([]string{resumabletest.Run(root, resumabletest.Mining)}, 1)
	if err != nil || len(locs) != 1 {
		t.Fatalf("discover: %v %v", locs, err)
	}
	run := state.Load(locs[0], state.NewEnv(0))
	actor := NewActor(action.Options{User: "you", JournalPath: filepath.Join(t.TempDir(), "journal.jsonl")},
		func() model.Env { return state.NewEnv(0) })
	cm := newTestModel(t, 140, 40, []model.Run{run}, Options{Theme: "dark", Actor: actor, Now: fixtureClock(), OpenLog: OpenIndexedLog})
	write("confirm-unlock", keys(cm, "U"))
}
