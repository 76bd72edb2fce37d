package model

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func tp(d time.Duration) *time.Time { t := t0.Add(d); return &t }

// orphanRun is a jonggrang feature whose phase 14 is marked running, written last at t0, with no lock and no
// live worker.
func orphanRun() Run {
	r := Run{ID: "feat-x", Kind: KindJonggrang, RawStatus: "running", CurrentStage: "14", StatePath: "/p/MANIFEST.yaml",
		Jonggrang: &JonggrangDetail{WorkType: "MEDIUM"}, ActiveAt: tp(0),
		Stages: []Stage{{Key: "13", Name: "review", Status: StageCompleted}, {Key: "14", Name: "testing", Status: StageRunning, StartedAt: tp(-time.Minute)}}}
	FinalizeRun(&r)
	return r
}

func TestOrphanedAfterGrace(t *testing.T) {
	rules := LivenessRules{OrphanAfter: 5 * time.Minute}
	r := orphanRun()
	if r.Status != StatusRunning || r.Attention.NeedsYou {
		t.Fatalf("read: %s %+v; the time-free judgement calls it running", r.Status, r.Attention)
	}
	JudgeTime(&r, t0.Add(4*time.Minute), rules, nil)
	if r.Attention.NeedsYou || r.Attention.Code != AttentionRunning {
		t.Fatalf("within the grace: %+v", r.Attention)
	}
	if got := r.Attention.RecheckAt(); !got.Equal(t0.Add(5 * time.Minute)) {
		t.Fatalf("recheck at %v, want the end of the grace", got)
	}
	JudgeTime(&r, t0.Add(8*time.Minute), rules, nil)
	at := r.Attention
	if !at.NeedsYou || at.Code != AttentionOrphaned || at.Action != ActionResume || r.Status != StatusStalled {
		t.Fatalf("past the grace: %s %+v", r.Status, at)
	}
	want := "phase 14 testing is marked running but nothing has run it for 8m; the orchestrator is gone"
	if !strings.HasPrefix(at.Reason, want) {
		t.Fatalf("reason %q, want it to start %q", at.Reason, want)
	}
	// The age counts on at frame time; the JSON reason stays what it was when judged.
	if got := at.ReasonAt(t0.Add(18 * time.Minute)); !strings.Contains(got, "for 18m;") || !strings.Contains(at.Reason, "for 8m;") {
		t.Fatalf("ReasonAt 18m: %q (reason %q)", got, at.Reason)
	}
	if !at.RecheckAt().IsZero() {
		t.Fatalf("orphaned stays orphaned by the clock; recheck %v", at.RecheckAt())
	}
	// A live agent lock, or a live worker, runs it: never orphaned.
	live := orphanRun()
	live.Locks = []Lock{{Path: "/p/locks/a.lock", Verdict: VerdictLive}}
	FinalizeRun(&live)
	JudgeTime(&live, t0.Add(time.Hour), rules, nil)
	if live.Attention.Code != AttentionRunning {
		t.Fatalf("live lock: %+v", live.Attention)
	}
	worker := orphanRun()
	worker.Jonggrang.Groups = []Group{{FeatureID: "feat-x", PID: 4, Alive: true}}
	FinalizeRun(&worker)
	JudgeTime(&worker, t0.Add(time.Hour), rules, nil)
	if worker.Attention.Code != AttentionRunning {
		t.Fatalf("live worker: %+v", worker.Attention)
	}
	// The default grace is a few minutes.
	d := orphanRun()
	JudgeTime(&d, t0.Add(DefaultOrphanAfter-time.Second), LivenessRules{}, nil)
	if d.Attention.Code != AttentionRunning {
		t.Fatalf("default grace: %+v", d.Attention)
	}
	JudgeTime(&d, t0.Add(DefaultOrphanAfter), LivenessRules{}, nil)
	if d.Attention.Code != AttentionOrphaned {
		t.Fatalf("default grace over: %+v", d.Attention)
	}
}

