// Tests and benchmarks of the runs table: changes shown, the STAGE column, frames with 1,200 runs.

package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"

	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/text"
)

// runsRow is the runs pane's line for the run id, in plain text ("" if not shown).
func runsRow(m Model, id string) string {
	for _, l := range strings.Split(text.Stripped(m.list.View()), "\n") {
		if strings.Contains(l, id) {
			return l
		}
	}
	return ""
}

// TestRunsTableShowsEachChange: the table keeps each run's cells between frames; a run that changes, goes
// or comes back with a new snapshot is drawn from its new state, and the CHANGED age moves with the clock
// although the run does not change.
func TestRunsTableShowsEachChange(t *testing.T) {
	t.Parallel()
	now := testNow
	runList := sampleRuns()
	m := newTestModel(t, 200, 40, runList, app.Options{Now: func() time.Time { return now }})
	rs := runList[0]
	before := runsRow(m, rs.ID)
	if !strings.Contains(before, "paused") || !strings.Contains(before, "S2") || !strings.Contains(before, "1/3") {
		t.Fatalf("the first frame does not show %s as read:\n%s", rs.ID, before)
	}

	changed := rs
	changed.Status, changed.CurrentStage = model.StatusRunning, "S3"
	changed.Progress = model.Progress{Done: 2, Total: 3}
	changed.Stages = append([]model.Stage(nil), rs.Stages...)
	changed.Stages[1].Status = model.StageCompleted
	changed.Locks = []model.Lock{{Path: "/r/lock", Holder: "me", PID: 1, Verdict: model.VerdictLive}}
	changed.Attention = model.Attention{}
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{changed}), At: now, Health: app.Health{Mode: "inotify"}})
	after := runsRow(m, rs.ID)
	for _, want := range []string{"running", "S3", "2/3", "live"} {
		if !strings.Contains(after, want) {
			t.Errorf("after the change the row lacks %q (a stale cached row?):\n%s", want, after)
		}
	}
	if strings.Contains(after, "paused") || strings.Contains(after, "1/3") {
		t.Errorf("the row still shows the run before its change:\n%s", after)
	}

	done := runList[1]
	was := model.HumanDuration(now.Sub(done.UpdatedAt))
	if !strings.Contains(runsRow(m, done.ID), was) {
		t.Fatalf("%s's CHANGED is not %s:\n%s", done.ID, was, runsRow(m, done.ID))
	}
	now = now.Add(3 * time.Hour)
	m = send(t, m, app.TickMsg(now))
	if want := model.HumanDuration(now.Sub(done.UpdatedAt)); !strings.Contains(runsRow(m, done.ID), want) {
		t.Errorf("three hours later %s's CHANGED is not %s:\n%s", done.ID, want, runsRow(m, done.ID))
	}

	m = send(t, m, app.BatchMsg{Removed: []string{rs.Key()}, At: now, Health: app.Health{Mode: "inotify"}})
	if row := runsRow(m, rs.ID); row != "" {
		t.Errorf("a removed run is still listed:\n%s", row)
	}

	renamed := runList[2]
	renamed.Status, renamed.Attention = model.StatusCompleted, model.Attention{}
	m = send(t, m, app.SnapshotMsg{Runs: []model.Run{renamed}, Health: app.Health{Mode: "inotify"}, At: now})
	if row := runsRow(m, renamed.ID); !strings.Contains(row, " done ") {
		t.Errorf("after a new snapshot the row is not the snapshot's:\n%s", row)
	}
}

// BenchmarkFrame1200Runs: one frame of the wide layout with 1,200 runs whose cells are cached (a quiet
// dashboard, or the frames between batches while runs load).
func BenchmarkFrame1200Runs(b *testing.B) {
	m := newTestModel(b, 200, 60, manyRuns(1200), app.Options{Theme: "dark"})
	_ = m.View()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkFrame1200RunsBatch: a batch that changes 20 of 1,200 runs and the frame after it, as while the
// list loads.
func BenchmarkFrame1200RunsBatch(b *testing.B) {
	runList := manyRuns(1200)
	m := newTestModel(b, 200, 60, runList, app.Options{Theme: "dark"})
	changed := model.RunPointers(runList[:20])
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		nm, _ := m.Update(app.BatchMsg{Changed: changed, At: testNow})
		m = nm.(Model)
		_ = m.View()
	}
}

