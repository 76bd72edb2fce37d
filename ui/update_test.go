// Tests of the dashboard's keys and messages: navigation, attention order, panes, filter, timeline.

package ui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/state/action"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/timeline"
)

// logLines is a resumable run.log with continuation lines, a blocked stage and a failure.
var logLines = []string{
	"[2026-11-30T11:00:00Z] run_start run_id=irm",
	"[2026-11-30T11:01:00Z] stage_start stage=S1",
	"  detail line one",
	"  detail line two",
	"[2026-11-30T11:10:00Z] stage_complete stage=S1",
	"[2026-11-30T11:11:00Z] stage_start stage=S2",
	"[2026-11-30T11:20:00Z] stage_blocked stage=S2 reason=tests",
	"[2026-11-30T11:30:00Z] verify_failed stage=S2 \x1b[31mred\x1b[0m",
	"[2026-11-30T11:40:00Z] note stage=S2 all good",
}

func memOpener(lines []string) app.OpenLogFunc {
	return func(string) (app.LogSource, error) {
		return timeline.NewMemSource(append([]string(nil), lines...)), nil
	}
}

// resumableOnly returns the sample resumable run with a log, so the timeline opens it.
func resumableRun() model.Run {
	r := sampleRuns()[0]
	r.Log = &model.LogRef{Path: "/r/irm-backfill-20261103T120000Z/run.log"}
	return r
}

func TestRunsNavigationKeys(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 240, 40, sampleRuns(), app.Options{})
	if m.layoutKind() != layoutWide {
		t.Fatal("the runs are not beside Detail: the half-page steps below assume a pane of the body's height")
	}
	order := listed(t, m)
	if len(order) != 4 || idOf(m) != order[0] {
		t.Fatalf("initial selection %q of %v", idOf(m), order)
	}
	steps := []struct {
		key  string
		want int
	}{{"j", 1}, {"down", 2}, {"k", 1}, {"up", 0}, {"k", 0}, {"G", 3}, {"g", 0}, {"ctrl+d", 3}, {"ctrl+u", 0}, {"end", 3}, {"home", 0}}
	for _, s := range steps {
		k := press(s.key)
		if s.key == "end" {
			k = tea.KeyPressMsg{Code: tea.KeyEnd}
		}
		if s.key == "home" {
			k = tea.KeyPressMsg{Code: tea.KeyHome}
		}
		m = send(t, m, k)
		if m.list.Cursor() != s.want || idOf(m) != order[s.want] {
			t.Fatalf("after %s: cursor %d selected %q, want %d", s.key, m.list.Cursor(), idOf(m), s.want)
		}
	}
}

func TestAttentionFirstOrder(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 140, 40, sampleRuns(), app.Options{})
	status := map[string]model.RunStatus{}
	for _, r := range m.app.Runs {
		status[r.ID] = r.Status
	}
	var got []model.RunStatus
	for _, id := range listed(t, m) {
		got = append(got, status[id])
	}
	want := []model.RunStatus{model.StatusStalled, model.StatusFailed, model.StatusPaused, model.StatusCompleted}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestPaneKeys(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 140, 40, sampleRuns(), app.Options{})
	for _, s := range []struct {
		key  string
		want app.Pane
	}{{"tab", app.PaneDetail}, {"tab", app.PaneTimeline}, {"tab", app.PaneRuns}, {"shift+tab", app.PaneTimeline}, {"esc", app.PaneRuns}, {"enter", app.PaneDetail}, {"esc", app.PaneRuns}} {
		m = send(t, m, press(s.key))
		if m.app.Focus != s.want {
			t.Fatalf("after %s focus %v, want %v", s.key, m.app.Focus, s.want)
		}
	}
}