// TestAnAgeNeverReadsShorterThanItsThreshold (issue 36 point 10): with a 90 s grace, an orphan found at
// 95 s read "nothing has run it for 1m" in whole minutes, less than the grace it had passed; it reads "for
// over 90s" until whole minutes can say it.
func TestAnAgeNeverReadsShorterThanItsThreshold(t *testing.T) {
	rules := LivenessRules{OrphanAfter: 90 * time.Second}
	r := orphanRun()
	JudgeTime(&r, t0.Add(95*time.Second), rules, nil)
	at := r.Attention
	if at.Code != AttentionOrphaned {
		t.Fatalf("past a 90s grace: %+v", at)
	}
	for _, c := range []struct {
		at   time.Duration
		want string
	}{{95 * time.Second, "for over 90s;"}, {119 * time.Second, "for over 90s;"}, {2 * time.Minute, "for 2m;"}, {10 * time.Minute, "for 10m;"}} {
		if got := at.ReasonAt(t0.Add(c.at)); !strings.Contains(got, c.want) {
			t.Errorf("at %s: %q, want %q", c.at, got, c.want)
		}
	}
	if !strings.Contains(at.Reason, "for over 90s;") {
		t.Errorf("as judged (status): %q", at.Reason)
	}
}

// quietRun is a resumable run of task mine at S1 (started at t0), held by live pid 4242, last written at t0.
func quietRun(key string) Run {
	r := Run{ID: key, Kind: KindResumable, StatePath: "/r/" + key + "/state.env", CurrentStage: "S1", ActiveAt: tp(0),
		Resumable: &ResumableDetail{TaskName: "mine"},
		Locks:     []Lock{{Path: "/r/" + key + "/run.lock", PID: 4242, Verdict: VerdictLive}},
		Stages:    []Stage{{Key: "S1", Status: StagePending, StartedAt: tp(0)}, {Key: "S2", Status: StagePending}}}
	FinalizeRun(&r)
	return r
}

// pastRun finished S1 in s1 and S2 in s2.
func pastRun(key string, s1, s2 time.Duration) Run {
	start := t0.Add(-48 * time.Hour)
	mid, end := start.Add(s1), start.Add(s1+s2)
	r := Run{ID: key, Kind: KindResumable, StatePath: "/r/" + key + "/state.env", Resumable: &ResumableDetail{TaskName: "mine"},
		Stages: []Stage{{Key: "S1", Status: StageCompleted, StartedAt: &start, CompletedAt: &mid},
			{Key: "s2", Status: StageCompleted, StartedAt: &mid, CompletedAt: &end}}}
	FinalizeRun(&r)
	return r
}

func TestQuietWithHistory(t *testing.T) {
	h := NewHistory()
	for i, d := range []time.Duration{2 * time.Minute, 2 * time.Minute, 2 * time.Minute, 3 * time.Minute} {
		p := pastRun("past"+string(rune('a'+i)), d, 10*time.Minute)
		h.Observe(&p)
	}
	r := quietRun("now")
	JudgeTime(&r, t0.Add(10*time.Minute), LivenessRules{}, h)
	if r.Attention.NeedsYou {
		t.Fatalf("10m silent, quiet only past max(5×p90, 15m): %+v", r.Attention)
	}
	if got := r.Attention.RecheckAt(); !got.Equal(t0.Add(15 * time.Minute)) {
		t.Fatalf("recheck %v, want t0+15m", got)
	}
	JudgeTime(&r, t0.Add(90*time.Minute), LivenessRules{}, h)
	at := r.Attention
	want := "pid 4242 is alive but stage S1 has been silent for 1h30m; it usually takes 2m (4 runs)"
	if !at.NeedsYou || at.Code != AttentionQuiet || !strings.HasPrefix(at.Reason, want) || r.Status != StatusRunning {
		t.Fatalf("quiet: %s %+v\nwant reason starting %q", r.Status, at, want)
	}
	// Timing: S1's usual, and the ETA is S1's remaining usual (none: it overran) plus S2's.
	if u := r.Stages[0].Timing.Usual(); u.Runs != 4 || u.Median != 2*time.Minute || u.String() != "usually 2–2m (4 runs)" && u.String() != "usually 2m (4 runs)" {
		t.Fatalf("S1 usual %+v %q", u, u.String())
	}
	if left, ok := r.ETA(t0.Add(time.Minute)); !ok || left != 11*time.Minute {
		t.Fatalf("ETA at 1m: %v %v, want 1m of S1 + 10m of S2", left, ok)
	}
	// A write resets the silence.
	r.ActiveAt = tp(89 * time.Minute)
	JudgeTime(&r, t0.Add(90*time.Minute), LivenessRules{}, h)
	if r.Attention.NeedsYou {
		t.Fatalf("written a minute ago: %+v", r.Attention)
	}
}

