package model

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// StageSpan is when a stage last started and when it completed after that start (zero when it has not).
type StageSpan struct {
	Start time.Time
	End   time.Time
}

// Liveness defaults: how long a jonggrang phase marked running may go unwritten with nothing alive to run
// it, and how long a resumable run held by a live process may stay silent when no past run says how long
// its stage takes.
const (
	DefaultOrphanAfter = 5 * time.Minute
	DefaultQuietAfter  = 60 * time.Minute
	// quietFactor and quietFloor: with history, a run is quiet past max(quietFactor × the stage's usual p90,
	// quietFloor): far longer than the stage takes, and never for a pause of a few minutes.
	quietFactor = 5
	quietFloor  = 15 * time.Minute
)

// LivenessRules are the thresholds of the time-based judgements (config orphan_after, quiet_after).
type LivenessRules struct {
	OrphanAfter time.Duration
	QuietAfter  time.Duration
}

func (lr LivenessRules) orphanAfter() time.Duration {
	if lr.OrphanAfter > 0 {
		return lr.OrphanAfter
	}
	return DefaultOrphanAfter
}

func (lr LivenessRules) quietAfter() time.Duration {
	if lr.QuietAfter > 0 {
		return lr.QuietAfter
	}
	return DefaultQuietAfter
}

// RunTiming is a run's place in time: when its current stage started, and how long the rest usually takes.
// The times it holds do not move with the clock; ElapsedSeconds and ETASeconds are filled for an instant by
// TimingAt (status does, at generated_at), so a run read twice reads the same. In JSON a field that holds
// nothing is left out, and so is the whole object when it holds nothing but the task (IsZero).
type RunTiming struct {
	// Task is what durations are learned by: resumable TASK_NAME, jonggrang work_type.
	Task string `json:"task"`
	// Started is when the current stage started, when a file says so.
	Started *time.Time `json:"started,omitempty"`
	// Remaining is the usual length of what is left after the current stage (the stages still to run), with
	// Runs the fewest past runs any of them is known from; nil when some stage left has no history.
	RemainingSeconds *int64 `json:"remaining_after_current_seconds,omitempty"`
	Runs             int    `json:"runs,omitempty"`
	ElapsedSeconds   *int64 `json:"elapsed_seconds,omitempty"`
	ETASeconds       *int64 `json:"eta_seconds,omitempty"`
}

// IsZero reports whether the timing says nothing about time: the document leaves it out.
func (t *RunTiming) IsZero() bool {
	return t == nil || (t.Started == nil && t.RemainingSeconds == nil && t.Runs == 0 && t.ElapsedSeconds == nil && t.ETASeconds == nil)
}

// StageTiming is one stage's time and what past runs of the task say about it. In JSON a field that holds
// nothing is left out, and so is the whole object when nothing is known (IsZero): a stage not started
// that no past run finished.
type StageTiming struct {
	Started            *time.Time `json:"started,omitempty"`
	Ended              *time.Time `json:"ended,omitempty"`
	UsualMedianSeconds *int64     `json:"usual_median_seconds,omitempty"`
	UsualP90Seconds    *int64     `json:"usual_p90_seconds,omitempty"`
	// UsualLowSeconds and UsualHighSeconds are the 25th and 75th percentiles: "usually 4–6m".
	UsualLowSeconds  *int64 `json:"usual_low_seconds,omitempty"`
	UsualHighSeconds *int64 `json:"usual_high_seconds,omitempty"`
	Runs             int    `json:"runs,omitempty"`
	ElapsedSeconds   *int64 `json:"elapsed_seconds,omitempty"`
}

// IsZero reports whether the timing holds nothing: the document leaves it out.
func (t *StageTiming) IsZero() bool {
	return t == nil || (t.Started == nil && t.Ended == nil && t.UsualMedianSeconds == nil && t.UsualP90Seconds == nil &&
		t.UsualLowSeconds == nil && t.UsualHighSeconds == nil && t.Runs == 0 && t.ElapsedSeconds == nil)
}

// Usual is what the finished runs seen say about one stage of a task.
type Usual struct {
	Median, P90, Low, High time.Duration
	Runs                   int
}

// Known reports whether any past run finished the stage.
func (u Usual) Known() bool { return u.Runs > 0 }

