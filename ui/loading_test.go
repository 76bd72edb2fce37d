// Tests of runs joining the list as they load.

package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/ui/app"
)

// Runs that arrive while the watcher is still reading (Health.Loading > 0) join the list in its final order:
// the header says how many are still coming, a selection at the top stays at the top, and one the person
// moved stays on the run they chose.
func TestRunsJoinTheListAsTheyLoad(t *testing.T) {
	t.Parallel()
	runList := sampleRuns() // rs (stalled), old-done (completed), jg, pay-flow (failed)
	byID := map[string]model.Run{}
	for _, r := range runList {
		byID[r.ID] = r
	}
	m := New(app.Options{Now: func() time.Time { return testNow }, Theme: "mono"})
	m = send(t, m, tea.WindowSizeMsg{Width: 140, Height: 40})
	m = send(t, m, app.SnapshotMsg{Health: app.Health{Mode: "inotify", Loading: 4}, At: testNow})
	if v := plain(m); !strings.Contains(v, "reading 4 runs…") || strings.Contains(v, "no runs found") {
		t.Fatalf("before any run is read the list should say it is reading:\n%s", v)
	}
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{byID["old-done"]}), Health: app.Health{Mode: "inotify", Loading: 3}, At: testNow})
	if v := plain(m); !strings.Contains(v, "1 run (3 more loading)") {
		t.Fatalf("header should count the runs still loading:\n%s", v)
	}
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{byID["pay-flow"]}), Health: app.Health{Mode: "inotify", Loading: 2}, At: testNow})
	if m.app.Selected != byID["pay-flow"].StatePath {
		t.Fatalf("selection %q; a selection at the top stays at the top while runs load", m.app.Selected)
	}
	m = send(t, m, tea.KeyPressMsg{Code: 'j', Text: "j"})
	chosen := m.app.Selected
	if chosen != byID["old-done"].StatePath {
		t.Fatalf("j selected %q", chosen)
	}
	rest := []model.Run{}
	for _, r := range runList {
		if r.ID != "old-done" && r.ID != "pay-flow" {
			rest = append(rest, r)
		}
	}
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers(rest), Health: app.Health{Mode: "inotify"}, At: testNow})
	if m.app.Selected != chosen {
		t.Fatalf("selection moved to %q; the person chose %q", m.app.Selected, chosen)
	}
	full := newTestModel(t, 140, 40, runList, app.Options{})
	if got, want := listed(t, m), listed(t, full); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("order after loading:\n%v\nwith every run at once:\n%v", got, want)
	}
	if v := plain(m); strings.Contains(v, "loading") {
		t.Fatalf("header still says loading:\n%s", v)
	}
}