func TestFilterKeys(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 140, 40, sampleRuns(), app.Options{})
	m = send(t, m, press("/"))
	if !m.list.Capturing() {
		t.Fatal("/ did not open the filter")
	}
	for _, k := range "pay" {
		m = send(t, m, press(string(k)))
	}
	if got := listed(t, m); len(got) != 1 || got[0] != "pay-flow" {
		t.Fatalf("filter pay: %v", got)
	}
	m = send(t, m, press("backspace"))
	if runsFilter(t, m) != "pa" {
		t.Fatalf("backspace: filter %q", runsFilter(t, m))
	}
	m = send(t, m, press("enter"))
	if m.list.Capturing() || runsFilter(t, m) != "pa" {
		t.Fatalf("enter should keep the filter: editing %v filter %q", m.list.Capturing(), runsFilter(t, m))
	}
	if !strings.Contains(plain(m), "/pa") {
		t.Error("filter not shown in the runs title")
	}
	m = send(t, m, press("esc"))
	if runsFilter(t, m) != "" || len(listed(t, m)) != 4 {
		t.Fatalf("esc should clear the filter: %q %v", runsFilter(t, m), listed(t, m))
	}
	m = send(t, m, press("/"))
	m = send(t, m, press("z"))
	m = send(t, m, press("esc"))
	if runsFilter(t, m) != "" || m.list.Capturing() {
		t.Fatal("esc in the filter input should cancel it")
	}
}

func TestHelpQuitKeys(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 140, 40, sampleRuns(), app.Options{})
	m = send(t, m, press("?"))
	if !m.helpOpen() || !strings.Contains(plain(m), "tick / untick checklist item") {
		t.Fatal("? did not show help generated from the keymap")
	}
	m = send(t, m, press("j"))
	m = send(t, m, press("?"))
	if m.helpOpen() {
		t.Fatal("? did not close help")
	}
	for _, k := range []string{"q", "ctrl+c"} {
		_, cmd := m.Update(press(k))
		if cmd == nil {
			t.Fatalf("%s returned no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatalf("%s did not quit", k)
		}
	}
}

func TestTimelineKeys(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 140, 40, []model.Run{resumableRun()}, app.Options{OpenLog: memOpener(logLines)})
	if m.tl.Len() != len(logLines) {
		t.Fatalf("log not opened: %+v", m.tl)
	}
	if !tlFollows(t, m) || tlCursor(t, m) != len(logLines)-1 {
		t.Fatalf("timeline should start following at the end, cursor %d", tlCursor(t, m))
	}
	view := plain(m)
	if !strings.Contains(view, "│   detail line one") {
		t.Errorf("continuation lines not grouped:\n%s", view)
	}
	if strings.Contains(m.View().Content, "\x1b[31mred") {
		t.Error("escape sequence from the log reached the frame")
	}
	m = send(t, m, press("tab"))
	m = send(t, m, press("tab"))
	if m.app.Focus != app.PaneTimeline {
		t.Fatal("focus")
	}
	m = send(t, m, press("k"))
	if tlFollows(t, m) {
		t.Fatal("scrolling up must pause follow")
	}
	m = send(t, m, press("G"))
	if !tlFollows(t, m) {
		t.Fatal("G must resume follow")
	}
	m = send(t, m, press("f"))
	if tlFollows(t, m) {
		t.Fatal("f must toggle follow off")
	}
	m = send(t, m, press("f"))
	m = send(t, m, press("g"))
	if tlCursor(t, m) != 0 || tlFollows(t, m) {
		t.Fatalf("g: cursor %d follow %v", tlCursor(t, m), tlFollows(t, m))
	}
	m = send(t, m, press("e"))
	if tlCursor(t, m) != 6 {
		t.Fatalf("e: cursor %d, want the stage_blocked line 6", tlCursor(t, m))
	}
	m = send(t, m, press("e"))
	if tlCursor(t, m) != 7 {
		t.Fatalf("e again: cursor %d, want the verify_failed line 7", tlCursor(t, m))
	}
	m = send(t, m, press("E"))
	if tlCursor(t, m) != 6 {
		t.Fatalf("E: cursor %d, want 6", tlCursor(t, m))
	}
	m = send(t, m, press("g"))
	m = send(t, m, press("/"))
	if !m.tl.Capturing() {
		t.Fatal("/ in the timeline should search")
	}
	for _, k := range "stage_start" {
		m = send(t, m, press(string(k)))
	}
	m = send(t, m, press("enter"))
	if tlCursor(t, m) != 1 {
		t.Fatalf("search: cursor %d, want 1", tlCursor(t, m))
	}
	m = send(t, m, press("n"))
	if tlCursor(t, m) != 5 {
		t.Fatalf("n: cursor %d, want 5", tlCursor(t, m))
	}
	m = send(t, m, press("N"))
	if tlCursor(t, m) != 1 {
		t.Fatalf("N: cursor %d, want 1", tlCursor(t, m))
	}
	before := plain(m)
	m = send(t, m, press("t"))
	if plain(m) == before || !strings.Contains(plain(m), "11:01:00") {
		t.Fatal("t did not switch to absolute time")
	}
	m = send(t, m, press("ctrl+d"))
	if tlCursor(t, m) != len(logLines)-1 || !tlFollows(t, m) {
		t.Fatalf("ctrl+d past the end should land on the last line and follow: cursor %d", tlCursor(t, m))
	}
	m = send(t, m, press("ctrl+u"))
	if want := max(0, len(logLines)-1-max(1, m.tl.InnerH()/2)); tlCursor(t, m) != want || tlFollows(t, m) {
		t.Fatalf("ctrl+u: cursor %d, want %d (half a page up)", tlCursor(t, m), want)
	}
}