// Usual returns the stage's usual duration as its timing holds it.
func (t *StageTiming) Usual() Usual {
	if t == nil || t.Runs == 0 || t.UsualMedianSeconds == nil {
		return Usual{}
	}
	d := func(p *int64) time.Duration {
		if p == nil {
			return 0
		}
		return time.Duration(*p) * time.Second
	}
	return Usual{Median: d(t.UsualMedianSeconds), P90: d(t.UsualP90Seconds), Low: d(t.UsualLowSeconds), High: d(t.UsualHighSeconds), Runs: t.Runs}
}

// String renders "usually 4–6m (9 runs)".
func (u Usual) String() string {
	if !u.Known() {
		return ""
	}
	runs := fmt.Sprintf("%d runs", u.Runs)
	if u.Runs == 1 {
		runs = "1 run"
	}
	lo, hi := HumanDuration(u.Low), HumanDuration(u.High)
	if lo == hi {
		return fmt.Sprintf("usually %s (%s)", HumanDuration(u.Median), runs)
	}
	return fmt.Sprintf("usually %s–%s (%s)", lo, hi, runs)
}

// History learns, from the runs as they are read, how long each stage of each task usually takes: a stage
// counts once it has completed with a known start and end (skipped counts as no time). Each run's
// contribution is replaced when it is read again and dropped when it goes, so memory is bounded by the
// runs. Safe for concurrent use.
type History struct {
	mu    sync.Mutex
	byRun map[string]contribution
	// stats caches the sorted samples of a (task, stage) until a contribution to that task changes.
	stats   map[string]map[string][]time.Duration
	version uint64
}

type contribution struct {
	task   string
	stages map[string]time.Duration // upper-case stage key → duration
}

// NewHistory returns an empty history.
func NewHistory() *History {
	return &History{byRun: map[string]contribution{}, stats: map[string]map[string][]time.Duration{}}
}

// TaskOf is the name a run's durations are learned under: resumable TASK_NAME (its title when unset),
// jonggrang work_type.
func TaskOf(r *Run) string {
	switch {
	case r.Jonggrang != nil:
		if w := strings.TrimSpace(r.Jonggrang.WorkType); w != "" {
			return "jonggrang:" + strings.ToUpper(w)
		}
		return "jonggrang:"
	case r.Resumable != nil && r.Resumable.TaskName != "":
		return "resumable:" + r.Resumable.TaskName
	}
	return string(r.Kind) + ":" + r.Title
}

// Observe records (or replaces) what run r says about its stages. It reports whether the history changed.
func (h *History) Observe(r *Run) bool {
	if h == nil || r.Remote != nil {
		return false
	}
	c := contribution{task: TaskOf(r), stages: map[string]time.Duration{}}
	for _, s := range r.Stages {
		switch {
		case s.Status == StageSkipped:
			c.stages[strings.ToUpper(s.Key)] = 0
		case s.Status == StageCompleted && s.StartedAt != nil && s.CompletedAt != nil && !s.CompletedAt.Before(*s.StartedAt):
			c.stages[strings.ToUpper(s.Key)] = s.CompletedAt.Sub(*s.StartedAt)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	old, had := h.byRun[r.Key()]
	if had && old.task == c.task && mapsEqual(old.stages, c.stages) {
		return false
	}
	if len(c.stages) == 0 && !had {
		return false
	}
	if had {
		delete(h.stats, old.task)
	}
	delete(h.stats, c.task)
	if len(c.stages) == 0 {
		delete(h.byRun, r.Key())
	} else {
		h.byRun[r.Key()] = c
	}
	h.version++
	return true
}

// Forget drops the contribution of the run with key (a run that went away).
func (h *History) Forget(key string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if old, ok := h.byRun[key]; ok {
		delete(h.byRun, key)
		delete(h.stats, old.task)
		h.version++
	}
}

// Version changes whenever what the history says changes.
func (h *History) Version() uint64 {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.version
}

// Usual returns what the runs seen say about stage of task.
func (h *History) Usual(task, stage string) Usual {
	if h == nil {
		return Usual{}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	per, ok := h.stats[task]
	if !ok {
		per = map[string][]time.Duration{}
		for _, c := range h.byRun {
			if c.task != task {
				continue
			}
			for k, d := range c.stages {
				per[k] = append(per[k], d)
			}
		}
		for _, ds := range per {
			slices.Sort(ds)
		}
		h.stats[task] = per
	}
	ds := per[strings.ToUpper(stage)]
	if len(ds) == 0 {
		return Usual{}
	}
	return Usual{Median: quantile(ds, 0.5), P90: quantile(ds, 0.9), Low: quantile(ds, 0.25), High: quantile(ds, 0.75), Runs: len(ds)}
}

// quantile of sorted samples, by the nearest rank (a duration that some run really took).
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(len(sorted)-1, i))]
}

