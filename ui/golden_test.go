// Golden frames of the fixtures at each size and theme (testdata/), and the fixtures' clock and env.

package ui

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/app"
)

// fixtureNow is a little after the newest timestamp in the fixtures, so ages read like a live session.
var fixtureNow = time.Date(2026, 2, 16, 6, 0, 0, 0, time.UTC)

// noProcs answers that no pid is running: fixture pids are made up and must not depend on this machine.
type noProcs struct{}

func (noProcs) Alive(int) bool                  { return false }
func (noProcs) StartTime(int) (time.Time, bool) { return time.Time{}, false }

func fixtureEnv() model.Env {
	return model.Env{Now: fixtureNow, Host: resumabletest.HostPlaceholder, StaleAfter: model.DefaultStaleAfter, Proc: noProcs{}}
}

func fixtureClock() func() time.Time { return func() time.Time { return fixtureNow } }

func relocate(s, from string) string { return strings.ReplaceAll(s, from, "/fixtures") }

// loadFixtures reads both conventions' fixtures with the real readers, then rewrites the checkout's
// absolute path to /fixtures so the goldens do not depend on where the repository lives.
func loadFixtures(t testing.TB) []model.Run {
	t.Helper()
	// The fixtures are copied so their mtimes (which the readers report as "updated") can be pinned; a
	// checkout's mtimes are whatever git made them.
	src, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	var paths []string
	for _, sub := range []string{"jonggrang", "opencode"} {
		copyDir(t, filepath.Join(src, sub), filepath.Join(root, sub))
		paths = append(paths, filepath.Join(root, sub))
	}
	pinned := fixtureNow.Add(-10 * time.Minute)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, pinned, pinned)
	})
	if err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover(paths, 8)
	if err != nil && len(locs) == 0 {
		t.Fatal(err)
	}
	runList := state.LoadAll(locs, fixtureEnv())
	for i := range runList {
		relocateRun(&runList[i], root)
	}
	return runList
}

func relocateRun(r *model.Run, root string) {
	r.Dir, r.StatePath, r.ProjectRoot = relocate(r.Dir, root), relocate(r.StatePath, root), relocate(r.ProjectRoot, root)
	r.Attention.Reason, r.Attention.Command = relocate(r.Attention.Reason, root), relocate(r.Attention.Command, root)
	for i := range r.Locks {
		r.Locks[i].Path = relocate(r.Locks[i].Path, root)
		for j := range r.Locks[i].Reasons {
			r.Locks[i].Reasons[j] = relocate(r.Locks[i].Reasons[j], root)
		}
	}
	for i := range r.Problems {
		r.Problems[i].Message = relocate(r.Problems[i].Message, root)
		r.Problems[i].Path = relocate(r.Problems[i].Path, root)
	}
	if r.Log != nil {
		// The timeline still reads the real file: only what is displayed is relocated.
		r.Log = &model.LogRef{Path: r.Log.Path, SizeBytes: r.Log.SizeBytes}
	}
}

// render forces a colour profile on the frame, as the program's renderer would for that terminal, so the
// goldens do not depend on the terminal the tests run in.
func render(t testing.TB, m Model, p colorprofile.Profile) string {
	t.Helper()
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: p}
	if _, err := w.WriteString(m.View().Content); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestGoldenFixtures(t *testing.T) {
	runList := loadFixtures(t)
	sizes := [][2]int{{140, 40}, {90, 30}, {50, 20}}
	for _, sz := range sizes {
		for _, focus := range []app.Pane{app.PaneRuns, app.PaneDetail, app.PaneTimeline} {
			t.Run(fmt.Sprintf("%dx%d_%s", sz[0], sz[1], focus), func(t *testing.T) {
				m := newTestModel(t, sz[0], sz[1], runList, app.Options{Theme: "dark", Now: fixtureClock(), OpenLog: OpenIndexedLog})
				for m.app.Focus != focus {
					m = send(t, m, press("tab"))
				}
				golden.RequireEqual(t, render(t, m, colorprofile.ANSI256))
			})
		}
	}
}

// TestGoldenEachRun renders the detail of every fixture run at the wide size, in plain text, so a reader
// change that alters what a run shows is visible in review.
func TestGoldenEachRun(t *testing.T) {
	runList := loadFixtures(t)
	m := newTestModel(t, 140, 40, runList, app.Options{Theme: "mono", Now: fixtureClock(), OpenLog: OpenIndexedLog})
	var out strings.Builder
	for i := range m.list.Order() {
		fmt.Fprintf(&out, "=== %s\n", m.app.Runs[m.list.Order()[i]].ID)
		out.WriteString(render(t, m, colorprofile.Ascii))
		out.WriteString("\n")
		m = send(t, m, press("j"))
	}
	golden.RequireEqual(t, out.String())
}

func TestGoldenMonoAndLight(t *testing.T) {
	runList := loadFixtures(t)
	for _, th := range []string{"mono", "light"} {
		t.Run(th, func(t *testing.T) {
			m := newTestModel(t, 140, 40, runList, app.Options{Theme: th, Now: fixtureClock(), OpenLog: OpenIndexedLog})
			golden.RequireEqual(t, render(t, m, colorprofile.TrueColor))
		})
	}
}

func TestGoldenHelpAndReadOnly(t *testing.T) {
	runList := loadFixtures(t)
	m := newTestModel(t, 90, 30, runList, app.Options{Theme: "mono", ReadOnly: true, Now: fixtureClock(), OpenLog: OpenIndexedLog})
	m = send(t, m, press("?"))
	golden.RequireEqual(t, render(t, m, colorprofile.Ascii))
}