func TestQuietWithoutHistory(t *testing.T) {
	r := quietRun("now")
	JudgeTime(&r, t0.Add(59*time.Minute), LivenessRules{}, NewHistory())
	if r.Attention.NeedsYou {
		t.Fatalf("within the default ceiling: %+v", r.Attention)
	}
	JudgeTime(&r, t0.Add(60*time.Minute), LivenessRules{}, NewHistory())
	if r.Attention.Code != AttentionQuiet || !strings.Contains(r.Attention.Reason, "no past run of mine says how long it takes, and 1h0m is the most runwatch waits") {
		t.Fatalf("past the default ceiling: %+v", r.Attention)
	}
	if _, ok := r.ETA(t0); ok {
		t.Fatal("an ETA without history")
	}
	c := quietRun("now")
	JudgeTime(&c, t0.Add(21*time.Minute), LivenessRules{QuietAfter: 20 * time.Minute}, nil)
	if c.Attention.Code != AttentionQuiet {
		t.Fatalf("configured ceiling 20m: %+v", c.Attention)
	}
	// A dead holder is a stale lock, not a quiet run; a run without a lock is paused.
	p := quietRun("now")
	p.Locks = nil
	FinalizeRun(&p)
	JudgeTime(&p, t0.Add(5*time.Hour), LivenessRules{}, nil)
	if p.Attention.Code != AttentionPaused {
		t.Fatalf("no lock: %+v", p.Attention)
	}
}

func TestHistoryReplacesAndForgets(t *testing.T) {
	h := NewHistory()
	a := pastRun("a", 2*time.Minute, time.Minute)
	if !h.Observe(&a) || h.Observe(&a) {
		t.Fatal("observing the same run twice must change the history once")
	}
	a2 := pastRun("a", 6*time.Minute, time.Minute)
	h.Observe(&a2)
	if u := h.usualOf(TaskOf(&a), "s1"); u.Runs != 1 || u.Median != 6*time.Minute {
		t.Fatalf("re-read run replaces its contribution: %+v", u)
	}
	h.Forget(a.Key())
	if u := h.usualOf(TaskOf(&a), "S1"); u.Known() {
		t.Fatalf("forgotten run still counted: %+v", u)
	}
}

// A task of one run holds its key alone, no list of one (issue 35); a task of two a list, back to one key
// when one of them goes.
func TestHistoryTaskOfOneRunHoldsNoList(t *testing.T) {
	h := NewHistory()
	a, b := pastRun("a", time.Minute, time.Minute), pastRun("b", 2*time.Minute, time.Minute)
	b.Resumable = &ResumableDetail{TaskName: "other"}
	h.Observe(&a)
	h.Observe(&b)
	if len(h.runsOf.more) != 0 || len(h.runsOf.one) != 2 {
		t.Fatalf("two tasks of one run each: %v", h.runsOf)
	}
	c := pastRun("c", 3*time.Minute, time.Minute)
	h.Observe(&c)
	if _, several := h.runsOf.Of(TaskOf(&a)); len(several) != 2 {
		t.Fatalf("a task of two runs: %v", h.runsOf)
	}
	if u := h.usualOf(TaskOf(&a), "S1"); u.Runs != 2 {
		t.Fatalf("a task of two runs: %+v", u)
	}
	h.Forget(a.Key())
	if one, several := h.runsOf.Of(TaskOf(&c)); one != c.Key() || several != nil {
		t.Fatalf("one of two gone: %v", h.runsOf)
	}
	if u := h.usualOf(TaskOf(&c), "S1"); u.Runs != 1 || u.Median != 3*time.Minute {
		t.Fatalf("the task's run left: %+v", u)
	}
}

