package model

import (
	"strings"
	"testing"
	"time"
	"unsafe"
)

// A lock's reasons, the attention and problems that quote them, and a gate's "… ago" hold ages: rendered at
// a later instant they say the age of that instant, not the one the files were read at.
func TestAgesInReasonsRenderAtTheInstantAsked(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	later := now.Add(10 * time.Minute)
	env := Env{Now: now, Host: "box", StaleAfter: 30 * time.Minute, Proc: fakeProc{alive: map[int]bool{7: true}}}
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }

	cases := []struct {
		name       string
		lock       Lock
		then, next string
	}{
		{"pid-less, within stale-after", Lock{Path: "/p/a.lock", Kind: KindJonggrang, AcquiredAt: at(-12 * time.Minute)},
			"age 12m is within 30m", "age 22m is within 30m"},
		{"pid-less, past stale-after", Lock{Path: "/p/b.lock", Kind: KindJonggrang, AcquiredAt: at(-45 * time.Minute)},
			"age 45m exceeds 30m", "age 55m exceeds 30m"},
		{"live holder, older than stale-after", Lock{Path: "/p/c.lock", PID: 7, Kind: KindResumable, AcquiredAt: at(-40 * time.Minute)},
			"age 40m exceeds 30m, but the process is alive", "age 50m exceeds 30m, but the process is alive"},
		{"acquired_at ahead, with a pid", Lock{Path: "/p/d.lock", PID: 7, Kind: KindResumable, AcquiredAt: at(25 * time.Minute)},
			"acquired_at is 25m in the future", "acquired_at is 15m in the future"},
		{"acquired_at ahead, no pid", Lock{Path: "/p/e.lock", Kind: KindJonggrang, AcquiredAt: at(25 * time.Minute)},
			"acquired_at is 25m in the future and there is no pid", "acquired_at is 15m in the future and there is no pid"},
	}
	for _, c := range cases {
		l := c.lock
		JudgeLock(&l, env)
		joined := strings.Join(l.Reasons, "; ")
		if !strings.Contains(joined, c.then) {
			t.Fatalf("%s: reasons %q, want %q", c.name, joined, c.then)
		}
		if got := strings.Join(l.ReasonsAt(now), "; "); got != joined {
			t.Errorf("%s: at read time %q, want the reasons as judged %q", c.name, got, joined)
		}
		if got := strings.Join(l.ReasonsAt(later), "; "); !strings.Contains(got, c.next) || strings.Contains(got, c.then) {
			t.Errorf("%s: 10m later %q, want %q", c.name, got, c.next)
		}
	}

	// A run stale by its pid-less lock: the attention and the problem quote the lock's reason.
	l := Lock{Path: "/p/b.lock", Holder: "lead", Kind: KindJonggrang, AcquiredAt: at(-45 * time.Minute)}
	JudgeLock(&l, env)
	r := Run{Kind: KindJonggrang, RawStatus: "paused", Locks: []Lock{l}}
	r.AddProblem(SeverityWarning, CodeLockStale, l.Path, "lock "+l.Path+" is stale: "+strings.Join(l.Reasons, "; "))
	FinalizeRun(&r)
	if !r.Attention.NeedsYou || !strings.Contains(r.Attention.Reason, "age 45m exceeds 30m") {
		t.Fatalf("attention %+v", r.Attention)
	}
	if got := r.Attention.ReasonAt(later); !strings.Contains(got, "age 55m exceeds 30m") {
		t.Errorf("attention 10m later: %q", got)
	}
	if got := r.MessageAt(r.Problems[0], later); got != "lock /p/b.lock is stale: age 55m exceeds 30m" {
		t.Errorf("problem 10m later: %q", got)
	}

	// A dead holder's lock: "(24m)" counts on.
	acq := at(-24 * time.Minute)
	dead := Lock{Path: "/p/f.lock", PID: 9, Kind: KindResumable, AcquiredAt: acq}
	JudgeLock(&dead, env)
	rd := Run{Kind: KindResumable, RawStatus: "running", Locks: []Lock{dead}}
	FinalizeRun(&rd)
	if got := rd.Attention.ReasonAt(later); got != "lock held by dead pid 9 (34m)" {
		t.Errorf("dead pid's lock 10m later: %q (at read time %q)", got, rd.Attention.Reason)
	}

	// The compaction gate's "12m ago", and the problem that quotes it.
	g := Gate{Name: "compaction"}
	g.SetDetailAged("last measured ok, context 40%; ", now.Add(-12*time.Minute), " ago, older than the 5m the gate trusts", now)
	if g.Detail != "last measured ok, context 40%; 12m ago, older than the 5m the gate trusts" {
		t.Fatalf("gate detail %q", g.Detail)
	}
	rg := Run{Kind: KindJonggrang, RawStatus: "paused", Gates: []Gate{g}}
	rg.AddProblem(SeverityInfo, CodeCompactionStale, "/p/.ephemeral/compaction-state.json", "compaction state is stale, not blocking: "+g.Detail)
	FinalizeRun(&rg)
	if got := rg.Gates[0].DetailAt(later); !strings.Contains(got, "; 22m ago,") {
		t.Errorf("gate 10m later: %q", got)
	}
	if got := rg.MessageAt(rg.Problems[0], later); !strings.Contains(got, "not blocking: last measured ok, context 40%; 22m ago,") {
		t.Errorf("gate's problem 10m later: %q", got)
	}
}