func TestTimelineFollowsAppends(t *testing.T) {
	t.Parallel()
	lines := append([]string(nil), logLines...)
	src := timeline.NewMemSource(lines)
	m := newTestModel(t, 140, 40, []model.Run{resumableRun()}, app.Options{OpenLog: func(string) (app.LogSource, error) { return src, nil }})
	src.Add("[2026-11-30T11:50:00Z] stage_start stage=S3")
	m = send(t, m, app.BatchMsg{Appended: []app.LogAppend{{Path: resumableRun().Log.Path}}, At: testNow, Health: app.Health{Mode: "inotify"}})
	if tlCursor(t, m) != src.Len()-1 || !strings.Contains(plain(m), "stage=S3") {
		t.Fatalf("follow did not show the appended line; cursor %d", tlCursor(t, m))
	}
	// Paused (scrolled up): new lines arrive but the view stays put.
	m.app.Focus = app.PaneTimeline
	m = send(t, m, press("g"))
	src.Add("[2026-11-30T11:55:00Z] stage_start stage=S4")
	m = send(t, m, app.BatchMsg{Appended: []app.LogAppend{{Path: resumableRun().Log.Path}}, At: testNow})
	if tlCursor(t, m) != 0 || tlFollows(t, m) {
		t.Fatalf("paused timeline moved: cursor %d", tlCursor(t, m))
	}
}

// Inside tmux, y copies through tmux (load-buffer -w) as well as OSC 52, and the note says what tmux
// answered: a copy that did not reach the clipboard is never reported as done.
func TestCopyKey(t *testing.T) {
	t.Parallel()
	var got []string
	var fail error
	copyFn := func(s string) error { got = append(got, s); return fail }
	m := newTestModel(t, 140, 40, sampleRuns(), app.Options{InTmux: true, Copy: copyFn})
	run, _ := m.app.SelectedRun()
	m = send(t, m, press("y"))
	if len(got) != 1 || got[0] != run.Dir {
		t.Fatalf("y copied %q, want the run folder %q", got, run.Dir)
	}
	if !strings.Contains(plain(m), "copied") {
		t.Fatalf("no copied note:\n%s", plain(m))
	}
	_, cmd := m.Update(press("y"))
	batch, ok := cmd().(tea.BatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("y should send OSC 52 and copy through tmux, got %T", cmd())
	}
	fail = errors.New("no server running")
	m = send(t, m, press("y"))
	if out := plain(m); !strings.Contains(out, "did not reach the clipboard") || !strings.Contains(out, "no server running") {
		t.Fatalf("a failed tmux copy must say so:\n%s", out)
	}
}