// TestUnreachableHostIsMarked: a run whose host cannot be reached carries ⚠ beside its host (its row is as
// last seen) and the footer says the host is reconnecting, with a glyph every terminal font has (↻ drew as
// a box in common monospace fonts).
func TestUnreachableHostIsMarked(t *testing.T) {
	t.Parallel()
	runList := sampleRuns()
	since := testNow.Add(-time.Minute)
	gone := runList[0]
	gone.Remote = &model.RemoteRef{Host: "gpu2", Root: "ssh://gpu2/r", StaleSince: &since}
	here := runList[2]
	here.Remote = &model.RemoteRef{Host: "build1", Root: "ssh://build1/p"}
	m := newTestModel(t, 200, 40, nil, app.Options{})
	retry := testNow.Add(4 * time.Second)
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{gone, here}), At: testNow, Health: app.Health{Mode: "inotify"},
		Hosts: []model.HostHealth{{Host: "gpu2", State: model.HostReconnecting, RetryAt: &retry}, {Host: "build1", State: model.HostLive}}})
	if row := runsRow(m, gone.ID); !strings.Contains(row, "gpu2 ⚠") {
		t.Errorf("the unreachable host's run is not marked in HOST:\n%s", row)
	}
	if row := runsRow(m, here.ID); !strings.Contains(row, "build1") || strings.Contains(row, "build1 ⚠") {
		t.Errorf("the reachable host's run:\n%s", row)
	}
	if frame := plain(m); !strings.Contains(frame, "⚠ gpu2 reconnecting in <1m") {
		t.Errorf("the footer does not say gpu2 is reconnecting:\n%s", frame)
	}
}

// TestDemoSphinxRunNeedsYou: the demo's sphinx run ends its log in stage_blocked (a check failed, the writer
// waits for a person), so every surface says it is blocked and needs you: its status, its attention, the
// header's count and Detail's first line. (One session saw it shown as "Nothing to do: paused".)
func TestDemoSphinxRunNeedsYou(t *testing.T) {
	t.Parallel()
	runList, now, env := loadDemoWorkspace(t)
	var sphinx model.Run
	for _, r := range runList {
		if strings.HasPrefix(r.ID, "sphinx-traceability-migration-") {
			sphinx = r
		}
	}
	log, err := os.ReadFile(filepath.Join(sphinx.Dir, "run.log"))
	if err != nil || !strings.Contains(string(log), "stage_blocked stage=M2") {
		t.Fatalf("the demo's sphinx run no longer blocks at M2 (%v):\n%s", err, log)
	}
	j := model.Judge(&sphinx)
	if sphinx.Status != model.StatusBlocked || !j.NeedsYou || j.Code != model.AttentionStageBlocked {
		t.Fatalf("sphinx: status %s, attention %+v; want blocked and needing you for stage-blocked", sphinx.Status, j)
	}
	m := newTestModel(t, 120, 40, runList, app.Options{Now: now, Env: env})
	m = send(t, m, press("/"))
	for _, k := range "sphinx" {
		m = send(t, m, press(string(k)))
	}
	m = send(t, m, press("enter"))
	frame := plain(m)
	if !strings.Contains(frame, "3 need you") || !strings.Contains(frame, "Needs you: stage M2 is blocked") {
		t.Errorf("the dashboard does not say the sphinx run needs you:\n%s", frame)
	}
}

// TestLightThemeHasNoFaint: on a light background faint text goes pale past reading (and renderers differ
// in how pale), so the light theme greys with a real foreground colour and never uses the faint attribute.
func TestLightThemeHasNoFaint(t *testing.T) {
	t.Parallel()
	runList := loadFixtures(t)
	for _, ks := range [][]string{nil, {"tab"}, {"tab", "tab"}, {"?"}, {"b"}} {
		m := newTestModel(t, 140, 40, runList, app.Options{Theme: "light", Now: fixtureClock(), OpenLog: OpenIndexedLog})
		for _, k := range ks {
			m = send(t, m, press(k))
		}
		if seq := faintSGR(render(t, m, colorprofile.TrueColor)); seq != "" {
			t.Errorf("after %v the light theme draws faint text (%q)", ks, seq)
		}
	}
}

// faintSGR is the first SGR sequence in s that sets faint (parameter 2, not the 2 of a 38;2;r;g;b colour).
func faintSGR(s string) string {
	for _, m := range regexp.MustCompile(`\x1b\[([0-9;:]*)m`).FindAllStringSubmatch(s, -1) {
		ps := strings.Split(m[1], ";")
		for i := 0; i < len(ps); i++ {
			switch ps[i] {
			case "38", "48", "58":
				if i+1 < len(ps) && ps[i+1] == "2" {
					i += 4
				} else {
					i += 2
				}
			case "2":
				return m[0]
			}
		}
	}
	return ""
}