// TestStaleLockReasonAgesAtFrameTime: the dead pid's lock age in the reason is counted at render time.
func TestStaleLockReasonAgesAtFrameTime(t *testing.T) {
	r := Run{ID: "x", Kind: KindResumable, StatePath: "/r/x/state.env", Stages: []Stage{{Key: "S1"}}, CurrentStage: "S1",
		Locks: []Lock{{Path: "/r/x/run.lock", PID: 77, AcquiredAt: tp(-24 * time.Minute), Verdict: VerdictStale}}}
	JudgeLock(&r.Locks[0], Env{Now: t0, Proc: deadProcs{}})
	r.Locks[0].Verdict = VerdictStale
	FinalizeRun(&r)
	at := r.Attention
	if at.Code != AttentionStaleLock || at.Reason != "lock held by dead pid 77 (24m)" {
		t.Fatalf("%+v", at)
	}
	if got := at.ReasonAt(t0.Add(10 * time.Minute)); got != "lock held by dead pid 77 (34m)" {
		t.Fatalf("ten minutes later: %q", got)
	}
}

type deadProcs struct{}

func (deadProcs) Alive(int) bool                  { return false }
func (deadProcs) StartTime(int) (time.Time, bool) { return time.Time{}, false }

// Keep (status: each run once, for good) says what Observe says of the same runs, whatever order they come
// in, for every task and stage, and mixed with runs observed.
func TestHistoryKeepSaysWhatObserveSays(t *testing.T) {
	var runs []Run
	for i := range 60 {
		r := pastRun(fmt.Sprintf("r%02d", i), time.Duration(1+i%7)*time.Minute, time.Duration(1+i%3)*time.Second)
		r.Resumable.TaskName = []string{"mine", "theirs", "other"}[i%3]
		if i%5 == 0 {
			r.Stages[1].Status = StageSkipped // counts as no time
		}
		if i%11 == 0 {
			r.Stages[0].CompletedAt = nil // does not count
		}
		runs = append(runs, r)
	}
	observed := NewHistory()
	for i := range runs {
		observed.Observe(&runs[i])
	}
	kept, reversed, mixed := NewHistory(), NewHistory(), NewHistory()
	for i := range runs {
		kept.Keep(&runs[i])
		reversed.Keep(&runs[len(runs)-1-i])
		if i%2 == 0 {
			mixed.Keep(&runs[i])
		} else {
			mixed.Observe(&runs[i])
		}
	}
	for _, task := range []string{"resumable:mine", "resumable:theirs", "resumable:other", "resumable:none"} {
		for _, stage := range []string{"S1", "s2", "S3"} {
			want := observed.usualOf(task, stage)
			for name, h := range map[string]*History{"kept": kept, "kept in reverse": reversed, "mixed": mixed} {
				if got := h.usualOf(task, stage); got != want {
					t.Errorf("%s %s %s: %+v, observed %+v", name, task, stage, got, want)
				}
			}
		}
	}
	if u := kept.usualOf("resumable:mine", "s1"); !u.Known() || u.Runs != 18 {
		t.Fatalf("the runs kept of task mine's S1: %+v, want 18 of its 20 (two lack an end)", u)
	}
	// A run kept after Usual was asked counts at the next ask.
	more := pastRun("late", time.Hour, time.Hour)
	more.Resumable.TaskName = "other"
	kept.Keep(&more)
	observed.Observe(&more)
	if u, want := kept.usualOf("resumable:other", "S1"), observed.usualOf("resumable:other", "S1"); u != want || u.Runs != 19 {
		t.Fatalf("after one more run kept: %+v, observed %+v (want 19 runs: 18 and the late one)", u, want)
	}
}