func TestDetailKeysAndTick(t *testing.T) {
	t.Parallel()
	actor := &recordingActor{}
	runList := sampleRuns()
	m := newTestModel(t, 140, 40, runList, app.Options{Actor: actor})
	// Select the resumable run (third in attention order) and focus the detail pane.
	m = send(t, m, press("j"))
	m = send(t, m, press("j"))
	m = send(t, m, press("enter"))
	run, _ := m.app.SelectedRun()
	if run.Kind != model.KindResumable {
		t.Fatalf("selected %s", run.ID)
	}
	if sel := m.detail.SelectionOf(run); sel.Kind != app.RowStage || sel.Stage != "S2" {
		t.Fatalf("default detail selection %+v, want the current stage S2", sel)
	}
	m = send(t, m, press("j"))
	sel := m.detail.SelectionOf(run)
	if sel.Kind != app.RowItem || sel.Key != "CB_S2_VERIFY_GREEN" {
		t.Fatalf("j in detail: %+v", sel)
	}
	m = send(t, m, press("space"))
	if m.confirmDialog() == nil {
		t.Fatalf("space did not open a confirmation; err %q", m.app.Msgs.ErrText())
	}
	if got := actor.last; got.Act != keys.ActTick || got.Verb != action.ActUncheck || got.Word != "CB_S2_VERIFY_GREEN" {
		t.Fatalf("tick request %+v, want untick of CB_S2_VERIFY_GREEN", got)
	}
	if !strings.Contains(plain(m), "+CB_S2_VERIFY_GREEN=0") {
		t.Errorf("dialog does not show the preview diff:\n%s", plain(m))
	}
	m = send(t, m, press("y"))
	if m.confirmDialog() != nil || actor.applied != 1 || !strings.Contains(plain(m), "applied tick") {
		t.Fatalf("y did not apply: applied=%d note=%q err=%q", actor.applied, m.app.Msgs.NoteText(), m.app.Msgs.ErrText())
	}
	m = send(t, m, press("k"))
	m = send(t, m, press("k"))
	if sel := m.detail.SelectionOf(run); sel.Kind != app.RowStage || sel.Stage != "S1" {
		t.Fatalf("k k: %+v", sel)
	}
	m = send(t, m, press("G"))
	m = send(t, m, press("g"))
	m = send(t, m, press("ctrl+d"))
	m = send(t, m, press("ctrl+u"))
	if sel := m.detail.SelectionOf(run); sel.Stage != "S1" {
		t.Fatalf("g: %+v", sel)
	}
	m = send(t, m, press("space"))
	if m.confirmDialog() != nil || !strings.Contains(m.app.Msgs.ErrText(), "checklist item") {
		t.Fatalf("space on a stage should explain, err %q", m.app.Msgs.ErrText())
	}
}

func TestMutatingKeysAskFirst(t *testing.T) {
	t.Parallel()
	for _, k := range []struct {
		key, action string
	}{{"U", keys.ActUnlock}, {"S", keys.ActStep}, {"R", keys.ActRetry}, {"P", keys.ActPause}, {"Z", keys.ActUndo}} {
		t.Run(k.key, func(t *testing.T) {
			actor := &recordingActor{}
			runs := sampleRuns()
			if k.key == "S" {
				// Step completes the current phase of a paused jonggrang run (not of a running one).
				for i := range runs {
					if runs[i].Kind == model.KindJonggrang {
						runs[i].RawStatus, runs[i].Status = "paused", model.StatusPaused
					}
				}
			}
			m := newTestModel(t, 140, 40, runs, app.Options{Actor: actor})
			if k.key == "R" {
				m = send(t, m, press("j")) // the failed run
			}
			m = send(t, m, press(k.key))
			if m.confirmDialog() == nil || actor.last.Act != k.action {
				t.Fatalf("%s: confirm %v request %+v err %q", k.key, m.confirmDialog() != nil, actor.last, m.app.Msgs.ErrText())
			}
			m = send(t, m, press("x"))
			if m.confirmDialog() == nil || actor.applied != 0 {
				t.Fatal("an unrelated key must neither apply nor close")
			}
			m = send(t, m, press("esc"))
			if m.confirmDialog() != nil || actor.applied != 0 {
				t.Fatal("esc must cancel without applying")
			}
		})
	}
}

