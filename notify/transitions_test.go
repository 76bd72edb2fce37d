package notify

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"runwatch/heaptest"
	"runwatch/model"
	"runwatch/watch"
)

// t0 is the invented clock's start; every test moves time by hand.
var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// A resumable run in the three shapes the tests need, judged by the model as the watcher's runs are.
func paused(id string) model.Run {
	r := model.Run{ID: id, Kind: model.KindResumable, Dir: "/runs/" + id, StatePath: "/runs/" + id + "/state.env",
		CurrentStage: "S2", Stages: []model.Stage{{Key: "S1", Status: model.StageCompleted}, {Key: "S2", Status: model.StagePending}}}
	model.FinalizeRun(&r)
	return r
}

func stalled(id string, age int64) model.Run {
	r := paused(id)
	r.Locks = []model.Lock{{Path: r.Dir + "/run.lock", PID: 4242, AgeSeconds: age, Verdict: model.VerdictStale,
		Reasons: []string{"pid 4242 is not running on this host"}}}
	model.FinalizeRun(&r)
	return r
}

func failed(id string) model.Run {
	r := model.Run{ID: id, Kind: model.KindJonggrang, Dir: "/runs/" + id, StatePath: "/runs/" + id + "/MANIFEST.yaml",
		RawStatus: "failed", Stages: []model.Stage{model.Stage{Key: "8", Name: "implementation", Status: model.StageFailed}.WithRare(model.StageRare{Error: "tests red"})}}
	model.FinalizeRun(&r)
	return r
}

func completed(id string) model.Run {
	r := paused(id)
	r.Stages = []model.Stage{{Key: "S1", Status: model.StageCompleted}}
	model.FinalizeRun(&r)
	return r
}

func TestFixturesAreJudgedAsTheTestsAssume(t *testing.T) {
	for _, c := range []struct {
		r     model.Run
		needs bool
		code  string
	}{
		{paused("a"), false, model.AttentionPaused},
		{stalled("a", 5), true, model.AttentionStaleLock},
		{failed("a"), true, model.AttentionFailed},
		{completed("a"), false, model.AttentionCompleted},
	} {
		if c.r.Attention.NeedsYou != c.needs || c.r.Attention.Code != c.code {
			t.Fatalf("%s: attention %+v, want needs=%v code=%s", c.r.Status, c.r.Attention, c.needs, c.code)
		}
	}
}

// observe feeds runs at the given offset and returns the ids of the transitions.
func observe(tr *Tracker, at time.Duration, runs ...model.Run) []string {
	var ids []string
	for _, r := range runs {
		if x, ok := tr.Observe(r, t0.Add(at)); ok {
			ids = append(ids, fmt.Sprintf("%s:%s:%s", x.Run.ID, x.Kind, x.Run.Attention.Code))
		}
	}
	return ids
}

func expect(t *testing.T, step string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: transitions %q, want %q", step, got, want)
	}
}

func TestEnterLeaveReEnter(t *testing.T) {
	tr := &Tracker{Hold: 10 * time.Second}
	tr.Prime([]model.Run{paused("a")}, t0)
	expect(t, "still paused", observe(tr, time.Second, paused("a")))
	expect(t, "enters stalled", observe(tr, 2*time.Second, stalled("a", 1)), "a:attention:stale-lock")
	// The reason's words change as the lock ages; the state is the same, so nothing is news.
	expect(t, "stays stalled", observe(tr, 3*time.Second, stalled("a", 2), stalled("a", 60)))
	expect(t, "leaves", observe(tr, 4*time.Second, paused("a")))
	expect(t, "still out", observe(tr, 20*time.Second, paused("a")))
	expect(t, "re-enters after the hold", observe(tr, 30*time.Second, stalled("a", 1)), "a:attention:stale-lock")
	expect(t, "a different reason is news", observe(tr, 31*time.Second, failed("a")), "a:attention:failed")
}