// The runs of a task judged at one state of the history point at the same usual seconds (the dashboard
// holds 10,000 runs, issue 35), and a run judged before the history changed keeps the numbers it was given.
func TestJudgeTimeSharesATasksUsualSeconds(t *testing.T) {
	h := NewHistory()
	for i, d := range []time.Duration{2 * time.Minute, 4 * time.Minute} {
		p := pastRun("past"+string(rune('a'+i)), d, 10*time.Minute)
		h.Observe(&p)
	}
	a, b := quietRun("a"), quietRun("b")
	JudgeTime(&a, t0, LivenessRules{}, h)
	JudgeTime(&b, t0, LivenessRules{}, h)
	ta, tb := a.Stages[0].Timing, b.Stages[0].Timing
	if ta.UsualMedianSeconds == nil || ta.UsualMedianSeconds != tb.UsualMedianSeconds || ta.UsualHighSeconds != tb.UsualHighSeconds {
		t.Fatalf("two runs of a task judged at once hold their own usual seconds: %p %p", ta.UsualMedianSeconds, tb.UsualMedianSeconds)
	}
	if *ta.UsualMedianSeconds != 120 || *ta.UsualP90Seconds != 240 {
		t.Fatalf("S1 usual: median %d s, p90 %d s; want 120, 240", *ta.UsualMedianSeconds, *ta.UsualP90Seconds)
	}
	later := pastRun("pastc", 30*time.Minute, 10*time.Minute)
	h.Observe(&later)
	JudgeTime(&a, t0, LivenessRules{}, h)
	if got := *a.Stages[0].Timing.UsualP90Seconds; got != 1800 {
		t.Errorf("S1's p90 after a third run: %d s, want 1800", got)
	}
	if got := *b.Stages[0].Timing.UsualP90Seconds; got != 240 {
		t.Errorf("a run judged before the history changed now says %d s, want the 240 it was judged with", got)
	}
}

// A task's usual durations look at that task's runs only: 1,000 runs of a task each, each judged as it is
// observed (as a watcher reads them), looked at every run each time (half a million looks).
func TestHistoryStatsLookAtTheirTasksRunsOnly(t *testing.T) {
	t.Parallel()
	h := NewHistory()
	for i := range 1000 {
		r := pastRun(fmt.Sprintf("r%04d", i), time.Duration(i+1)*time.Minute, time.Minute)
		r.Resumable.TaskName = fmt.Sprintf("task-%04d", i)
		h.Observe(&r)
		if u := h.usualOf(TaskOf(&r), "S1"); u.Runs != 1 || u.Median != time.Duration(i+1)*time.Minute {
			t.Fatalf("run %d's own task says %+v", i, u)
		}
	}
	if h.looked > 2000 {
		t.Fatalf("the stats of 1,000 tasks of a run each looked at %d runs, want at most 2,000", h.looked)
	}
	// A run that moves to another task leaves the first; one forgotten leaves its task.
	a := pastRun("moving", 2*time.Minute, time.Minute)
	a.Resumable.TaskName = "task-0000"
	h.Observe(&a)
	if u := h.usualOf("resumable:task-0000", "S1"); u.Runs != 2 {
		t.Fatalf("task-0000 with the moving run: %+v", u)
	}
	a.Resumable.TaskName = "task-0001"
	h.Observe(&a)
	if u := h.usualOf("resumable:task-0000", "S1"); u.Runs != 1 || u.Median != time.Minute {
		t.Fatalf("task-0000 once the run moved: %+v", u)
	}
	if u := h.usualOf("resumable:task-0001", "S1"); u.Runs != 2 {
		t.Fatalf("task-0001 with the moved run: %+v", u)
	}
	h.Forget(a.Key())
	if u := h.usualOf("resumable:task-0001", "S1"); u.Runs != 1 || u.Median != 2*time.Minute {
		t.Fatalf("task-0001 once the run was forgotten: %+v", u)
	}
}