// TestFooterNamesEachKeyOnce: when the key that settles the run is one the pane lists anyway (b brief for a
// run awaiting input), the footer says it once.
func TestFooterNamesEachKeyOnce(t *testing.T) {
	t.Parallel()
	runList := loadFixtures(t)
	m := newTestModel(t, 200, 60, runList, app.Options{Now: fixtureClock(), OpenLog: OpenIndexedLog})
	for m.app.Runs[m.app.Selected].Status != model.StatusAwaitingInput {
		m = send(t, m, press("j"))
	}
	for _, focus := range []string{"Runs", "Detail"} {
		if focus == "Detail" {
			m = send(t, m, press("tab"))
		}
		lines := strings.Split(plain(m), "\n")
		footer := strings.Join(lines[len(lines)-2:], " ")
		if n := strings.Count(footer, "b brief"); n != 1 {
			t.Errorf("focus %s: the footer names b brief %d times:\n%s", focus, n, footer)
		}
	}
}

// TestEmptyColumnIsLeftOut: a column no run has anything in (LOCK when no run holds a lock) takes no room;
// one some run has stays while the filter lists only runs without (the columns do not change with the
// filter, TestTableGrowsWithWidth).
func TestEmptyColumnIsLeftOut(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 200, 40, sampleRuns(), app.Options{})
	header := func(m Model) string { return strings.Split(text.Stripped(m.list.View()), "\n")[1] }
	if !strings.Contains(header(m), "LOCK") {
		t.Fatalf("runs with locks but no LOCK column:\n%s", text.Stripped(m.list.View()))
	}
	m = send(t, m, press("/"))
	for _, k := range "old-done" {
		m = send(t, m, press(string(k)))
	}
	m = send(t, m, press("enter"))
	if h := header(m); !strings.Contains(h, "LOCK") || !strings.Contains(h, "STAGE") {
		t.Errorf("the filter changed the columns:\n%s", h)
	}
	var unlocked []model.Run
	for _, r := range sampleRuns() {
		r.Locks = nil
		unlocked = append(unlocked, r)
	}
	if h := header(newTestModel(t, 200, 40, unlocked, app.Options{})); strings.Contains(h, "LOCK") || !strings.Contains(h, "STAGE") {
		t.Errorf("no run holds a lock, and the header is:\n%s", h)
	}
}

// TestWrappedStageErrorIsOneError: a stage's error too long for the pane wraps under one ✗, its further
// lines indented.
func TestWrappedStageErrorIsOneError(t *testing.T) {
	t.Parallel()
	r := model.Run{ID: "long-error-run", Kind: model.KindResumable, StatePath: "/e/state.env", Dir: "/e",
		Status: model.StatusBlocked, CurrentStage: "M2", Stages: []model.Stage{model.Stage{Key: "M2", Status: model.StageFailed}.WithRare(model.StageRare{Error: "blocked: run.log 2026-12-01T10:58:13Z: stage_blocked, failed metrics CB_M2_NO_LEGACY_TOKENS and CB_M2_OTHER"})}}
	m := newTestModel(t, 70, 30, []model.Run{r}, app.Options{})
	m = send(t, m, press("tab"))
	d := text.Stripped(m.detail.View())
	if n := strings.Count(d, "✗ "); n != 1 { // the error's; the stage of a blocked run reads ⊘ blocked
		t.Errorf("the error reads as %d errors:\n%s", n, d)
	}
	if !strings.Contains(d, "⊘ M2") || !strings.Contains(d, "blocked") || strings.Contains(d, "M2 failed") {
		t.Errorf("the blocked run's stage does not read as blocked, in one word with the run:\n%s", d)
	}
	if !strings.Contains(d, "CB_M2_OTHER") {
		t.Errorf("the error's end is missing:\n%s", d)
	}
}

// TestHeaderCountFollowsBatches: the header's "need you" count is kept with the runs, so a batch in which a
// run stops needing you lowers it, and one in which it needs you again raises it.
func TestHeaderCountFollowsBatches(t *testing.T) {
	t.Parallel()
	runList := sampleRuns()
	m := newTestModel(t, 140, 40, runList, app.Options{})
	count := func() string { return strings.Split(plain(m), "\n")[0] }
	before := 0
	for _, r := range runList {
		if model.Judge(&r).NeedsYou {
			before++
		}
	}
	if want := fmt.Sprintf("⚠ %d need you", before); before < 2 || !strings.Contains(count(), want) {
		t.Fatalf("header %q, want %q", count(), want)
	}
	settled := runList[2]
	stalled := settled
	settled.Status, settled.Locks, settled.Attention = model.StatusCompleted, nil, model.Attention{}
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{settled}), At: testNow, Health: app.Health{Mode: "inotify"}})
	if want := fmt.Sprintf("⚠ %d need you", before-1); !strings.Contains(count(), want) {
		t.Errorf("after %s completed the header is %q, want %q", settled.ID, count(), want)
	}
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{stalled}), At: testNow, Health: app.Health{Mode: "inotify"}})
	if want := fmt.Sprintf("⚠ %d need you", before); !strings.Contains(count(), want) {
		t.Errorf("after %s stalled again the header is %q, want %q", stalled.ID, count(), want)
	}
}
