// Tests of the confirmation dialog as drawn over the panes.

package ui

import (
	"runwatch/ui/app"
	"runwatch/ui/text"
	"strings"
	"testing"
)

// sentencePlan is a change whose summary and warning are longer than any dialog is wide, over a two-line
// diff.
type sentencePlan struct{ recordedPlan }

const (
	longSummary = "pause run irm-id-full-backfill-20261201T051800Z at stage S2 (verify-green) by writing " +
		"status paused to state.env, so its writer stops at its next check instead of starting the next stage"
	longWarning = "its writer's next completePhase writes status running over this pause: the pause holds " +
		"only until the writer finishes its current phase"
)

func (sentencePlan) Summary() string { return longSummary }
func (sentencePlan) Preview() string {
	return "warning: " + longWarning + "\n--- a/state.env\n+++ b/state.env\n@@ -1 +1 @@\n-STATUS=running\n+STATUS=paused\n"
}

type sentenceActor struct{ recordingActor }

func (a *sentenceActor) Plan(req app.ActionRequest) (app.Planned, error) {
	return sentencePlan{recordedPlan{a: &a.recordingActor, req: req}}, nil
}

// TestConfirmShowsTheWholeSentence (issue 24 point 4): at 80x24 and 120x40 the dialog shows the whole
// sentence being approved, wrapped, and the whole warning before the diff; under a short diff it has no run
// of blank rows.
func TestConfirmShowsTheWholeSentence(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {200, 60}} {
		m := newTestModel(t, sz[0], sz[1], sampleRuns(), app.Options{Actor: &sentenceActor{}})
		m = send(t, m, press("U"))
		if m.confirmDialog() == nil {
			t.Fatalf("%dx%d: U did not ask; footer %q", sz[0], sz[1], m.app.Msgs.ErrText())
		}
		var inner []string
		for _, l := range strings.Split(text.Stripped(m.confirmDialog().View()), "\n") {
			l = strings.TrimSpace(strings.Trim(strings.TrimSpace(l), "┃┏┗━"))
			inner = append(inner, l)
		}
		// Wrapping may break a line after a hyphen: compare without the spaces.
		squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
		flat := squeeze(strings.Join(inner, " "))
		if !strings.Contains(flat, squeeze(longSummary)) {
			t.Errorf("%dx%d: the summary is not whole:\n%s", sz[0], sz[1], strings.Join(inner, "\n"))
		}
		w, d := strings.Index(flat, squeeze(longWarning)), strings.Index(flat, "-STATUS=running")
		if w < 0 || d < 0 || w > d {
			t.Errorf("%dx%d: the warning (at %d) is not whole before the diff (at %d):\n%s", sz[0], sz[1], w, d, strings.Join(inner, "\n"))
		}
		blank := 0
		for _, l := range inner {
			if l == "" {
				blank++
				if blank > 1 {
					t.Errorf("%dx%d: blank rows in a row:\n%s", sz[0], sz[1], strings.Join(inner, "\n"))
					break
				}
			} else {
				blank = 0
			}
		}
	}
}
