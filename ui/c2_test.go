// Tests of the runs table's phase names and the pause key under a live agent.

package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/state/fixturetest"
	"runwatch/ui/app"
	"runwatch/ui/text"
)

// Where the runs table names the current phase, it names it whole: the real phase names run to 19 cells
// (docs/FORMATS.md C.2).
func TestRunsTableShowsPhaseNamesWhole(t *testing.T) {
	t.Parallel()
	// The C.2 fixtures have short run names, so the table has room for the stage in its long form.
	locs, err := state.Discover([]string{"../testdata/jonggrang-c2"}, 8)
	if err != nil {
		t.Fatal(err)
	}
	runList := fixturetest.LoadAll(locs, fixtureEnv())
	named := 0
	for w := 40; w <= 240; w += 4 {
		m := newTestModel(t, w, 40, runList, app.Options{Theme: "dark", Now: fixtureClock(), OpenLog: OpenIndexedLog})
		for _, line := range strings.Split(text.Stripped(m.View().Content), "\n") {
			if !strings.Contains(line, "design-review") || !strings.Contains(line, " 10 design") || strings.Contains(line, "Detail") {
				continue
			}
			named++
			if !strings.Contains(line, " 10 design-verification ") {
				t.Errorf("width %d: phase 10's name is cut:\n%s", w, line)
			}
		}
	}
	if named == 0 {
		t.Fatal("no width named the current phase")
	}
}

// P on a run whose phase runs under a live agent is refused in the dashboard with the same reason as the
// subcommand (one code path, state/action), and nothing is written.
func TestPauseKeyRefusedUnderALiveAgent(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "app")
	if err := os.CopyFS(root, os.DirFS("../testdata/jonggrang-c2")); err != nil {
		t.Fatal(err)
	}
	feature := filepath.Join(root, ".jonggrang", ".output", "features", "design-review-mlopc002")
	lock, _ := json.MarshalIndent(map[string]any{"agent_id": "reviewer-design-001", "files": []string{"src/settings.ts"},
		"acquired_at": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "pid": os.Getpid()}, "", "  ")
	if err := os.WriteFile(filepath.Join(root, ".jonggrang", "locks", "reviewer-design-001.lock"), lock, 0o644); err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover([]string{feature}, 1)
	if err != nil || len(locs) != 1 {
		t.Fatalf("discover: %v %v", locs, err)
	}
	run := state.Load(locs[0], state.NewEnv(0))
	if run.Status != model.StatusRunning {
		t.Fatalf("status %s, want running under the live lock", run.Status)
	}
	before, _ := os.ReadFile(run.StatePath)
	actor := NewActor(action.Options{JournalPath: filepath.Join(t.TempDir(), "j.jsonl")}, func() model.Env { return state.NewEnv(0) })
	m := newTestModel(t, 140, 40, []model.Run{run}, app.Options{Actor: actor})
	m = send(t, m, press("P"))
	footer := m.app.Msgs.ErrText()
	if m.confirmDialog() != nil || !strings.Contains(footer, "pause would not stick") || !strings.Contains(footer, "reviewer-design-001") {
		t.Fatalf("pause should be refused with its reason; confirm %v footer %q", m.confirmDialog() != nil, footer)
	}
	if after, _ := os.ReadFile(run.StatePath); string(before) != string(after) {
		t.Fatal("a refused pause changed the manifest")
	}
}
