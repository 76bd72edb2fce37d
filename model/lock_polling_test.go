package model

import (
	"testing"
	"time"
)

// A lock acquired ahead changes when its time comes, at a known instant (JudgementComesAt), so it asks for no
// polling; a live holder can exit at any moment, so it does (JudgementNeedsPolling). JudgementMayChange holds
// for both.
func TestLockAheadComesAtAKnownInstantLiveOnesArePolled(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	env := Env{Now: now, Host: "box", StaleAfter: 30 * time.Minute, Proc: fakeProc{alive: map[int]bool{7: true}}}
	ahead, later := now.Add(time.Hour), now.Add(2*time.Hour)
	judged := func(ls ...Lock) *Run {
		for i := range ls {
			JudgeLock(&ls[i], env)
		}
		return &Run{Kind: ls[0].Kind, Locks: ls}
	}
	r := judged(Lock{Kind: KindJonggrang, AcquiredAt: &later}, Lock{Kind: KindJonggrang, AcquiredAt: &ahead})
	if JudgementNeedsPolling(r, env) || !JudgementMayChange(r, env) {
		t.Errorf("locks acquired ahead: polling %v, may change %v", JudgementNeedsPolling(r, env), JudgementMayChange(r, env))
	}
	if got := JudgementComesAt(r); !got.Equal(ahead) {
		t.Errorf("comes at %v, want the earlier acquired_at %v", got, ahead)
	}
	acquired := now.Add(-time.Minute)
	live := judged(Lock{Kind: KindResumable, PID: 7, AcquiredAt: &acquired})
	if !JudgementNeedsPolling(live, env) || !JudgementComesAt(live).IsZero() {
		t.Errorf("a live holder: polling %v, comes at %v", JudgementNeedsPolling(live, env), JudgementComesAt(live))
	}
	// A live holder whose acquired_at lies ahead (a skewed clock) can exit at any moment all the same: the
	// time to come does not excuse it from polling, or its death would go unseen until then.
	liveAhead := judged(Lock{Kind: KindResumable, PID: 7, AcquiredAt: &ahead})
	if liveAhead.Locks[0].Verdict != VerdictLive || !JudgementNeedsPolling(liveAhead, env) {
		t.Errorf("a live holder acquired ahead: %s, polling %v", liveAhead.Locks[0].Verdict, JudgementNeedsPolling(liveAhead, env))
	}
	// So can a lock on another machine that runwatch could not reach yet, dated ahead or not.
	unreached := Env{Now: now, Host: "box", StaleAfter: 30 * time.Minute, Elsewhere: noMachines{}}
	elsewhere := Lock{Kind: KindResumable, Host: "box-b", PID: 7, AcquiredAt: &ahead}
	JudgeLock(&elsewhere, unreached)
	if r := (&Run{Kind: KindResumable, Locks: []Lock{elsewhere}}); elsewhere.Verdict != VerdictUnknown || !JudgementNeedsPolling(r, unreached) {
		t.Errorf("a lock on a machine not reached yet, acquired ahead: %s, polling %v", elsewhere.Verdict, JudgementNeedsPolling(r, unreached))
	}
}

// noMachines reaches no other machine.
type noMachines struct{}

func (noMachines) On(string, int) (ProcInspector, string, bool, string, error) {
	return nil, "", false, "", nil
}