func TestTypedConfirmationForUnknownLock(t *testing.T) {
	t.Parallel()
	actor := &recordingActor{typed: "lead"}
	m := newTestModel(t, 140, 40, sampleRuns(), app.Options{Actor: actor})
	m = send(t, m, press("j")) // pay-flow: lock of unknown liveness
	// Unnamed, an unknown lock is not cleared (the planner clears only stale ones): U is refused at once,
	// by the rule help and the footer follow (issue 36 point 6). On the lock's own row in Detail it asks.
	m = send(t, m, press("U"))
	if m.confirmDialog() != nil || !strings.Contains(m.app.Msgs.ErrText(), "no stale lock") {
		t.Fatalf("U on a run whose only lock is unknown, from the runs: dialog %v, message %q", m.confirmDialog() != nil, m.app.Msgs.ErrText())
	}
	m = send(t, m, press("tab"))
	for i := 0; m.detail.Selection().Kind != app.RowLock; i++ {
		if i > 40 {
			t.Fatal("no lock row in Detail")
		}
		m = send(t, m, press("j"))
	}
	m = send(t, m, press("U"))
	if m.confirmDialog() == nil {
		t.Fatal("no dialog")
	}
	m = send(t, m, press("y"))
	if actor.applied != 0 || m.confirmDialog() == nil {
		t.Fatal("y must not confirm a typed confirmation")
	}
	m = send(t, m, press("enter"))
	if actor.applied != 0 || !strings.Contains(m.app.Msgs.ErrText(), "type") {
		t.Fatal("enter without the word must refuse")
	}
	m = send(t, m, press("backspace"))
	for _, r := range "lead" {
		m = send(t, m, press(string(r)))
	}
	m = send(t, m, press("enter"))
	if actor.applied != 1 {
		t.Fatalf("typed word did not apply; typed state %+v", m.confirmDialog())
	}
}

func TestActionErrorsGoToFooter(t *testing.T) {
	t.Parallel()
	actor := &recordingActor{planErr: errors.New("pause: CB_S2_NO_EVIL is 0")}
	m := newTestModel(t, 140, 40, sampleRuns(), app.Options{Actor: actor})
	m = send(t, m, press("P"))
	if m.confirmDialog() != nil || !strings.Contains(plain(m), "✗ pause: CB_S2_NO_EVIL is 0") {
		t.Fatalf("refusal not in footer:\n%s", plain(m))
	}
}

func TestReadOnlyHasNoMutatingKeys(t *testing.T) {
	t.Parallel()
	actor := &recordingActor{}
	m := newTestModel(t, 140, 40, sampleRuns(), app.Options{Actor: actor, ReadOnly: true})
	for _, k := range []string{"U", "S", "space", "R", "P", "Z"} {
		m = send(t, m, press(k))
	}
	if actor.last.Act != "" || m.confirmDialog() != nil {
		t.Fatalf("read-only reached the actor: %+v", actor.last)
	}
	if !strings.Contains(plain(m), "READ-ONLY") {
		t.Error("no read-only badge")
	}
}

