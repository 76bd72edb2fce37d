// Tests of the runs table's sizes and columns, the cursor without colour, and COLORFGBG.

package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"

	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/text"
	"runwatch/ui/theme"
)

// TestGoldenSizes renders the fixtures at the sizes people use, Runs focused and Detail focused. At every
// size the table has its headers, every live run's name shows whole (at 50 columns, where one row cannot
// hold the longest name and a stage, its start and its distinguishing end), and Detail opens with the
// "Needs you" line and the current stage.
func TestGoldenSizes(t *testing.T) {
	t.Parallel()
	runList := loadFixtures(t)
	for _, sz := range [][2]int{{200, 60}, {160, 45}, {120, 40}, {100, 30}, {80, 24}, {90, 30}, {70, 24}, {50, 20}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			m := newTestModel(t, sz[0], sz[1], runList, app.Options{Theme: "mono", Now: fixtureClock(), OpenLog: OpenIndexedLog})
			listFrame := plain(m)
			if !strings.Contains(listFrame, "NAME") || !strings.Contains(listFrame, "STAGE") {
				t.Errorf("no table headers:\n%s", listFrame)
			}
			// Every row on screen (the list scrolls; G shows the rest) carries its run's name whole, or where
			// the rule gives STATUS, STAGE and CHANGED their room first, its start and its distinguishing end.
			shown := 0
			for _, frame := range []string{listFrame, plain(send(t, m0(t, sz, runList), press("G")))} {
				for _, r := range runList {
					id := r.ID
					if r.Archived || !strings.Contains(frame, id[:min(len(id), 5)]) {
						continue
					}
					shown++
					whole := strings.Contains(frame, id)
					ends := strings.Contains(frame, id[len(id)-min(len(id), 10):])
					if !whole && !ends {
						t.Errorf("%s is not readable in the runs table:\n%s", id, frame)
					}
				}
			}
			if shown < 4 {
				t.Errorf("only %d runs on screen:\n%s", shown, listFrame)
			}
			// The runs table has its STAGE column, and the current phase's name is on every row of a run
			// whose current stage has one (issue 11 point 16).
			list := m0(t, sz, runList)
			pane := text.Stripped(list.list.View())
			if !strings.Contains(pane, "STAGE") {
				t.Errorf("no STAGE column:\n%s", pane)
			}
			named := 0
			for _, r := range list.app.Runs {
				st := r.Stage(r.CurrentStage)
				row := runsRow(list, r.ID[len(r.ID)-min(len(r.ID), 10):])
				if st == nil || st.Name == "" || st.Name == st.Key || row == "" {
					continue
				}
				named++
				if !strings.Contains(row, st.Name) {
					t.Errorf("%s's row lacks its current phase's name %q:\n%s", r.ID, st.Name, row)
				}
			}
			if named < 2 {
				t.Errorf("only %d rows with a named current stage on screen: the check proves nothing\n%s", named, pane)
			}
			m = send(t, m, press("tab"))
			run, _ := m.app.SelectedRun()
			detailFrame := plain(m)
			if !strings.Contains(detailFrame, "Needs you:") || !strings.Contains(detailFrame, "◀ current") ||
				!strings.Contains(detailFrame, run.Kind.StageWord()+" "+run.CurrentStage) {
				t.Errorf("Detail does not lead with the attention line and the current stage %s:\n%s", run.CurrentStage, detailFrame)
			}
			golden.RequireEqual(t, "=== Runs focused\n"+render(t, m0(t, sz, runList), colorprofile.Ascii)+"\n=== Detail focused\n"+render(t, m, colorprofile.Ascii))
		})
	}
}

func m0(t *testing.T, sz [2]int, runList []model.Run) Model {
	return newTestModel(t, sz[0], sz[1], runList, app.Options{Theme: "mono", Now: fixtureClock(), OpenLog: OpenIndexedLog})
}

// TestRunningPausedFlipKeepsRowOrder: a resumable run is running while an invocation holds its lock and
// paused between invocations, flipping all day; its row, and every other, stays where it is.
func TestRunningPausedFlipKeepsRowOrder(t *testing.T) {
	t.Parallel()
	runList := sampleRuns()
	flip := model.Run{ID: "aaa-flipping-20261130T000000Z", Kind: model.KindResumable, StatePath: "/f/state.env", Dir: "/f",
		CurrentStage: "S1", Stages: []model.Stage{{Key: "S1", Status: model.StagePending}, {Key: "S2", Status: model.StagePending}}}
	other := model.Run{ID: "zzz-steady-20261130T000000Z", Kind: model.KindResumable, StatePath: "/z/state.env", Dir: "/z",
		Status: model.StatusRunning, CurrentStage: "S1", Stages: []model.Stage{{Key: "S1", Status: model.StageRunning}}}
	flip.Status = model.StatusPaused
	m := newTestModel(t, 140, 40, append(runList, flip, other), app.Options{})
	m = send(t, m, press("j"))
	m = send(t, m, press("j"))
	selected := m.app.Selected
	want := strings.Join(listed(t, m), ",")
	for i := range 20 {
		flip.Status = model.StatusRunning
		if i%2 == 1 {
			flip.Status = model.StatusPaused
		}
		flip.UpdatedAt = testNow.Add(time.Duration(i) * time.Second)
		m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{flip}), At: flip.UpdatedAt, Health: app.Health{Mode: "inotify"}})
		if got := strings.Join(listed(t, m), ","); got != want {
			t.Fatalf("flip %d (%s) moved rows:\n got %s\nwant %s", i, flip.Status, got, want)
		}
		if m.app.Selected != selected {
			t.Fatalf("flip %d moved the selection", i)
		}
	}
}

// TestNoColorShowsTheCursor: under NO_COLOR the auto theme is monochrome and the selected row is reverse
// video, which survives where colour does not.
func TestNoColorShowsTheCursor(t *testing.T) {
	t.Parallel()
	runList := loadFixtures(t)
	m := newTestModel(t, 120, 40, runList, app.Options{Theme: "auto", Now: fixtureClock(), OpenLog: OpenIndexedLog, Getenv: envOf("NO_COLOR", "1")})
	frame := render(t, m, colorprofile.Ascii)
	run, _ := m.app.SelectedRun()
	found := false
	for _, l := range strings.Split(frame, "\n") {
		if strings.Contains(l, "\x1b[7m") && strings.Contains(l, run.ID) {
			found = true
		}
	}
	if !found {
		t.Fatalf("the selected row %s is not in reverse video:\n%q", run.ID, frame)
	}
	golden.RequireEqual(t, frame)
}

// The root picks the light theme when COLORFGBG says the background is light (theme.DarkFromColorFGBG's
// reading is tested in package theme).
func TestColorFGBG(t *testing.T) {
	t.Parallel()
	if m := New(app.Options{Theme: "auto", Getenv: envOf("COLORFGBG", "0;15")}); m.app.Theme.Title.GetForeground() == theme.NewTheme("dark", true).Title.GetForeground() {
		t.Error("a light COLORFGBG still gave the dark theme")
	}
}
