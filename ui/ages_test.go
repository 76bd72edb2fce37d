// Tests that the ages in Detail's reasons count on with the clock, with no file changing.

package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/ui/app"
)

// Detail's lock reasons, problems, crash signs and gate details count their ages on with the clock, as its
// first line does: ten minutes later they say so, drawn by the wake-up the frame asked for.
func TestDetailAgesInReasonsCountOnWithTheClock(t *testing.T) {
	t.Parallel()
	env := model.Env{Now: testNow, Host: "box", StaleAfter: 30 * time.Minute}
	acq := testNow.Add(-45 * time.Minute)
	l := model.Lock{Path: "/q/locks/lead.lock", Holder: "lead", Kind: model.KindJonggrang, AcquiredAt: &acq}
	model.JudgeLock(&l, env)
	g := model.Gate{Name: "compaction", Status: "stale"}
	g.SetDetailAged("last measured ok, context 40%; ", testNow.Add(-12*time.Minute), " ago, older than the 5m the gate trusts", testNow)
	run := model.Run{ID: "pay-flow", Kind: model.KindJonggrang, StatePath: "/q/MANIFEST.yaml", Dir: "/q", RawStatus: "running",
		CurrentStage: "3", UpdatedAt: testNow.Add(-time.Hour), Locks: []model.Lock{l}, Gates: []model.Gate{g},
		Stages:     []model.Stage{{Key: "3", Name: "plan", Status: model.StageRunning}},
		CrashSigns: []string{"lock of agent lead is stale: " + strings.Join(l.Reasons, "; ")}}
	run.AddProblem(model.SeverityWarning, model.CodeLockStale, l.Path, "lock "+l.Path+" is stale: "+strings.Join(l.Reasons, "; "))
	model.FinalizeRun(&run)
	if !strings.Contains(run.Attention.Reason, "age 45m exceeds 30m") {
		t.Fatalf("attention %q", run.Attention.Reason)
	}

	clock := &fakeClock{now: testNow}
	m := newTestModel(t, 200, 60, []model.Run{run}, app.Options{Clock: clock, Now: clock.Now, Send: func(tea.Msg) {}})
	count := func(frame, s string) int { return strings.Count(strings.Join(strings.Fields(frame), " "), s) }
	frame := plain(m)
	// The first line, the lock's reason, the problem and the crash sign.
	if n := count(frame, "age 45m exceeds 30m"); n < 4 {
		t.Fatalf("want the lock's age in 4 places, found %d:\n%s", n, frame)
	}
	if count(frame, "12m ago, older") != 1 {
		t.Fatalf("gate detail missing:\n%s", frame)
	}

	// The frame asked to be drawn again within the minute its ages read differently.
	a := clock.next()
	if a == nil || a.at.After(testNow.Add(time.Minute)) {
		t.Fatalf("no wake-up within the minute: %+v", a)
	}
	clock.set(testNow.Add(10 * time.Minute))
	m = send(t, m, app.TickMsg(clock.Now()))
	frame = plain(m)
	if n := count(frame, "age 45m"); n != 0 {
		t.Errorf("10 minutes later %d texts still say 45m:\n%s", n, frame)
	}
	if n := count(frame, "age 55m exceeds 30m"); n < 4 {
		t.Errorf("10 minutes later want 55m in 4 places, found %d:\n%s", n, frame)
	}
	if count(frame, "22m ago, older") != 1 {
		t.Errorf("gate detail not counted on:\n%s", frame)
	}
}