func TestBatchUpdatesRunsAndFreshness(t *testing.T) {
	t.Parallel()
	// Five minutes after the last change, a batch brings the footer's age back under a minute.
	now := testNow
	m := newTestModel(t, 140, 40, sampleRuns(), app.Options{Now: func() time.Time { return now }})
	now = now.Add(5 * time.Minute)
	if !strings.Contains(plain(m), "updated 5m ago") {
		t.Fatalf("footer freshness:\n%s", plain(m))
	}
	changed := sampleRuns()[1]
	changed.Status = model.StatusRunning
	changed.UpdatedAt = testNow
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{changed}), Removed: []string{"/q/MANIFEST.yaml"}, At: now,
		Health: app.Health{Mode: "polling 2s", Err: "inotify watch limit reached"}})
	out := plain(m)
	if _, ok := m.app.Runs["/q/MANIFEST.yaml"]; ok {
		t.Error("removed run still present")
	}
	for _, want := range []string{"▶ old-done", "updated <1m ago", "polling 2s", "✗ watcher: inotify watch limit reached"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

func TestTooSmall(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 30, 8, sampleRuns(), app.Options{})
	if !strings.Contains(plain(m), "terminal too small") {
		t.Fatal(plain(m))
	}
}

func TestBackgroundColorPicksTheme(t *testing.T) {
	t.Parallel()
	m := New(app.Options{Theme: "auto", Now: func() time.Time { return testNow }})
	if m.Init() == nil {
		t.Fatal("auto theme should ask for the background colour")
	}
	nm, _ := m.Update(tea.BackgroundColorMsg{})
	if nm.(Model).app.Theme.Name != "auto" {
		t.Fatal("theme")
	}
}

// recordingActor plans a fixed one-line change and records what was asked, so dialog flows can be tested
// without files; the real planner is exercised by package main's tests.
type recordingActor struct {
	last    app.ActionRequest
	typed   string
	planErr error
	applied int
}

func (a *recordingActor) Plan(req app.ActionRequest) (app.Planned, error) {
	a.last = req
	if a.planErr != nil {
		return nil, a.planErr
	}
	return recordedPlan{a: a, req: req}, nil
}

type recordedPlan struct {
	a   *recordingActor
	req app.ActionRequest
}

func (p recordedPlan) Summary() string { return p.req.Act + " " + p.req.Run.ID }
func (p recordedPlan) Preview() string {
	return "--- a/checklist.state.env\n+++ b/checklist.state.env\n@@ -1 +1 @@\n-CB_S2_VERIFY_GREEN=1\n+CB_S2_VERIFY_GREEN=0\n"
}
func (p recordedPlan) Question() string          { return "Write this change to checklist.state.env?" }
func (p recordedPlan) TypedConfirmation() string { return p.a.typed }
func (p recordedPlan) Apply(typed string) (string, error) {
	if typed != p.a.typed {
		return "", fmt.Errorf("typed %q, want %q", typed, p.a.typed)
	}
	p.a.applied++
	return "applied " + p.req.Act, nil
}

func TestBriefKey(t *testing.T) {
	t.Parallel()
	runList := loadFixtures(t)
	m := newTestModel(t, 140, 40, runList, app.Options{Now: fixtureClock(), Env: fixtureEnv})
	m = send(t, m, press("b"))
	if m.pagerOverlay() == nil || !strings.Contains(plain(m), "Resume brief") {
		t.Fatalf("b did not open the brief:\n%s", plain(m))
	}
	md := m.pagerOverlay().Text
	if md == "" {
		t.Fatal("empty brief")
	}
	m = send(t, m, press("j"))
	_, cmd := m.Update(press("y"))
	if cmd == nil {
		t.Fatal("y in the brief copies nothing")
	}
	m = send(t, m, press("esc"))
	if m.pagerOverlay() != nil {
		t.Fatal("esc did not close the brief")
	}
}

