// Tests of the footer's messages and keys, and of help marking keys that cannot apply here.

package ui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/overlay"
	"runwatch/ui/text"
)

func footerMessage(m Model) string {
	lines := strings.Split(plain(m), "\n")
	return lines[len(lines)-1]
}

// TestMessagesLeadWithTheReason (issue 24 point 5): a refusal cut in the footer keeps the item it names
// (`✗ step refused: gate not met: … CB_VERIFY_COVERAGE_REPORT`), and an error whose chain starts with a
// path says its reason first and the path last (`✗ pause: yaml: … (…/MANIFEST.yaml)`), at 80 and 110
// columns.
func TestMessagesLeadWithTheReason(t *testing.T) {
	t.Parallel()
	root := resumabletest.Copy(t)
	runDir := resumabletest.Run(root, resumabletest.Mining)
	if err := os.Remove(filepath.Join(runDir, "lock", "active.lock")); err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover([]string{runDir}, 1)
	if err != nil || len(locs) != 1 {
		t.Fatal(err)
	}
	run := state.Load(locs[0], state.NewEnv(0))
	actor := NewActor(action.Options{JournalPath: filepath.Join(t.TempDir(), "j.jsonl")}, func() model.Env { return state.NewEnv(0) })
	for _, w := range []int{80, 110} {
		m := newTestModel(t, w, 30, []model.Run{run}, app.Options{Actor: actor})
		m = send(t, m, press("S"))
		if full := m.app.Msgs.ErrText(); len(full) <= w {
			t.Fatalf("the refusal %q fits %d columns: the check proves nothing", full, w)
		}
		if l := footerMessage(m); !strings.HasPrefix(l, "✗ step refused: ") || !strings.Contains(l, "CB_VERIFY_COVERAGE_REPORT") ||
			!strings.HasSuffix(strings.TrimRight(l, " "), "i reads all") {
			t.Errorf("%d columns: the refusal reads %q", w, l)
		}

		manifest := "/tmp/runwatch-demo-123/reports/app/.jonggrang/features/add-login-form/MANIFEST.yaml"
		m.app.Fail(fmt.Errorf("pause: %s: %w", manifest, errors.New("yaml: line 3: mapping values are not allowed in this context")))
		l := footerMessage(m)
		if !strings.HasPrefix(l, "✗ pause: yaml: line 3: mapping values") || !strings.Contains(l, "MANIFEST.yaml)") {
			t.Errorf("%d columns: the error reads %q", w, l)
		}
		if full := m.app.Msgs.ErrText(); !strings.HasSuffix(full, "("+manifest+")") {
			t.Errorf("the whole message (i) lost the path or has it first: %q", full)
		}
	}
}

// footerKeys is the footer's line of keys (its first line, right of the segments).
func footerKeys(m Model) string {
	lines := strings.Split(plain(m), "\n")
	return lines[len(lines)-2] + " " + lines[len(lines)-1]
}

// TestFooterOffersOnlyKeysThatApply (issue 24 point 5): no `R retry` on a resumable run's failed stage
// (retry is for jonggrang phases), no `space tick` on a done stage's item, `/ search` in the timeline, and
// no `enter open` or `b brief` when the filter lists no run.
func TestFooterOffersOnlyKeysThatApply(t *testing.T) {
	t.Parallel()
	rs := model.Run{ID: "resumable-failed-20261201T000000Z", Kind: model.KindResumable, StatePath: "/e/state.env", Dir: "/e",
		Status: model.StatusBlocked, CurrentStage: "M2", Stages: []model.Stage{
			{Key: "M1", Status: model.StageCompleted, Checklist: []model.ChecklistItem{{Key: "CB_M1_DONE", Done: true}}},
			model.Stage{Key: "M2", Status: model.StageFailed}.WithRare(model.StageRare{Error: "blocked"})}}
	jg := rs
	jg.ID, jg.Kind, jg.StatePath = "jonggrang-failed-mx000000", model.KindJonggrang, "/j/MANIFEST.yaml"
	for _, r := range []model.Run{rs, jg} {
		m := newTestModel(t, 200, 40, []model.Run{r}, app.Options{})
		m = send(t, m, press("tab"))
		if got, want := strings.Contains(footerKeys(m), "R retry"), r.Kind == model.KindJonggrang; got != want {
			t.Errorf("%s, its failed stage focused: R retry offered %v:\n%s", r.Kind, got, footerKeys(m))
		}
	}

	m := newTestModel(t, 200, 40, []model.Run{rs}, app.Options{})
	m = send(t, m, press("tab"))
	m = send(t, m, press("k")) // M1
	m = send(t, m, press("enter"))
	m = send(t, m, press("j")) // its item
	if sel := m.detail.Selection(); sel.Kind != app.RowItem || sel.Stage != "M1" {
		t.Fatalf("the focus is on %+v, not M1's item", sel)
	}
	if ks := footerKeys(m); strings.Contains(ks, "tick") {
		t.Errorf("a done stage's item is focused, and the footer offers tick:\n%s", ks)
	}

	m = newTestModel(t, 200, 40, sampleRuns(), app.Options{})
	for m.app.Focus != app.PaneTimeline {
		m = send(t, m, press("tab"))
	}
	if ks := footerKeys(m); !strings.Contains(ks, "/ search") || strings.Contains(ks, "/ filter") {
		t.Errorf("the timeline's footer:\n%s", ks)
	}

	m = newTestModel(t, 200, 40, sampleRuns(), app.Options{})
	m = send(t, m, press("/"))
	for _, k := range "zzz-nothing" {
		m = send(t, m, press(string(k)))
	}
	m = send(t, m, press("enter"))
	if ks := footerKeys(m); strings.Contains(ks, "enter open") || strings.Contains(ks, "b brief") {
		t.Errorf("no run listed, and the footer offers:\n%s", ks)
	}
}