// Time alone changes a lock's verdict or the words around its age; the watcher's timer asks
// JudgementMayChange whether to look, and JudgementOutdated whether to read the run again.
func TestLockJudgementThatTimeAloneChanges(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	env := Env{Now: now, Host: "box", StaleAfter: 30 * time.Minute, Proc: fakeProc{alive: map[int]bool{7: true}}}
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	after := func(d time.Duration) Env { e := env; e.Now = now.Add(d); return e }
	judged := func(l Lock) *Run {
		JudgeLock(&l, env)
		return &Run{Kind: l.Kind, Locks: []Lock{l}}
	}

	// "age 24m is within 30m" is stale at 30m: not before.
	within := judged(Lock{Kind: KindJonggrang, AcquiredAt: at(-24 * time.Minute)})
	if !JudgementMayChange(within, env) {
		t.Fatal("a lock live by its age alone: no timer asked for")
	}
	if JudgementOutdated(within, after(5*time.Minute)) {
		t.Error("29m old, yet judged outdated")
	}
	if !JudgementOutdated(within, after(6*time.Minute+time.Second)) {
		t.Error("30m old, past stale-after, yet not judged outdated")
	}

	// A live holder's lock crossing stale-after stays live, but says so ("exceeds …, but alive").
	holder := judged(Lock{PID: 7, Kind: KindResumable, AcquiredAt: at(-29 * time.Minute)})
	if JudgementOutdated(holder, after(30*time.Second)) {
		t.Error("a live holder's lock at 29m30s judged outdated")
	}
	if !JudgementOutdated(holder, after(90*time.Second)) {
		t.Error("a live holder's lock past stale-after: its reasons must say so, yet not judged outdated")
	}

	// No pid and acquired_at 5m ahead: unknown until that time comes, then judged by its age (live).
	ahead := judged(Lock{Kind: KindJonggrang, AcquiredAt: at(5 * time.Minute)})
	if ahead.Locks[0].Verdict != VerdictUnknown {
		t.Fatalf("verdict %s", ahead.Locks[0].Verdict)
	}
	if !JudgementMayChange(ahead, env) {
		t.Error("an acquired_at in the future comes with time: no timer asked for")
	}
	if JudgementOutdated(ahead, after(4*time.Minute)) {
		t.Error("still in the future, yet judged outdated")
	}
	if !JudgementOutdated(ahead, after(5*time.Minute+time.Second)) {
		t.Error("acquired_at has come, yet not judged outdated")
	}
}

// An aged text keeps its instant in 16 bytes, not a time.Time and a bool in 32, and a run's Attention holds
// one by a handle: a run, a lock and a problem each fit a smaller size class, and the dashboard holds 10,000
// runs (issue 35). Two attentions judged apart with the same aged reason still compare equal (the watcher
// tells a changed judgement so).
func TestAgedTextsKeepTheirInstantSmall(t *testing.T) {
	for _, c := range []struct {
		name      string
		size, max uintptr
	}{
		{"ageText", unsafe.Sizeof(ageText{}), 72},
		{"Run", unsafe.Sizeof(Run{}), 512},
		{"Attention", unsafe.Sizeof(Attention{}), 104},
		{"Lock", unsafe.Sizeof(Lock{}), 320},
		{"Problem", unsafe.Sizeof(Problem{}), 64},
	} {
		if c.size > c.max {
			t.Errorf("%s is %d bytes, want at most %d", c.name, c.size, c.max)
		}
	}
	from := time.Date(2026, 11, 30, 11, 48, 0, 500, time.FixedZone("x", 3600))
	a := newAgeText("age ", from, " is old", false, from.Add(12*time.Minute))
	if !a.set() || !a.from().Equal(from) || a.was != "age 12m is old" {
		t.Errorf("aged text from %v: set %v, from %v, was %q", from, a.set(), a.from(), a.was)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	env := Env{Now: now, Host: "box", StaleAfter: 30 * time.Minute}
	judged := func() Run {
		acq := now.Add(-45 * time.Minute)
		l := Lock{Path: "/p/b.lock", Holder: "lead", Kind: KindJonggrang, AcquiredAt: &acq}
		JudgeLock(&l, env)
		r := Run{Kind: KindJonggrang, RawStatus: "paused", Locks: []Lock{l}}
		FinalizeRun(&r)
		return r
	}
	one, two := judged(), judged()
	if !one.Attention.AgeFrom().Equal(now.Add(-45*time.Minute)) || one.Attention != two.Attention {
		t.Errorf("attentions judged apart: %+v, %+v (age from %v)", one.Attention, two.Attention, one.Attention.AgeFrom())
	}
	if (ageText{was: "x"}).set() || !(ageText{}).from().IsZero() || !instantOf(time.Time{}).time().IsZero() {
		t.Error("a text with no instant reads as holding one")
	}
}
