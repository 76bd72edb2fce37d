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
}