func TestFlapNotifiesOnce(t *testing.T) {
	tr := &Tracker{Hold: 10 * time.Second}
	tr.Prime([]model.Run{paused("a")}, t0)
	var got []string
	// Stale, live, stale, ... every 700 ms for 8 s: one episode.
	for i := 0; i < 12; i++ {
		r := paused("a")
		if i%2 == 0 {
			r = stalled("a", int64(i))
		}
		got = append(got, observe(tr, time.Duration(i)*700*time.Millisecond, r)...)
	}
	expect(t, "flapping", got, "a:attention:stale-lock")
	// Out for longer than the hold, then back: that is a new episode.
	expect(t, "out long enough", observe(tr, 8*time.Second+10*time.Second, paused("a")))
	expect(t, "back", observe(tr, 30*time.Second, stalled("a", 1)), "a:attention:stale-lock")

	// Flapping between two reasons is a flap too: each reason notifies once.
	tr2 := &Tracker{Hold: 10 * time.Second}
	tr2.Prime([]model.Run{paused("b")}, t0)
	got = nil
	for i := 0; i < 6; i++ {
		r := stalled("b", int64(i))
		if i%2 == 1 {
			r = failed("b")
		}
		got = append(got, observe(tr2, time.Duration(i)*time.Second, r)...)
	}
	expect(t, "two reasons alternating", got, "b:attention:stale-lock", "b:attention:failed")
}

func TestStartUpStateIsNotNews(t *testing.T) {
	tr := &Tracker{}
	tr.Prime([]model.Run{stalled("a", 100), failed("b"), paused("c")}, t0)
	expect(t, "re-read unchanged", observe(tr, time.Second, stalled("a", 101), failed("b"), paused("c")))
	expect(t, "c breaks", observe(tr, 2*time.Second, stalled("c", 1)), "c:attention:stale-lock")
	expect(t, "a run appearing later that needs you is news", observe(tr, 3*time.Second, failed("d")), "d:attention:failed")
	expect(t, "a new healthy run is not", observe(tr, 3*time.Second, paused("e")))
}

func TestCompletionsOnlyWhenAsked(t *testing.T) {
	quiet := &Tracker{}
	quiet.Prime([]model.Run{paused("a")}, t0)
	expect(t, "completions off", observe(quiet, time.Second, completed("a")))

	tr := &Tracker{Completions: true}
	tr.Prime([]model.Run{paused("a"), completed("old")}, t0)
	expect(t, "completes", observe(tr, time.Second, completed("a")), "a:completed:completed")
	expect(t, "stays completed", observe(tr, 2*time.Second, completed("a"), completed("old")))
}

func TestApplyForgetsRemovedRuns(t *testing.T) {
	tr := &Tracker{}
	tr.Prime([]model.Run{stalled("a", 1)}, t0)
	if got := tr.Apply(watch.Update{Changed: model.RunPointers([]model.Run{stalled("a", 2)})}, t0.Add(time.Second)); len(got) != 0 {
		t.Fatalf("unchanged run made transitions: %v", got)
	}
	got := tr.Apply(watch.Update{Removed: []string{stalled("a", 1).StatePath}}, t0.Add(2*time.Second))
	if len(got) != 0 || len(tr.runs) != 0 {
		t.Fatalf("removal: transitions %v, %d runs remembered", got, len(tr.runs))
	}
}

func TestLimiterSettlesThenSendsEachAlone(t *testing.T) {
	l := &Limiter{Settle: time.Second, Burst: 3, Refill: 20 * time.Second}
	if _, ok := l.Due(); ok {
		t.Fatal("due with nothing pending")
	}
	l.Add([]Transition{{Run: stalled("a", 1), At: t0}}, t0)
	if due, _ := l.Due(); !due.Equal(t0.Add(time.Second)) {
		t.Fatalf("due %v, want settle after the first", due)
	}
	if got := l.Flush(t0.Add(999 * time.Millisecond)); got != nil {
		t.Fatalf("sent before it settled: %v", got)
	}
	l.Add([]Transition{{Run: failed("b"), At: t0}}, t0.Add(500*time.Millisecond))
	got := l.Flush(t0.Add(time.Second))
	if len(got) != 2 || got[0].Summary() || got[0].Items[0].Run.ID != "a" || got[1].Items[0].Run.ID != "b" {
		t.Fatalf("want a and b each alone, got %+v", got)
	}
	if l.Pending() != 0 {
		t.Fatal("sent transitions still pending")
	}
}