// A run's own stage is no measure of itself (issue 36): alone in its task's history its finished stages have
// no usual (worked out without a cache for the task, issue 35); with others, its usual is theirs. The same whether the history observed or kept the runs (the
// dashboard, status) and whatever the run's place among the samples; a remote run's stages were never
// counted, so nothing of it is left out.
func TestUsualLeavesTheRunItselfOut(t *testing.T) {
	alone := pastRun("alone", 3*time.Minute, 10*time.Minute)
	h := NewHistory()
	h.Observe(&alone)
	JudgeTime(&alone, t0, LivenessRules{}, h)
	if u := alone.Stages[0].Timing.Usual(); u.Known() {
		t.Fatalf("a run alone in its task says S1 %q of its own 3m", u.String())
	}
	if len(h.stats) != 0 {
		t.Fatalf("a run alone in its task made its task a cache of usual durations: %v", h.stats)
	}
	mins := []time.Duration{1, 2, 3, 4, 5, 6, 7}
	for _, keep := range []bool{false, true} {
		h := NewHistory()
		runs := make([]Run, len(mins))
		for i, m := range mins {
			runs[i] = pastRun(fmt.Sprintf("r%d", i), m*time.Minute, time.Minute)
			if keep {
				h.Keep(&runs[i])
			} else {
				h.Observe(&runs[i])
			}
		}
		for i := range runs {
			others := NewHistory()
			for j := range runs {
				if j != i {
					others.Observe(&runs[j])
				}
			}
			want := others.usualOf("resumable:mine", "S1")
			JudgeTime(&runs[i], t0, LivenessRules{}, h)
			if got := runs[i].Stages[0].Timing.Usual(); got.Runs != 6 || got.String() != want.String() || got.P90 != want.P90 {
				t.Errorf("kept %v, run %d (S1 %v): %+v, want the others' %+v", keep, i, mins[i], got, want)
			}
		}
	}
	remote := pastRun("far", 3*time.Minute, time.Minute)
	remote.Remote = &RemoteRef{Host: "h"}
	h.Observe(&remote) // not counted: a remote run
	JudgeTime(&remote, t0, LivenessRules{}, h)
	if u := remote.Stages[0].Timing.Usual(); u.Runs != 1 {
		t.Errorf("a remote run's usual left a local run out: %+v", u)
	}
}

// The facts status keeps aside say what the run's own samples are, so its judgement leaves them out too.
func TestTimeFactsBinaryKeepsWhatIsOwn(t *testing.T) {
	r := pastRun("x", time.Minute, time.Minute)
	r.Stages[1].Status = StageSkipped
	f := FactsOf(&r)
	b, _ := f.AppendBinary(nil)
	var g TimeFacts
	if err := g.UnmarshalBinary(b); err != nil || !g.Counted || !g.Stages[1].Skipped || g.Stages[0].Skipped {
		t.Fatalf("read back: %v %+v", err, g)
	}
}

// An orphaned run stopped at its running phase: that phase reads as the run does (stalled), and the run has
// no ETA; the phases around it read as their files say. Within the grace it is running and nothing stopped.
func TestStoppedAtIsWhereAStalledRunStopped(t *testing.T) {
	h := NewHistory()
	past := orphanRun()
	past.StatePath, past.Stages[1].Status = "/q/MANIFEST.yaml", StageCompleted
	past.Stages[1].CompletedAt = tp(time.Minute)
	past.Stages[0].StartedAt, past.Stages[0].CompletedAt = tp(-2*time.Minute), tp(-time.Minute)
	h.Observe(&past)
	r := orphanRun()
	JudgeTime(&r, t0.Add(time.Minute), LivenessRules{}, h)
	if _, ok := r.StoppedAt(&r.Stages[1]); ok {
		t.Fatalf("within the grace the phase is stopped: %s", r.Status)
	}
	if _, ok := r.ETA(t0.Add(time.Minute)); !ok {
		t.Fatal("a running run with history has no ETA")
	}
	JudgeTime(&r, t0.Add(time.Hour), LivenessRules{}, h)
	if st, ok := r.StoppedAt(&r.Stages[1]); !ok || st != StatusStalled {
		t.Errorf("orphaned: StoppedAt %q %v, want stalled", st, ok)
	}
	if _, ok := r.StoppedAt(&r.Stages[0]); ok {
		t.Error("a done phase of the stalled run is stopped")
	}
	if left, ok := r.ETA(t0.Add(time.Hour)); ok {
		t.Errorf("orphaned run has an ETA: %v", left)
	}
}

