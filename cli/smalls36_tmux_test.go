package cli

import (
	"regexp"
	"strings"
	"testing"

	"runwatch/ui/keys"
)

// TestConfirmSaysWhatItWritesInTmux (issue 36): the confirmation asks what it will write, the files under
// the run's folder ("Apply this change?" said nothing of where), and its footer offers j/k only when the
// preview has more than the dialog shows.
func TestConfirmSaysWhatItWritesInTmux(t *testing.T) {
	t.Parallel()
	d, _, exitFile := startDemo(t, 200, 60)
	d.selectRun("iso26262")
	d.press(keys.ActUnlock)
	s := d.waitText("[y/N]")
	if !strings.Contains(s, "Remove lock/active.lock and append to run.log? [y/N]") {
		t.Errorf("the unlock's question does not say what it writes:\n%s", s)
	}
	if strings.Contains(s, "more below") || strings.Contains(footerOf(s), "scroll") {
		t.Errorf("at 200x60 the preview fits, yet the footer offers to scroll:\n%s", s)
	}
	d.send("n")
	d.waitScreen("the dialog to close", func(s string) bool { return !strings.Contains(s, "[y/N]") })
	d.press(keys.ActQuit)
	d.waitExit(exitFile)
}

// TestMessageKeepsTheRunsNameInTmux (issue 36): Z on a run with nothing to undo said "the journal … has no
// action on … to undo" at 120 columns: the footer's cut took the run's name, the one word that mattered.
func TestMessageKeepsTheRunsNameInTmux(t *testing.T) {
	t.Parallel()
	d, _, exitFile := startDemo(t, 120, 40)
	d.selectRun("iso26262")
	d.press(keys.ActUndo)
	s := d.waitText("undo refused")
	if !regexp.MustCompile(`iso26262-mining-\d{8}T\d{6}Z`).MatchString(footerOf(s)) {
		t.Errorf("the refusal cuts the run's name:\n%s", footerOf(s))
	}
	d.press(keys.ActQuit)
	d.waitExit(exitFile)
}

// TestCompletedRunShowsItsLastStage (issue 36): a completed jonggrang run's STAGE read "–" while a completed
// resumable run showed the stage it ended at; status and the dashboard show the last stage for both.
func TestCompletedRunShowsItsLastStage(t *testing.T) {
	t.Parallel()
	ws := demoWorkspace(t)
	_, out, _ := runReal(t, []string{"XDG_CONFIG_HOME=" + t.TempDir()}, "", "status", ws.Dir)
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "fix-typo") {
			row = l
		}
	}
	// RUN, STATUS's glyph and word, then STAGE.
	if f := strings.Fields(row); len(f) < 5 || f[2] != "completed" || f[3] == "-" || f[3] == "–" {
		t.Errorf("status: the completed jonggrang run's row %q has no stage:\n%s", row, out)
	}
	// The dashboard's STAGE cell takes the same rule (Run.ShownStage): ui's goldens show it.
}