func TestBurstOfFiftyIsOneSummary(t *testing.T) {
	tr := &Tracker{}
	var before, after []model.Run
	for i := 0; i < 50; i++ {
		id := fmt.Sprintf("run-%02d", i)
		before, after = append(before, paused(id)), append(after, stalled(id, 1))
	}
	tr.Prime(before, t0)
	l := &Limiter{}
	// The burst arrives over three batches within the settle time.
	for i, part := range [][]model.Run{after[:10], after[10:40], after[40:]} {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		l.Add(tr.Apply(watch.Update{Changed: model.RunPointers(part)}, at), at)
	}
	got := l.Flush(t0.Add(DefaultSettle))
	if len(got) != 1 || len(got[0].Items) != 50 {
		t.Fatalf("want one summary of 50, got %d notifications", len(got))
	}
	n := got[0]
	if n.Title() != "runwatch: 50 runs need you" {
		t.Errorf("title %q", n.Title())
	}
	if b := n.Body(); !strings.HasPrefix(b, "run-00 (stale lock), run-01 (stale lock)") || !strings.HasSuffix(b, "and 45 more") {
		t.Errorf("body %q", b)
	}
	if hd := NewHookData(n); hd.Event != "summary" || hd.Count != 50 || hd.ID != "50 runs" || len(hd.IDs) != 50 {
		t.Errorf("hook data of the summary: %+v", hd)
	}
}

func TestRateLimitTurnsATrickleIntoSummaries(t *testing.T) {
	l := &Limiter{Settle: time.Second, Burst: 3, Refill: 20 * time.Second}
	var sent []Notification
	// One new run every 2 s for 60 s.
	for i := 0; i < 30; i++ {
		at := t0.Add(time.Duration(i) * 2 * time.Second)
		l.Add([]Transition{{Run: stalled(fmt.Sprintf("r%d", i), 1), At: at}}, at)
		for step := time.Duration(0); step < 2*time.Second; step += 100 * time.Millisecond {
			sent = append(sent, l.Flush(at.Add(step))...)
		}
	}
	for now := t0.Add(60 * time.Second); l.Pending() > 0; now = now.Add(time.Second) {
		sent = append(sent, l.Flush(now)...)
	}
	covered, singles := 0, 0
	for _, n := range sent {
		covered += len(n.Items)
		if !n.Summary() {
			singles++
		}
	}
	if covered != 30 {
		t.Errorf("notifications cover %d runs, want all 30", covered)
	}
	// 3 at once, then one every 20 s: over 60-odd seconds that is at most 3 + 4.
	if len(sent) > 7 || singles < 3 {
		t.Errorf("%d notifications (%d single) for a trickle of 30", len(sent), singles)
	}
}

// The dashboard's tracker remembers every run it shows (10,000 of them): a run that needs you costs its
// entry and one episode (133 bytes), not a map of its own (469 bytes, issue 35). Not parallel: it
// measures the process's heap.
func TestTrackerHoldsFewBytesPerRun(t *testing.T) {
	heaptest.SkipUnderRace(t)
	const n = 2000
	runs := make([]model.Run, n)
	for i := range runs {
		runs[i] = stalled(fmt.Sprintf("r%04d", i), 7200)
	}
	before := heaptest.Now()
	var tk Tracker
	tk.Prime(runs, t0)
	after := heaptest.Now()
	runtime.KeepAlive(runs)
	runtime.KeepAlive(&tk)
	per := (int64(after.Live) - int64(before.Live)) / n
	t.Logf("the tracker holds %d bytes a run", per)
	if per > 200 {
		t.Errorf("the tracker holds %d bytes a run; at most 200", per)
	}
}