func mapsEqual(a, b map[string]time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func secs(d time.Duration) *int64 {
	s := int64(d.Round(time.Second) / time.Second)
	return &s
}

// JudgeTime is the part of the judgement that the passage of time decides, given what the history says: each
// stage's timing and the run's, and whether a run that claims to be worked on is orphaned (jonggrang: a phase
// running with nothing alive to run it, unwritten longer than rules.OrphanAfter) or quiet (resumable: its
// lock's holder is alive but the run has written nothing for far longer than its stage usually takes). It
// starts again from the time-free judgement (DeriveStatus, Judge), so it may be called again at any time;
// RecheckAt says when its answer changes by the clock alone.
func JudgeTime(r *Run, now time.Time, rules LivenessRules, h *History) {
	r.Status = DeriveStatus(r)
	r.Attention = Judge(r)
	task := TaskOf(r)
	var rt *RunTiming
	if len(r.Stages) > 0 {
		rt = &RunTiming{Task: task}
	}
	cur := -1
	for i := range r.Stages {
		s := &r.Stages[i]
		u := h.Usual(task, s.Key)
		st := &StageTiming{Started: s.StartedAt, Ended: s.CompletedAt, Runs: u.Runs}
		if u.Known() {
			st.UsualMedianSeconds, st.UsualP90Seconds = secs(u.Median), secs(u.P90)
			st.UsualLowSeconds, st.UsualHighSeconds = secs(u.Low), secs(u.High)
		}
		s.Timing = st
		if equalFold(s.Key, r.CurrentStage) {
			cur = i
		}
	}
	if rt != nil && cur >= 0 && !r.Stages[cur].Status.Done() {
		rt.Started = r.Stages[cur].StartedAt
		var rest time.Duration
		runs, known := 0, true
		for _, s := range r.Stages[cur+1:] {
			if s.Status.Done() {
				continue
			}
			u := s.Timing.Usual()
			if !u.Known() {
				known = false
				break
			}
			rest += u.Median
			if runs == 0 || u.Runs < runs {
				runs = u.Runs
			}
		}
		if known {
			if u := r.Stages[cur].Timing.Usual(); u.Known() {
				rt.RemainingSeconds = secs(rest)
				rt.Runs = runs
				if rt.Runs == 0 || u.Runs < rt.Runs {
					rt.Runs = u.Runs
				}
			}
		}
	}
	r.Timing = rt
	r.Attention.recheck = time.Time{}
	if r.Archived || r.Attention.NeedsYou || r.Status != StatusRunning || r.ActiveAt == nil {
		return
	}
	silent := now.Sub(*r.ActiveAt)
	if r.Kind == KindJonggrang && orphanable(r) {
		after := rules.orphanAfter()
		if silent < after {
			r.Attention.recheck = r.ActiveAt.Add(after)
			return
		}
		r.Status = StatusStalled
		label := currentLabel(r)
		if s, ok := firstStage(r, StageRunning); ok {
			label = r.Kind.StageWord() + " " + s.Key
			if s.Name != "" && s.Name != s.Key {
				label += " " + s.Name
			}
		}
		at := Attention{NeedsYou: true, Rank: 0, Code: AttentionOrphaned, Action: ActionResume, Command: "runwatch brief " + shellWord(r.ID),
			age: newAgeText(label+" is marked running but nothing has run it for ", *r.ActiveAt,
				"; the orchestrator is gone (no live agent lock, no live worker): resume it", false, now)}
		at.Reason = at.age.was
		r.Attention = at
		return
	}
	if r.Kind == KindResumable {
		l, ok := firstLock(r, VerdictLive)
		if !ok || l.Shared {
			return
		}
		after := rules.quietAfter()
		stage := currentLabel(r)
		usual := "no past run of " + task[strings.IndexByte(task, ':')+1:] + " says how long it takes, and " + HumanDuration(after) + " is the most runwatch waits"
		if cur >= 0 {
			if u := r.Stages[cur].Timing.Usual(); u.Known() {
				after = max(quietFloor, quietFactor*u.P90)
				took := fmt.Sprintf("%d runs", u.Runs)
				if u.Runs == 1 {
					took = "1 run"
				}
				usual = "it usually takes " + HumanDuration(u.Median) + " (" + took + ")"
			}
		}
		if silent < after {
			r.Attention.recheck = r.ActiveAt.Add(after)
			return
		}
		who := lockWho(l)
		if l.PID > 0 {
			who = fmt.Sprintf("pid %d", l.PID)
		}
		at := Attention{NeedsYou: true, Rank: 1, Code: AttentionQuiet, Action: ActionBrief, Command: "runwatch brief " + shellWord(r.ID),
			age: newAgeText(who+" is alive but "+stage+" has been silent for ", *r.ActiveAt,
				"; "+usual+": look at the agent, and if it hangs stop it and resume from the brief", false, now)}
		at.Reason = at.age.was
		r.Attention = at
	}
}

// orphanable: a jonggrang run that says a phase runs, with no live lock of its own and no live worker.
func orphanable(r *Run) bool {
	if !strings.EqualFold(strings.TrimSpace(r.RawStatus), "running") {
		if _, ok := firstStage(r, StageRunning); !ok {
			return false
		}
	}
	for _, l := range r.Locks {
		if !l.Shared && l.Verdict != VerdictStale {
			return false // a live one runs it; an unknown one may
		}
	}
	if r.Jonggrang != nil {
		for _, g := range r.Jonggrang.Groups {
			if g.Alive && g.FeatureID == r.ID {
				return false
			}
		}
	}
	return true
}

// TimingAt fills the clock-dependent timing fields (elapsed, ETA) for the instant now: status does, once,
// for the document it writes.
func TimingAt(r *Run, now time.Time) {
	for i := range r.Stages {
		st := r.Stages[i].Timing
		if st == nil || st.Started == nil {
			continue
		}
		end := now
		if st.Ended != nil {
			end = *st.Ended
		}
		if !end.Before(*st.Started) {
			st.ElapsedSeconds = secs(end.Sub(*st.Started))
		}
	}
	if rt := r.Timing; rt != nil {
		if rt.Started != nil && !now.Before(*rt.Started) {
			rt.ElapsedSeconds = secs(now.Sub(*rt.Started))
		}
		if left, ok := r.ETA(now); ok {
			rt.ETASeconds = secs(left)
		}
	}
}

// ETA is how long the run usually has left at now: what its current stage usually takes beyond what it has
// run, plus the usual length of the stages after it. ok is false when some stage left has no history.
func (r *Run) ETA(now time.Time) (left time.Duration, ok bool) {
	rt := r.Timing
	if rt == nil || rt.RemainingSeconds == nil {
		return 0, false
	}
	var cur *Stage
	for i := range r.Stages {
		if equalFold(r.Stages[i].Key, r.CurrentStage) {
			cur = &r.Stages[i]
		}
	}
	if cur == nil {
		return 0, false
	}
	u := cur.Timing.Usual()
	left = time.Duration(*rt.RemainingSeconds) * time.Second
	ran := time.Duration(0)
	if rt.Started != nil && now.After(*rt.Started) {
		ran = now.Sub(*rt.Started)
	}
	return left + max(0, u.Median-ran), true
}

// ReasonAt is the reason with its age as of now: the dashboard renders it per frame, so "for 8m" keeps
// counting. A reason without an age (or read back from JSON) is Reason itself.
func (a Attention) ReasonAt(now time.Time) string {
	if !a.age.set() {
		return a.Reason
	}
	return a.age.at(now)
}

// AgeFrom is the instant the reason's age counts from (zero: the reason holds none).
func (a Attention) AgeFrom() time.Time { return a.age.from }

// RecheckAt is when the passage of time alone changes the judgement (zero: it does not).
func (a Attention) RecheckAt() time.Time { return a.recheck }
