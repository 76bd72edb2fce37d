package ui

import (
	"strings"
	"testing"

	"runwatch/state"
)

// Where the runs table names the current phase, it names it whole: the real phase names run to 19 cells
// (formats.md C.2).
func TestRunsTableShowsPhaseNamesWhole(t *testing.T) {
	// The C.2 fixtures have short run names, so the table has room for the stage in its long form.
	locs, err := state.Discover([]string{"../testdata/jonggrang-c2"}, 8)
	if err != nil {
		t.Fatal(err)
	}
	runs := state.LoadAll(locs, fixtureEnv())
	named := 0
	for w := 40; w <= 240; w += 4 {
		m := newTestModel(t, w, 40, runs, Options{Theme: "dark", Now: fixtureClock(), OpenLog: OpenIndexedLog})
		for _, line := range strings.Split(stripped(m.View().Content), "\n") {
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
