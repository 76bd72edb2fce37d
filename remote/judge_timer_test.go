package remote

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"runwatch/model"
)

// oneMachine reaches box-b, whose pid 4242 is alive while alive is set.
type oneMachine struct{ alive *atomic.Bool }

func (m oneMachine) On(host string, pid int) (model.ProcInspector, string, bool, string, error) {
	if !model.SameHost(host, "box-b") {
		return nil, "", false, "", nil
	}
	return oneProc{alive: m.alive.Load()}, "beta", true, "", nil
}

type oneProc struct{ alive bool }

func (p oneProc) Alive(pid int) bool              { return pid == 4242 && p.alive }
func (p oneProc) StartTime(int) (time.Time, bool) { return time.Time{}, false }

// timers is an injected time.After: each timer asked for is a channel the test fires, noted with what the
// test had done by then.
type timers struct {
	mu    sync.Mutex
	asked []string
	waits []time.Duration
	phase string
	fire  chan chan time.Time
}

func (c *timers) after(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	c.asked = append(c.asked, c.phase)
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	c.fire <- ch
	return ch
}

func (c *timers) setPhase(p string) {
	c.mu.Lock()
	c.phase = p
	c.mu.Unlock()
}

// The runs that lock names on a third machine are judged again on a timer only while their judgement can
// change with time: a live holder may exit, a stale lock stays stale. A ticker woke every 2 s for as long
// as remote roots were watched, with nothing held or only stale locks (issue 26).
func TestJudgeAgainSetsATimerOnlyWhileAJudgementCanChange(t *testing.T) {
	alive := &atomic.Bool{}
	alive.Store(true)
	e := &Elsewhere{names: map[string]nameAnswer{"alpha": {name: "box-a"}}}
	clock := &timers{fire: make(chan chan time.Time, 16)}
	w := &Watcher{updates: make(chan Update, 8), health: map[string]HostHealth{}}
	w.judge = judgeElsewhere{e: e, watching: oneMachine{alive}, staleAfter: time.Hour, held: map[string]heldRun{},
		wake: make(chan struct{}, 1), after: clock.after}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.judgeAgain(ctx, 2*time.Second)
	}()
	defer func() { cancel(); <-done }()

	next := func(what string) chan time.Time {
		t.Helper()
		select {
		case ch := <-clock.fire:
			return ch
		case <-time.After(30 * time.Second): // a bound on a hang, not a timing
			t.Fatalf("no timer set %s", what)
			return nil
		}
	}
	held := func(id string, pid int) {
		r := model.Run{Kind: model.KindResumable, ID: id, Dir: "/r/" + id, StatePath: "/r/" + id + "/state.env",
			Remote: &model.RemoteRef{Host: "alpha", Root: "ssh://alpha/r"},
			Locks:  []model.Lock{{Path: "/r/" + id + "/run.lock", Host: "box-b", PID: pid, Verdict: model.VerdictUnknown}}}
		w.judge.send("alpha", []model.Run{r}, func([]model.Run) bool { return true })
	}

	clock.setPhase("held a live lock")
	held("irm-1", 4242)
	fire := next("for a lock whose holder lives on box-b")
	fire <- time.Now()
	fire = next("again while the holder lives")
	alive.Store(false)
	clock.setPhase("holder exited")
	fire <- time.Now()
	select {
	case u := <-w.updates:
		if len(u.Changed) != 1 || u.Changed[0].Locks[0].Verdict != model.VerdictStale {
			t.Fatalf("after the holder exited: %+v", u.Changed)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the exit was not sent")
	}
	// Only a stale lock is held now: nothing sets a timer until a run that can change is held.
	clock.setPhase("held another live lock")
	alive.Store(true)
	held("irm-2", 4242)
	next("for the second run")
	clock.mu.Lock()
	defer clock.mu.Unlock()
	want := []string{"held a live lock", "held a live lock", "held another live lock"}
	if len(clock.asked) != len(want) || clock.asked[2] != want[2] {
		t.Fatalf("timers set %q, want %q: one was set with only a stale lock held", clock.asked, want)
	}
}

// A lock on a third machine whose holder is gone is stale there, but its acquired_at an hour ahead (a
// skewed clock) still changes its words when that hour comes: one timer for that instant, not one every
// interval until then (the 2 s judge kept re-judging such locks, as the watcher's liveness pass did).
func TestJudgeAgainWaitsForALockAcquiredAheadInsteadOfPolling(t *testing.T) {
	alive := &atomic.Bool{}
	e := &Elsewhere{names: map[string]nameAnswer{"alpha": {name: "box-a"}}}
	clock := &timers{fire: make(chan chan time.Time, 16)}
	w := &Watcher{updates: make(chan Update, 8), health: map[string]HostHealth{}}
	w.judge = judgeElsewhere{e: e, watching: oneMachine{alive}, staleAfter: time.Hour, held: map[string]heldRun{},
		wake: make(chan struct{}, 1), after: clock.after}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.judgeAgain(ctx, 2*time.Second)
	}()
	defer func() { cancel(); <-done }()

	ahead := time.Now().Add(time.Hour)
	r := model.Run{Kind: model.KindResumable, ID: "irm-1", Dir: "/r/irm-1", StatePath: "/r/irm-1/state.env",
		Remote: &model.RemoteRef{Host: "alpha", Root: "ssh://alpha/r"},
		Locks:  []model.Lock{{Path: "/r/irm-1/run.lock", Host: "box-b", PID: 4242, AcquiredAt: &ahead, Verdict: model.VerdictUnknown}}}
	w.judge.send("alpha", []model.Run{r}, func(judged []model.Run) bool {
		if l := judged[0].Locks[0]; l.Verdict != model.VerdictStale {
			t.Errorf("a dead holder on box-b: %s %v", l.Verdict, l.Reasons)
		}
		return true
	})
	select {
	case <-clock.fire:
	case <-time.After(30 * time.Second): // a bound on a hang, not a timing
		t.Fatal("no timer set for the acquired_at to come")
	}
	clock.mu.Lock()
	defer clock.mu.Unlock()
	if len(clock.waits) != 1 || clock.waits[0] < 59*time.Minute || clock.waits[0] > time.Hour {
		t.Fatalf("timers set for %v, want one for the hour until acquired_at", clock.waits)
	}
}
