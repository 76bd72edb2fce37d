package model

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeElsewhere reaches one machine named box-b (label "b"), whose processes are proc; down makes it
// unreachable now.
type fakeElsewhere struct {
	proc ProcInspector
	down error
	why  string
}

func (f fakeElsewhere) On(host string, _ int) (ProcInspector, string, bool, string, error) {
	if !SameHost(host, "box-b") {
		return nil, "", false, f.why, nil
	}
	return f.proc, "b", true, "", f.down
}

func TestJudgeLockOnTheHostThatHoldsIt(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := now.Add(-time.Hour)
	here := fakeProc{alive: map[int]bool{4242: true}} // 4242 is alive here, which must not count
	there := fakeProc{alive: map[int]bool{77: true, 88: true}, started: map[int]time.Time{77: now.Add(-2 * time.Hour), 88: now.Add(-time.Minute)}}
	env := Env{Now: now, Host: "box-a", Proc: here, Elsewhere: fakeElsewhere{proc: there}}
	cases := []struct {
		name      string
		lock      Lock
		env       Env
		verdict   Verdict
		judgedOn  string
		reasonHas string
	}{
		{"dead there", Lock{Host: "box-b", PID: 4242, AcquiredAt: &at}, env, VerdictStale, "b", "judged on b: pid 4242 is not running"},
		{"alive there", Lock{Host: "box-b.lan", PID: 77, AcquiredAt: &at}, env, VerdictLive, "b", "judged on b: pid 77 is running"},
		{"reused there", Lock{Host: "box-b", PID: 88, AcquiredAt: &at}, env, VerdictStale, "b", "judged on b: pid 88 started at"},
		{"down", Lock{Host: "box-b", PID: 77, AcquiredAt: &at},
			Env{Now: now, Host: "box-a", Proc: here, Elsewhere: fakeElsewhere{proc: there, down: errors.New("connection refused")}},
			VerdictUnknown, "", "held on box-b (b), which cannot be asked now: connection refused"},
		{"not reached", Lock{Host: "box-c", PID: 77, AcquiredAt: &at}, env, VerdictUnknown, "", "none of the hosts runwatch reaches"},
		{"not reached, one host unanswered", Lock{Host: "box-c", PID: 77, AcquiredAt: &at},
			Env{Now: now, Host: "box-a", Proc: here, Elsewhere: fakeElsewhere{proc: there, why: "c did not say its name: timeout"}},
			VerdictUnknown, "", "(c did not say its name: timeout)"},
		{"no one reached", Lock{Host: "box-b", PID: 77, AcquiredAt: &at}, Env{Now: now, Host: "box-a", Proc: here},
			VerdictUnknown, "", "held on box-b; liveness cannot be checked here"},
		{"this host is never asked elsewhere", Lock{Host: "box-a", PID: 4242, AcquiredAt: &at}, env, VerdictLive, "", "pid 4242 is running"},
	}
	for _, c := range cases {
		l := c.lock
		JudgeLock(&l, c.env)
		if l.Verdict != c.verdict || l.JudgedOn != c.judgedOn || !strings.Contains(strings.Join(l.Reasons, "; "), c.reasonHas) {
			t.Errorf("%s: got %s judged on %q %q; want %s judged on %q with %q", c.name, l.Verdict, l.JudgedOn, l.Reasons, c.verdict, c.judgedOn, c.reasonHas)
		}
	}
}

// A lock held on a machine that was down is judged again when asked: it may be reachable now.
func TestJudgementOutdatedAsksAgainWhereTheLockIsHeld(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := now.Add(-time.Hour)
	down := Env{Now: now, Host: "box-a", Elsewhere: fakeElsewhere{down: errors.New("no route")}}
	r := &Run{Locks: []Lock{{Host: "box-b", PID: 77, AcquiredAt: &at}}}
	JudgeLock(&r.Locks[0], down)
	if r.Locks[0].Verdict != VerdictUnknown {
		t.Fatalf("down: %s %q", r.Locks[0].Verdict, r.Locks[0].Reasons)
	}
	if JudgementOutdated(r, down) {
		t.Error("still down, yet judged outdated")
	}
	up := Env{Now: now, Host: "box-a", Elsewhere: fakeElsewhere{proc: fakeProc{alive: map[int]bool{77: true}}}}
	if !JudgementOutdated(r, up) {
		t.Error("the host is back and the pid alive there, yet the unknown verdict is not outdated")
	}
	if JudgementOutdated(r, Env{Now: now, Host: "box-a"}) {
		t.Error("with no host reached, an unknown lock of another host can never change")
	}
}

// A run read by machine box-a's runwatch, whose lock names box-b, arrives unknown; here, where box-b is
// reached, it is judged on box-b, and the run's problems, status and attention follow.
func TestJudgeLocksHeldElsewhereFollowsThroughTheRun(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := now.Add(-time.Minute)
	fromA := func() Run {
		r := Run{ID: "r", Kind: KindResumable, RawStatus: "", Stages: []Stage{{Key: "S1", Status: StagePending}},
			Locks: []Lock{{Path: "/r/run.lock", Host: "box-b", PID: 77, AcquiredAt: &at}}}
		JudgeLock(&r.Locks[0], Env{Now: now, Host: "box-a"})
		r.AddProblem(SeverityWarning, CodeLockUnknown, "/r/run.lock", "lock /r/run.lock: "+strings.Join(r.Locks[0].Reasons, "; "))
		r.Locks[0].Kind = "" // as it arrives over JSON
		FinalizeRun(&r)
		return r
	}
	r := fromA()
	if r.Locks[0].Verdict != VerdictUnknown {
		t.Fatalf("from box-a: %s", r.Locks[0].Verdict)
	}
	dead := Env{Now: now, Host: "box-a", Elsewhere: fakeElsewhere{proc: fakeProc{}}}
	if !JudgeLocksHeldElsewhere(&r, dead) {
		t.Fatal("nothing changed")
	}
	if r.Locks[0].Verdict != VerdictStale || r.Locks[0].JudgedOn != "b" || r.Status != StatusStalled || r.Attention.Code != AttentionStaleLock {
		t.Fatalf("dead on box-b: %s judged on %q, status %s, attention %s", r.Locks[0].Verdict, r.Locks[0].JudgedOn, r.Status, r.Attention.Code)
	}
	if len(r.Problems) != 1 || r.Problems[0].Code != CodeLockStale {
		t.Fatalf("problems: %+v", r.Problems)
	}
	if JudgeLocksHeldElsewhere(&r, dead) {
		t.Error("judged the same again, yet reported a change")
	}
	r = fromA()
	alive := Env{Now: now, Host: "box-a", Elsewhere: fakeElsewhere{proc: fakeProc{alive: map[int]bool{77: true}}}}
	JudgeLocksHeldElsewhere(&r, alive)
	if r.Locks[0].Verdict != VerdictLive || r.Status != StatusRunning || len(r.Problems) != 0 {
		t.Fatalf("alive on box-b: %s, status %s, problems %+v", r.Locks[0].Verdict, r.Status, r.Problems)
	}
	// A lock naming box-a itself was judged there already: never judged again here.
	own := Run{Kind: KindResumable, Locks: []Lock{{Path: "/r/run.lock", Host: "box-a", PID: 0, Verdict: VerdictUnknown, Reasons: []string{"no pid recorded; liveness cannot be checked"}}}}
	if JudgeLocksHeldElsewhere(&own, alive) {
		t.Error("a lock of the sending machine itself was judged again")
	}
}
