package ui

import (
	"strings"
	"testing"
	"time"

	"runwatch/model"
)

// runsRow is the runs pane's line for the run id, in plain text ("" if not shown).
func runsRow(m Model, id string) string {
	for _, l := range strings.Split(stripped(m.list.View()), "\n") {
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
	now := testNow
	runs := sampleRuns()
	m := newTestModel(t, 200, 40, runs, Options{Now: func() time.Time { return now }})
	rs := runs[0]
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
	m = send(t, m, BatchMsg{Changed: []model.Run{changed}, At: now, Health: Health{Mode: "inotify"}})
	after := runsRow(m, rs.ID)
	for _, want := range []string{"running", "S3", "2/3", "live"} {
		if !strings.Contains(after, want) {
			t.Errorf("after the change the row lacks %q (a stale cached row?):\n%s", want, after)
		}
	}
	if strings.Contains(after, "paused") || strings.Contains(after, "1/3") {
		t.Errorf("the row still shows the run before its change:\n%s", after)
	}

	done := runs[1]
	was := model.HumanDuration(now.Sub(done.UpdatedAt))
	if !strings.Contains(runsRow(m, done.ID), was) {
		t.Fatalf("%s's CHANGED is not %s:\n%s", done.ID, was, runsRow(m, done.ID))
	}
	now = now.Add(3 * time.Hour)
	m = send(t, m, tickMsg(now))
	if want := model.HumanDuration(now.Sub(done.UpdatedAt)); !strings.Contains(runsRow(m, done.ID), want) {
		t.Errorf("three hours later %s's CHANGED is not %s:\n%s", done.ID, want, runsRow(m, done.ID))
	}

	m = send(t, m, BatchMsg{Removed: []string{rs.Key()}, At: now, Health: Health{Mode: "inotify"}})
	if row := runsRow(m, rs.ID); row != "" {
		t.Errorf("a removed run is still listed:\n%s", row)
	}

	renamed := runs[2]
	renamed.Status, renamed.Attention = model.StatusCompleted, model.Attention{}
	m = send(t, m, SnapshotMsg{Runs: []model.Run{renamed}, Health: Health{Mode: "inotify"}, At: now})
	if row := runsRow(m, renamed.ID); !strings.Contains(row, "completed") {
		t.Errorf("after a new snapshot the row is not the snapshot's:\n%s", row)
	}
}

// BenchmarkFrame1200Runs: one frame of the wide layout with 1,200 runs whose cells are cached (a quiet
// dashboard, or the frames between batches while runs load).
func BenchmarkFrame1200Runs(b *testing.B) {
	m := newTestModel(b, 200, 60, manyRuns(1200), Options{Theme: "dark"})
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
	runs := manyRuns(1200)
	m := newTestModel(b, 200, 60, runs, Options{Theme: "dark"})
	changed := runs[:20]
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		nm, _ := m.Update(BatchMsg{Changed: changed, At: testNow})
		m = nm.(Model)
		_ = m.View()
	}
}

// TestStageColumnShowsThePhaseName: at every width where the table shows its STAGE column, the row of each
// run whose current stage has a name carries that name (issue 11 point 16); the column goes only where a
// name beside it would be cut below nameMin.
func TestStageColumnShowsThePhaseName(t *testing.T) {
	runs := loadFixtures(t)
	m := newTestModel(t, 200, 60, runs, Options{Theme: "mono", Now: fixtureClock()})
	p := m.list
	p.h = 100
	shownAt, droppedAt := 0, 0
	for w := 30; w <= 200; w++ {
		lines := p.renderTable(w, 100)
		if !strings.Contains(stripped(lines[0]), "STAGE") {
			droppedAt++
			if lay := p.fit(w); lay.nameW >= nameMin+stageWidth(p)+lay.sep {
				t.Errorf("w=%d: STAGE dropped although the name keeps %d cells with it", w, lay.nameW-stageWidth(p)-lay.sep)
			}
			continue
		}
		shownAt++
		for i, sp := range p.order {
			r := m.app.runs[sp]
			st := r.Stage(r.CurrentStage)
			if st == nil || st.Name == "" || st.Name == st.Key {
				continue
			}
			if row := stripped(lines[1+i]); !strings.Contains(row, st.Name) {
				t.Errorf("w=%d: the row of %s shows STAGE without the phase name %q:\n%s", w, r.ID, st.Name, row)
			}
		}
	}
	if shownAt == 0 || droppedAt == 0 {
		t.Fatalf("STAGE shown at %d widths, dropped at %d: the widths tried do not cover both", shownAt, droppedAt)
	}
}

func stageWidth(p *runsPane) int { return p.measure().width[colStage][formShort] }