// TestHelpMarksKeysNotHere (issue 24 point 5): `?` still lists every key, and marks "(not here)" those the
// focused item cannot take, by the same decision as the footer: on a resumable run's failed current stage R
// retry is marked, and U too, the run holding no lock (issue 36 point 6: U was refused when pressed); S is not.
func TestHelpMarksKeysNotHere(t *testing.T) {
	t.Parallel()
	rs := model.Run{ID: "resumable-failed-20261201T000000Z", Kind: model.KindResumable, StatePath: "/e/state.env", Dir: "/e",
		Status: model.StatusBlocked, CurrentStage: "M2", Stages: []model.Stage{
			{Key: "M1", Status: model.StageCompleted},
			model.Stage{Key: "M2", Status: model.StageFailed}.WithRare(model.StageRare{Error: "blocked"})}}
	m := newTestModel(t, 120, 40, []model.Run{rs}, app.Options{})
	m = send(t, m, press("tab"))
	if sel := m.detail.Selection(); sel.Kind != app.RowStage || sel.Stage != "M2" {
		t.Fatalf("the focus is on %+v, not stage M2", sel)
	}
	// The change keys act on the Detail's selection from every pane, so help says the same from the
	// Detail, the timeline and the runs list.
	for _, pane := range []string{"detail", "timeline", "runs"} {
		m = send(t, m, press("?"))
		screen := plain(m)
		// The overlay may set two groups side by side, so a key's mark is what follows its own sentence.
		marked := func(desc string) bool {
			i := strings.Index(screen, desc)
			if i < 0 {
				t.Fatalf("help lacks %q:\n%s", desc, screen)
			}
			return strings.HasPrefix(strings.TrimLeft(screen[i+len(desc):], " "), keys.NotHereMark)
		}
		for _, desc := range []string{"retry failed phase", "clear stale locks"} {
			if !marked(desc) {
				t.Errorf("from the %s: %q is not marked %s on a resumable run without locks:\n%s", pane, desc, keys.NotHereMark, screen)
			}
		}
		for _, desc := range []string{"step run forward"} {
			if marked(desc) {
				t.Errorf("from the %s: %q is marked %s on the run's current stage:\n%s", pane, desc, keys.NotHereMark, screen)
			}
		}
		m = send(t, m, press("esc"))
		m = send(t, m, press("tab"))
	}
}

// Help is wrapped to the pane at every width the README tries, never cut: at 80 columns the install key's
// description and half the legend ended at the border. Every word of every key's description and of the
// legend is there, and no line is wider than the pane.
func TestHelpIsWrappedNotCut(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 80, 24, sampleRuns(), app.Options{})
	for _, size := range [][2]int{{198, 58}, {118, 38}, {78, 22}, {48, 18}} {
		w, h := size[0], size[1]
		content := overlay.NewHelp(m.app, nil).Content(w, h)
		joined := " " + strings.Join(strings.Fields(strings.Join(content, " ")), " ") + " "
		for _, l := range content {
			if text.VisibleWidth(l) > w {
				t.Errorf("%d columns: a help line is %d wide: %q", w, text.VisibleWidth(l), l)
			}
		}
		var want []string
		for _, b := range m.app.Keys.Bindings {
			want = append(want, b.Help)
		}
		want = append(want, overlay.Legend...)
		for _, l := range want {
			for _, word := range strings.Fields(l) {
				if !strings.Contains(joined, " "+word+" ") {
					t.Errorf("%d columns: help lacks %q (of %q)", w, word, l)
				}
			}
		}
	}
}

// TestCutMessageKeepsTheRunsName (issue 36): after Z the footer read "undo refused: the journal … has no
// action on … to undo": the cut took the run's name. The name stays whole at every width; the rest is cut.
func TestCutMessageKeepsTheRunsName(t *testing.T) {
	t.Parallel()
	name := "iso26262-mining-20261207T122214Z"
	msg := "✗ undo refused: the journal …/runwatch/journal.jsonl has no action on " + name + " to undo"
	for w := 40; w <= 120; w++ {
		got := cutMessage(msg, w, name)
		if !strings.Contains(got, name) || text.VisibleWidth(got) > w {
			t.Errorf("%d columns: %q (%d wide) loses the run's name", w, got, text.VisibleWidth(got))
		}
	}
	if got := cutMessage(msg, 80, name); !strings.HasPrefix(got, "✗ undo refused: ") {
		t.Errorf("80 columns: %q loses what failed", got)
	}
}