func TestLaunchKey(t *testing.T) {
	t.Parallel()
	outside := envOf("TMUX", "") // the launch confirms a foreground command, not a tmux window
	runList := loadFixtures(t)
	m := newTestModel(t, 140, 40, runList, app.Options{Now: fixtureClock(), Env: fixtureEnv, Getenv: outside})
	m = send(t, m, press("X"))
	if m.pagerOverlay() == nil || !strings.Contains(m.pagerOverlay().Text, "resume_command:") {
		t.Fatalf("X without a template should explain how to set one; brief %+v err %q", m.pagerOverlay(), m.app.Msgs.ErrText())
	}
	if out := plain(m); !strings.Contains(out, "No resume command configured") || strings.Contains(out, "Resume brief") {
		t.Fatalf("X without a template must say so in its own box, not a brief:\n%s", out)
	}
	if m = send(t, m, press("esc")); m.pagerOverlay() != nil {
		t.Fatal("esc did not close the box")
	}

	m = newTestModel(t, 140, 40, runList, app.Options{Now: fixtureClock(), Env: fixtureEnv, Getenv: outside,
		ResumeCommand: map[string]string{"jonggrang": "echo resume {{.ID}}", "resumable": "echo resume {{.ID}}"}})
	run, _ := m.app.SelectedRun()
	m = send(t, m, press("X"))
	if m.confirmDialog() == nil {
		t.Fatalf("X did not ask first; err %q", m.app.Msgs.ErrText())
	}
	if !strings.Contains(plain(m), "echo resume "+run.ID) || !strings.Contains(plain(m), "dashboard is suspended") {
		t.Fatalf("confirmation does not show the exact command:\n%s", plain(m))
	}
	if strings.Contains(plain(m), "Apply this change?") || !strings.Contains(plain(m), "Run the resume command here") {
		t.Fatalf("the confirmation does not ask what it starts:\n%s", plain(m))
	}
	_, cmd := m.Update(press("y"))
	if cmd == nil {
		t.Fatal("y returned no command to run the launch")
	}
}

func TestWatcherStoppedIsShown(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 140, 40, sampleRuns(), app.Options{})
	m = send(t, m, app.WatcherStoppedMsg{})
	out := plain(m)
	if !strings.Contains(out, "✗ inotify error") || !strings.Contains(out, "watcher stopped") {
		t.Fatalf("footer still claims live data:\n%s", out)
	}
}

func TestDetailScrollsPastLastFocusableRow(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 90, 30, sampleRuns(), app.Options{})
	m = send(t, m, press("j")) // pay-flow: its problems-free detail ends with a lock
	m = send(t, m, press("j")) // irm: its detail ends with a resume hint below every focusable row
	m = send(t, m, press("enter"))
	for range 30 {
		m = send(t, m, press("j"))
	}
	if !strings.Contains(plain(m), "rerun S2 verification") {
		t.Fatalf("the resume hint below the last focusable row is unreachable:\n%s", plain(m))
	}
	for range 60 {
		m = send(t, m, press("k"))
	}
	if top := detailScrolled(t, m); top != 0 {
		t.Fatalf("k back up leaves Detail scrolled %d rows down", top)
	}
}

// An entry older than 99 days keeps the time column's width ("274d", not "274d23h" pushing its message
// one cell right of the others).
func TestTimelineOldEntriesKeepTheTimeColumn(t *testing.T) {
	t.Parallel()
	old := testNow.Add(-(274*24 + 23) * time.Hour).Format(time.RFC3339)
	lines := []string{"[" + old + "] ancient_event a=1", "[2026-11-30T11:00:00Z] recent_event b=2"}
	m := newTestModel(t, 140, 40, []model.Run{resumableRun()}, app.Options{OpenLog: memOpener(lines)})
	view := plain(m)
	col := func(word string) int {
		for _, l := range strings.Split(view, "\n") {
			if i := strings.Index(l, word); i >= 0 {
				return len([]rune(l[:i]))
			}
		}
		t.Fatalf("%s not on screen:\n%s", word, view)
		return -1
	}
	if !strings.Contains(view, "274d") || strings.Contains(view, "274d23h") {
		t.Errorf("the old entry's age is not shown as 274d:\n%s", view)
	}
	if a, b := col("ancient_event"), col("recent_event"); a != b {
		t.Errorf("messages start at columns %d and %d: the time column moved", a, b)
	}
}
