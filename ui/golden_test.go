// Golden frames of the fixtures at each size and theme (testdata/), and the fixtures' clock and env.

package ui

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"

	"runwatch/model"
	"runwatch/state/fixturetest"
	"runwatch/ui/app"
)

// The fixtures, their clock and env: one loader for every package's tests (state/fixturetest).
var fixtureNow = fixturetest.Now

func fixtureEnv() model.Env { return fixturetest.Env() }

func fixtureClock() func() time.Time { return func() time.Time { return fixtureNow } }

func loadFixtures(t testing.TB) []model.Run {
	return fixturetest.Load(t, filepath.Join("..", "testdata"))
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
	t.Parallel()
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
	t.Parallel()
	runList := loadFixtures(t)
	m := newTestModel(t, 140, 40, runList, app.Options{Theme: "mono", Now: fixtureClock(), OpenLog: OpenIndexedLog})
	var out strings.Builder
	// Every run is listed (the title counts them all), and j goes down the list one run at a time.
	for range m.app.Runs {
		fmt.Fprintf(&out, "=== %s\n", idOf(m))
		out.WriteString(render(t, m, colorprofile.Ascii))
		out.WriteString("\n")
		m = send(t, m, press("j"))
	}
	golden.RequireEqual(t, out.String())
}

func TestGoldenMonoAndLight(t *testing.T) {
	t.Parallel()
	runList := loadFixtures(t)
	for _, th := range []string{"mono", "light"} {
		t.Run(th, func(t *testing.T) {
			m := newTestModel(t, 140, 40, runList, app.Options{Theme: th, Now: fixtureClock(), OpenLog: OpenIndexedLog})
			golden.RequireEqual(t, render(t, m, colorprofile.TrueColor))
		})
	}
}

func TestGoldenHelpAndReadOnly(t *testing.T) {
	t.Parallel()
	runList := loadFixtures(t)
	m := newTestModel(t, 90, 30, runList, app.Options{Theme: "mono", ReadOnly: true, Now: fixtureClock(), OpenLog: OpenIndexedLog})
	m = send(t, m, press("?"))
	golden.RequireEqual(t, render(t, m, colorprofile.Ascii))
}