// usualOf is what the runs seen say about stage of task, as the judges read it.
func (h *History) usualOf(task, stage string) Usual {
	u, _ := h.usual(task, stage, 0, false)
	return u
}

// A task's cached usual durations follow each run observed, replaced or moved, rather than being worked out
// again over all the task's runs for the next judgement: 1,000 runs of one task, each judged as it is
// observed (as a dashboard's first read judges each run it shows), looked at half a million runs (issue
// 35). What they say is what working them out again says, after every change.
func TestHistoryStatsFollowEachRun(t *testing.T) {
	t.Parallel()
	h := NewHistory()
	for i := range 1000 {
		r := pastRun(fmt.Sprintf("r%04d", i), time.Duration(i%37+1)*time.Minute, time.Duration(i%11+1)*time.Second)
		h.Observe(&r)
		h.usualOf(TaskOf(&r), "S1")
	}
	if h.looked > 2000 {
		t.Fatalf("1,000 runs of one task, each judged as observed, looked at %d runs, want at most 2,000", h.looked)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	tasks := []string{"a", "b", "mine"}
	for step := range 3000 {
		key := fmt.Sprintf("r%04d", rng.IntN(1100))
		if rng.IntN(10) == 0 {
			h.Forget("/r/" + key + "/state.env")
		} else {
			r := pastRun(key, time.Duration(rng.IntN(40)+1)*time.Minute, time.Duration(rng.IntN(5))*time.Second)
			r.Resumable.TaskName = tasks[rng.IntN(len(tasks))]
			if rng.IntN(5) == 0 {
				r.Stages = r.Stages[:1]
			}
			h.Observe(&r)
		}
		task := "resumable:" + tasks[rng.IntN(len(tasks))]
		h.usualOf(task, "S1") // caches the task's stats
		h.mu.Lock()
		for _, tk := range tasks {
			cached, ok := h.stats["resumable:"+tk]
			if !ok {
				continue
			}
			fresh := h.statsOf("resumable:" + tk)
			if len(cached) != len(fresh) {
				h.mu.Unlock()
				t.Fatalf("step %d, task %s: %d stages cached, %d worked out again", step, tk, len(cached), len(fresh))
			}
			for stage, o := range fresh {
				if c := cached[stage]; c == nil || c.u != o.u || !slices.Equal(c.sorted, o.sorted) {
					h.mu.Unlock()
					t.Fatalf("step %d, task %s, stage %s: cached %+v, worked out again %+v", step, tk, stage, c, o)
				}
			}
		}
		h.mu.Unlock()
	}
}

// A stage with no start, no end and no past run has no timing (the document leaves an empty one out, and a
// run read from a host has none), and the timings kept are the stages' own (issue 35).
func TestJudgeTimeKeepsNoEmptyTiming(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	r := Run{ID: "r", Kind: KindResumable, Stages: []Stage{{Key: "S1", Status: StageCompleted, StartedAt: &at, CompletedAt: &at},
		{Key: "S2", Status: StagePending}, {Key: "S3", Status: StagePending}}}
	JudgeTime(&r, at.Add(time.Hour), LivenessRules{}, NewHistory())
	if r.Stages[1].Timing != nil || r.Stages[2].Timing != nil {
		t.Errorf("pending stages with nothing known hold timings %+v, %+v", r.Stages[1].Timing, r.Stages[2].Timing)
	}
	if s := r.Stages[0].Timing; s == nil || s.Started != &at || s.Ended != &at {
		t.Errorf("S1's timing is %+v, want its start and end", s)
	}
}
