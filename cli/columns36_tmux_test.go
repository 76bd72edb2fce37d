package cli

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"runwatch/ui/keys"
)

// runsHeader is the Runs pane's header line on screen, its words alone ("NAME STATUS STAGE …"); "" when the
// screen has none.
func runsHeader(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if f := strings.Fields(strings.Trim(l, "┃│ ")); len(f) > 2 && f[0] == "NAME" {
			return strings.Join(f, " ")
		}
	}
	return ""
}

// TestDashboardColumnsStayAsTheDemoAdvances is issue 36 point 7, columns that come and go: at 120x40 the
// demo's Runs table keeps the same columns while its runs move through their stages. Before, the columns
// after STAGE were laid out beside the stages shown at the time, so when a run reached design-verification
// DONE dropped out, and came back at its next stage; they are laid out beside every stage the runs may
// reach, while STAGE is as wide as the stages shown and WHY takes the rest.
func TestDashboardColumnsStayAsTheDemoAdvances(t *testing.T) {
	t.Parallel()
	d := newTmuxDemo(t)
	exitFile := d.start(t, fmt.Sprintf("%s demo --dir %s --speed 20", buildRunwatch(t), filepath.Join(t.TempDir(), "ws")))
	first := runsHeader(d.waitScreen("the Runs header", func(s string) bool { return runsHeader(s) != "" }))
	if !strings.Contains(first, "CHANGED") || !strings.Contains(first, "WHY") {
		t.Fatalf("at 120x40 the demo's Runs table has no CHANGED or WHY to begin with: %q\n%s", first, d.screen())
	}
	// The widest stage the demo's runs show; each time it is on screen (a run is in it), the columns are the
	// ones the table began with.
	wide := regexp.MustCompile(`[┃│][▶⚠?⊘‖✓✗] .*design-verification`)
	changed := ""
	same := func(s string) bool {
		if h := runsHeader(s); h != "" && h != first && changed == "" {
			changed = h + "\n" + s
		}
		return changed == ""
	}
	seen, deadline := 0, time.Now().Add(90*time.Second)
	for seen < 3 && changed == "" {
		s := d.screen()
		if same(s) && wide.MatchString(s) {
			seen++
			// Until the run leaves the stage, so that the next sighting is another stage's end.
			d.within(30*time.Second, func(s string) bool { return !same(s) || !wide.MatchString(s) })
		}
		if time.Now().After(deadline) {
			t.Fatalf("a run was in design-verification %d times in 90s, want 3:\n%s", seen, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if changed != "" {
		t.Errorf("the Runs columns changed as the demo advanced: %q, then %s", first, changed)
	}
	d.press(keys.ActQuit)
	d.waitExit(exitFile)
}

// TestDashboardReasonsTakeTheWidthInTmux is issue 36 point 7 at the wide end: at 200 and 280 columns the
// demo's reasons take the width there is. Before, WHY stopped at 96 cells, so at 280 the blocked run's reason
// was cut ("failed metrics CB…") beside 65 blank columns.
func TestDashboardReasonsTakeTheWidthInTmux(t *testing.T) {
	t.Parallel()
	for _, w := range []int{200, 280} {
		d, _, exitFile := startDemo(t, w, 60)
		// The blocked run's row, not only the header: the first frames come before every run is read.
		s := d.waitScreen("the blocked run's reason", func(s string) bool {
			return runsHeader(s) != "" && strings.Contains(s, "stage M2 is blocked")
		})
		checked := 0
		for _, l := range strings.Split(s, "\n") {
			if !strings.Contains(l, "stage M2 is blocked at its gate") {
				continue
			}
			checked++
			row := []rune(strings.TrimRight(strings.TrimRight(l, "┃│"), " "))
			// The row runs up to the border: the reason is whole, or cut only where the pane ends.
			if cut := strings.HasSuffix(string(row), "…"); cut && len(row) < w-1 {
				t.Errorf("at %d columns the reason is cut at cell %d of %d:\n%s", w, len(row), w, s)
			}
		}
		if checked == 0 {
			t.Errorf("at %d columns no row shows the blocked run's reason:\n%s", w, s)
		}
		d.press(keys.ActQuit)
		d.waitExit(exitFile)
	}
}
