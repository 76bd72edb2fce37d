package model

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"runwatch/shellword"
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
// contribution is replaced when it is read again and dropped when it goes (Observe, Forget), so memory is
// bounded by the runs; or it is kept for good (Keep). Safe for concurrent use.
type History struct {
	mu    sync.Mutex
	byRun map[string]contribution
	// runsOf is the keys in byRun by task: a task's stats look at its own runs, not at every run (with a
	// task a run, judging each run as it was read looked at all of them each time: 8% of a host's events
	// over 1,000 runs, issue 35). A task is often named for its run, so most hold one. looked counts the
	// runs statsOf looked at, for a test.
	runsOf KeyIndex
	looked int
	// kept is what Keep was given: a sample a stage that counts, sorted by task, stage and duration once
	// Usual needs it (keptSorted); names numbers the tasks and stage keys it names, nameOf is the reverse.
	kept       []keptSample
	keptSorted bool
	names      map[string]uint32
	nameOf     []string
	// stats caches what the samples of a (task, stage) say until a contribution to that task changes.
	stats   map[string]map[string]*usualOf
	version uint64
}

// usualOf is a stage's Usual with its durations in whole seconds: the timing of every run of the task points
// at these (JudgeTime), rather than each stage of 10,000 runs holding four of its own.
type usualOf struct {
	u Usual
	// median, p90, low, high
	secs [4]int64
	// sorted are the samples; less[j] is the stage's usual without one sample below which j of the four
	// quantiles of the rest fall (without): at most five, shared by every run of the task as secs is.
	sorted []time.Duration
	less   [5]*usualOf
}

// newUsualOf is what the sorted samples say.
func newUsualOf(sorted []time.Duration) *usualOf {
	n := len(sorted)
	q := func(q float64) time.Duration { return sorted[nearestRank(n, q)] }
	u := Usual{Median: q(0.5), P90: q(0.9), Low: q(0.25), High: q(0.75), Runs: n}
	return &usualOf{u: u, secs: [4]int64{seconds(u.Median), seconds(u.P90), seconds(u.Low), seconds(u.High)}, sorted: sorted}
}

// without is o with one sample of duration own left out when mine (nil when none stays). Which sample goes
// changes the four quantiles only by how many of their ranks fall below it, so five answers cover them all.
func (o *usualOf) without(own time.Duration, mine bool) *usualOf {
	at := func(i int) time.Duration { return o.sorted[i] }
	skip, n := leftOut(len(o.sorted), at, own, mine)
	switch {
	case n == len(o.sorted):
		return o
	case n == 0:
		return nil
	}
	j := 0
	for _, q := range []float64{0.25, 0.5, 0.75, 0.9} {
		if nearestRank(n, q) < skip {
			j++
		}
	}
	if o.less[j] == nil {
		q := func(q float64) time.Duration { return o.sorted[skipped(nearestRank(n, q), skip)] }
		u := Usual{Median: q(0.5), P90: q(0.9), Low: q(0.25), High: q(0.75), Runs: n}
		o.less[j] = &usualOf{u: u, secs: [4]int64{seconds(u.Median), seconds(u.P90), seconds(u.Low), seconds(u.High)}}
	}
	return o.less[j]
}

type contribution struct {
	task string
	// stages: upper-case stage key → duration, sorted by key, each key once (a later stage of the same key
	// wins). A slice, not a map: a map cost ~400 bytes a run of the dashboard's 10,000 (issue 35).
	stages []stageTook
}

type stageTook struct {
	key string
	d   time.Duration
}

// keptSample is one duration Keep was given: 16 bytes without a pointer, of task and stage names[task],
// names[stage] (upper case).
type keptSample struct {
	task, stage uint32
	d           time.Duration
}

// NewHistory returns an empty history.
func NewHistory() *History {
	return &History{byRun: map[string]contribution{}, runsOf: NewKeyIndex(), names: map[string]uint32{},
		stats: map[string]map[string]*usualOf{}}
}

func contributionOf(r *Run) contribution {
	c := contribution{task: TaskOf(r)}
	for _, s := range r.Stages {
		if d, ok := sampleOf(s.Status == StageSkipped, s.Status == StageCompleted, s.StartedAt, s.CompletedAt); ok {
			c.stages = append(c.stages, stageTook{strings.ToUpper(s.Key), d})
		}
	}
	// Sorted stably by key and the last of each key kept: what assigning them in order into a map kept.
	slices.SortStableFunc(c.stages, func(a, b stageTook) int { return strings.Compare(a.key, b.key) })
	out := c.stages[:0]
	for i, st := range c.stages {
		if i+1 < len(c.stages) && c.stages[i+1].key == st.key {
			continue
		}
		out = append(out, st)
	}
	c.stages = slices.Clone(out) // no spare capacity held for the run's life
	return c
}

// sampleOf is what a stage tells the history: a skipped stage took no time, a completed one its end less its
// start when both are known; any other tells nothing (ok false).
func sampleOf(skipped, completed bool, start, end *time.Time) (d time.Duration, ok bool) {
	switch {
	case skipped:
		return 0, true
	case completed && start != nil && end != nil && !end.Before(*start):
		return end.Sub(*start), true
	}
	return 0, false
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
	c := contributionOf(r)
	h.mu.Lock()
	defer h.mu.Unlock()
	old, had := h.byRun[r.Key()]
	if had && old.task == c.task && slices.Equal(old.stages, c.stages) {
		return false
	}
	if len(c.stages) == 0 && !had {
		return false
	}
	key := r.Key()
	if had {
		h.restat(old, -1)
		h.runsOf.Del(old.task, key)
	}
	h.restat(c, 1)
	if len(c.stages) == 0 {
		delete(h.byRun, key)
	} else {
		h.byRun[key] = c
		h.runsOf.Add(c.task, key)
	}
	h.version++
	return true
}

// restat takes c's samples out of its task's cached stats (sign -1) or puts them in (1), when they are
// cached: worked out again from every run of the task on each change, a dashboard's first read of 8,000
// local runs spent a fifth of its CPU here, as each run read is judged at once (issue 35). A stage's
// sorted samples change in place: only the cached usualOf reads them (without), and each change makes a new
// one, so what runs already point at stays as it was.
func (h *History) restat(c contribution, sign int) {
	per := h.stats[c.task]
	if per == nil {
		return
	}
	for _, st := range c.stages {
		var ds []time.Duration
		if o := per[st.key]; o != nil {
			ds = o.sorted
		}
		i, found := slices.BinarySearch(ds, st.d)
		switch {
		case sign > 0:
			ds = slices.Insert(ds, i, st.d)
		case found:
			ds = slices.Delete(ds, i, i+1)
		default:
			delete(h.stats, c.task) // not among them: worked out again when next asked
			return
		}
		if len(ds) == 0 {
			delete(per, st.key)
			continue
		}
		per[st.key] = newUsualOf(ds)
	}
}

// Keep records what run r says about its stages for good: it cannot be replaced nor forgotten, and what
// stays of r is 16 bytes a stage that counts, without its key or a pointer: for a reader that reads each
// run once and judges them all once every one is read (status over 100,000 runs kept a key and two maps a
// run). A task's name and a stage's key stay once, however many runs name them. Each run must be given
// once, and not also to Observe.
func (h *History) Keep(r *Run) {
	if h == nil || r.Remote != nil {
		return
	}
	c := contributionOf(r)
	if len(c.stages) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	task := h.name(c.task)
	for _, st := range c.stages {
		h.kept = append(h.kept, keptSample{task: task, stage: h.name(st.key), d: st.d})
	}
	h.keptSorted = false
	delete(h.stats, c.task)
	h.version++
}

// name is s's number in names, given it if it has none. The name kept is a copy: a task and a stage's key
// may be cut from the bytes of a run file, which they would keep whole.
func (h *History) name(s string) uint32 {
	if n, ok := h.names[s]; ok {
		return n
	}
	n := uint32(len(h.nameOf))
	s = strings.Clone(s)
	h.names[s] = n
	h.nameOf = append(h.nameOf, s)
	return n
}

// keptOf is the samples Keep was given of task (of stage too when stage is not nil, upper case), sorted by
// stage and duration.
func (h *History) keptOf(task string, stage *string) []keptSample {
	t, ok := h.names[task]
	if !ok {
		return nil
	}
	if !h.keptSorted {
		slices.SortFunc(h.kept, func(a, b keptSample) int {
			if a.task != b.task {
				return cmp.Compare(a.task, b.task)
			}
			if a.stage != b.stage {
				return cmp.Compare(a.stage, b.stage)
			}
			return cmp.Compare(a.d, b.d)
		})
		h.keptSorted = true
	}
	lo, hi := uint64(t)<<32, uint64(t+1)<<32
	if stage != nil {
		st, ok := h.names[*stage]
		if !ok {
			return nil
		}
		lo, hi = lo|uint64(st), lo|uint64(st)+1
	}
	at := func(k uint64) int {
		i, _ := slices.BinarySearchFunc(h.kept, k, func(s keptSample, k uint64) int {
			return cmp.Compare(uint64(s.task)<<32|uint64(s.stage), k)
		})
		return i
	}
	return h.kept[at(lo):at(hi)]
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
		h.runsOf.Del(old.task, key)
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

// usual is what the runs seen say about stage of task, with its durations in whole seconds when the history caches them (nil when it does not):
// the same four numbers for every caller until a contribution to the task changes, never written through.
// With mine, one sample of duration own is left out: the run asking, whose own stage is no measure of
// itself (a run that alone finished the stage read "usually 3m (1 run)" of its own 3m).
func (h *History) usual(task, stage string, own time.Duration, mine bool) (Usual, *[4]int64) {
	if h == nil {
		return Usual{}, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	stage = strings.ToUpper(stage)
	if len(h.byRun) == 0 {
		// Only kept samples: they are sorted in place, and nothing a task is cached (over 100,000 runs of
		// as many tasks a cache would hold every sample again, in a map a task).
		ks := h.keptOf(task, &stage)
		at := func(i int) time.Duration { return ks[i].d }
		skip, n := leftOut(len(ks), at, own, mine)
		if n == 0 {
			return Usual{}, nil
		}
		q := func(q float64) time.Duration { return at(skipped(nearestRank(n, q), skip)) }
		return Usual{Median: q(0.5), P90: q(0.9), Low: q(0.25), High: q(0.75), Runs: n}, nil
	}
	per, ok := h.stats[task]
	if !ok {
		if h.alone(task, stage, mine) {
			return Usual{}, nil
		}
		per = h.statsOf(task)
		h.stats[task] = per
	}
	o := per[stage]
	if o == nil {
		return Usual{}, nil
	}
	if o = o.without(own, mine); o == nil {
		return Usual{}, nil
	}
	return o.u, &o.secs
}

// alone reports whether task's only samples of stage can be the asking run's own: one run of the task is
// read, and it has no sample of stage, or it is the asker (whose own sample of stage counts, mine). The
// usual is then unknown, and no cache is made for the task: with a task a run, the caches cost some 600
// bytes a run at 10,000 runs (issue 35).
func (h *History) alone(task, stage string, mine bool) bool {
	one, _ := h.runsOf.Of(task)
	if one == "" || len(h.kept) > 0 {
		return false
	}
	if mine {
		return true
	}
	_, found := slices.BinarySearchFunc(h.byRun[one].stages, stage, func(s stageTook, key string) int {
		return strings.Compare(s.key, key)
	})
	return !found
}

// leftOut is where the sample to leave out lies among n sorted samples (at(i) the i-th), and how many stay:
// n and skip n when there is none to leave out (not mine, or no sample of that duration).
func leftOut(n int, at func(int) time.Duration, own time.Duration, mine bool) (skip, stay int) {
	if !mine {
		return n, n
	}
	i := sort.Search(n, func(i int) bool { return at(i) >= own })
	if i == n || at(i) != own {
		return n, n
	}
	return i, n - 1
}

// skipped maps index k among the samples that stay to its index among them all, skip being left out.
func skipped(k, skip int) int {
	if k >= skip {
		return k + 1
	}
	return k
}

// statsOf works out what the samples of task say about each of its stages, keeping them sorted (8 bytes a
// sample) so a run's own can be left out of its usual (usualOf.without).
func (h *History) statsOf(task string) map[string]*usualOf {
	samples := map[string][]time.Duration{}
	for _, k := range h.keptOf(task, nil) {
		samples[h.nameOf[k.stage]] = append(samples[h.nameOf[k.stage]], k.d)
	}
	look := func(k string) {
		h.looked++
		for _, st := range h.byRun[k].stages {
			samples[st.key] = append(samples[st.key], st.d)
		}
	}
	one, several := h.runsOf.Of(task)
	if one != "" {
		look(one)
	}
	for _, k := range several {
		look(k)
	}
	per := make(map[string]*usualOf, len(samples))
	for k, ds := range samples {
		slices.Sort(ds)
		per[k] = newUsualOf(ds)
	}
	return per
}

// nearestRank is the index of quantile q among n sorted samples.
func nearestRank(n int, q float64) int {
	i := int(q*float64(n)+0.5) - 1
	return max(0, min(n-1, i))
}

func secs(d time.Duration) *int64 {
	s := seconds(d)
	return &s
}

func seconds(d time.Duration) int64 { return int64(d.Round(time.Second) / time.Second) }

// JudgeTime is the part of the judgement that the passage of time decides, given what the history says: each
// stage's timing and the run's, and whether a run that claims to be worked on is orphaned (jonggrang: a phase
// running with nothing alive to run it, unwritten longer than rules.OrphanAfter) or quiet (resumable: its
// lock's holder is alive but the run has written nothing for far longer than its stage usually takes). It
// starts again from the time-free judgement (DeriveStatus, Judge), so it may be called again at any time;
// RecheckAt says when its answer changes by the clock alone.
func JudgeTime(r *Run, now time.Time, rules LivenessRules, h *History) {
	r.Status = DeriveStatus(r)
	r.Attention = Judge(r)
	j := FactsOf(r).Judge(now, rules, h)
	r.Status, r.Attention, r.Timing = j.Status, j.Attention, j.Timing
	for i := range r.Stages {
		r.Stages[i].Timing = j.Stages[i].Timing
	}
}

// TimeFacts is what JudgeTime judges a run by once its time-free judgement is made: its task, each stage's
// start and end, which stage is current, its last write and which of the clock's rules watches it. It is
// small and encodes to JSON, so status keeps it aside (in its spill file) while the other runs are read and
// judges every run once the history has seen them all: the same document in any read order.
type TimeFacts struct {
	ID           string      `json:"id"`
	Task         string      `json:"task"`
	Status       RunStatus   `json:"status"`
	Attention    Attention   `json:"attention"`
	CurrentStage string      `json:"current_stage,omitempty"`
	Stages       []StageFact `json:"stages,omitempty"`
	// Current is the index in Stages of the current stage (the last one whose key it is), -1 for none.
	Current  int        `json:"current"`
	ActiveAt *time.Time `json:"active_at,omitempty"`
	// Watch is the clock's rule that applies: watchOrphan, watchQuiet, or none. Label is the stage its
	// reason names, Who the live lock's holder.
	Watch string `json:"watch,omitempty"`
	Label string `json:"label,omitempty"`
	Who   string `json:"who,omitempty"`
	// Counted: the run's own stages are among the history's samples (a local run; History counts no
	// remote one), so its usual leaves them out (own).
	Counted bool `json:"counted,omitempty"`
}

// StageFact is one stage as the clock and the history judge it.
type StageFact struct {
	Key     string     `json:"key"`
	Started *time.Time `json:"started,omitempty"`
	Ended   *time.Time `json:"ended,omitempty"`
	Done    bool       `json:"done,omitempty"`
	Skipped bool       `json:"skipped,omitempty"`
}

// own is the sample the run's stage key gave the history (contributionOf: the last stage of the key that
// tells one), ok false when it gave none.
func (f TimeFacts) own(key string) (d time.Duration, ok bool) {
	if !f.Counted {
		return 0, false
	}
	for i := len(f.Stages) - 1; i >= 0; i-- {
		s := f.Stages[i]
		if !equalFold(s.Key, key) {
			continue
		}
		if d, ok := sampleOf(s.Skipped, s.Done && !s.Skipped, s.Started, s.Ended); ok {
			return d, true
		}
	}
	return 0, false
}

const (
	watchOrphan = "orphan"
	watchQuiet  = "quiet"
)

// FactsOf takes the facts of run r, whose Status and Attention are its time-free judgement (FinalizeRun).
func FactsOf(r *Run) TimeFacts {
	f := TimeFacts{ID: r.ID, Task: TaskOf(r), Status: r.Status, Attention: r.Attention, CurrentStage: r.CurrentStage,
		Current: -1, ActiveAt: r.ActiveAt, Counted: r.Remote == nil}
	if len(r.Stages) > 0 {
		f.Stages = make([]StageFact, len(r.Stages))
	}
	for i, s := range r.Stages {
		f.Stages[i] = StageFact{Key: s.Key, Started: s.StartedAt, Ended: s.CompletedAt, Done: s.Status.Done(),
			Skipped: s.Status == StageSkipped}
		if equalFold(s.Key, r.CurrentStage) {
			f.Current = i
		}
	}
	if r.Archived || r.Attention.NeedsYou || r.Status != StatusRunning || r.ActiveAt == nil {
		return f
	}
	switch {
	case r.Kind == KindJonggrang && orphanable(r):
		f.Watch, f.Label = watchOrphan, currentLabel(r)
		if s, ok := firstStage(r, StageRunning); ok {
			f.Label = r.Kind.StageWord() + " " + s.Key
			if s.Name != "" && s.Name != s.Key {
				f.Label += " " + s.Name
			}
		}
	case r.Kind == KindResumable:
		l, ok := firstLock(r, VerdictLive)
		if !ok || l.Shared {
			return f
		}
		f.Watch, f.Label, f.Who = watchQuiet, currentLabel(r), lockWho(l)
		if l.PID > 0 {
			f.Who = fmt.Sprintf("pid %d", l.PID)
		}
	}
	return f
}

// Judge is the judgement of the run the facts are of at now, by what the history says: a Run holding only
// Status, Attention, Timing, CurrentStage and each stage's Key and Timing.
func (f TimeFacts) Judge(now time.Time, rules LivenessRules, h *History) Run {
	r := Run{ID: f.ID, Status: f.Status, Attention: f.Attention, CurrentStage: f.CurrentStage}
	var timings []StageTiming
	if len(f.Stages) > 0 {
		r.Stages = make([]Stage, len(f.Stages))
		// One array for the run's stages, not an object each: the watcher keeps every run's (issue 35).
		timings = make([]StageTiming, len(f.Stages))
	}
	for i, s := range f.Stages {
		own, mine := f.own(s.Key)
		u, shared := h.usual(f.Task, s.Key, own, mine)
		st := &timings[i]
		*st = StageTiming{Started: s.Started, Ended: s.Ended, Runs: u.Runs}
		switch {
		case !u.Known():
		case shared != nil:
			st.UsualMedianSeconds, st.UsualP90Seconds = &shared[0], &shared[1]
			st.UsualLowSeconds, st.UsualHighSeconds = &shared[2], &shared[3]
		default:
			st.UsualMedianSeconds, st.UsualP90Seconds = secs(u.Median), secs(u.P90)
			st.UsualLowSeconds, st.UsualHighSeconds = secs(u.Low), secs(u.High)
		}
		r.Stages[i] = Stage{Key: s.Key, Timing: st}
	}
	keepTimings(r.Stages, timings)
	cur := f.Current
	if len(f.Stages) > 0 {
		rt := &RunTiming{Task: f.Task}
		if cur >= 0 && !f.Stages[cur].Done {
			rt.Started = f.Stages[cur].Started
			var rest time.Duration
			runs, known := 0, true
			for i, s := range f.Stages[cur+1:] {
				if s.Done {
					continue
				}
				u := r.Stages[cur+1+i].Timing.Usual()
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
	}
	r.Attention.recheck = instant{}
	if f.Watch == "" || f.ActiveAt == nil {
		return r
	}
	silent := now.Sub(*f.ActiveAt)
	if f.Watch == watchOrphan {
		after := rules.orphanAfter()
		if silent < after {
			r.Attention.recheck = instantOf(f.ActiveAt.Add(after))
			return r
		}
		r.Status = StatusStalled
		at := Attention{NeedsYou: true, Rank: 0, Code: AttentionOrphaned, Action: ActionResume, Command: "runwatch brief " + shellword.Quote(f.ID),
			age: agedOf(newAgeTextPast(f.Label+" is marked running but nothing has run it for ", *f.ActiveAt,
				"; the orchestrator is gone (no live agent lock, no live worker): resume it", after, now))}
		at.Reason = at.age.get().was
		r.Attention = at
		return r
	}
	after := rules.quietAfter()
	usual := "no past run of " + f.Task[strings.IndexByte(f.Task, ':')+1:] + " says how long it takes, and " + HumanDuration(after) + " is the most runwatch waits"
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
		r.Attention.recheck = instantOf(f.ActiveAt.Add(after))
		return r
	}
	at := Attention{NeedsYou: true, Rank: 1, Code: AttentionQuiet, Action: ActionBrief, Command: "runwatch brief " + shellword.Quote(f.ID),
		age: agedOf(newAgeTextPast(f.Who+" is alive but "+f.Label+" has been silent for ", *f.ActiveAt,
			"; "+usual+": look at the agent, and if it hangs stop it and resume from the brief", after, now))}
	at.Reason = at.age.get().was
	r.Attention = at
	return r
}

// keepTimings leaves out the stages' timings that hold nothing (no start, no end, no past run: a sixth of
// the stages at 10,000 generated runs; the document leaves them out, and a run read from a host has none)
// and, when it left some out, moves the others to an array at their number: the watcher keeps every run's
// (issue 35).
func keepTimings(stages []Stage, timings []StageTiming) {
	kept := 0
	for i := range stages {
		if stages[i].Timing.IsZero() {
			stages[i].Timing = nil
		} else {
			kept++
		}
	}
	if kept == len(timings) || kept == 0 {
		return
	}
	exact := make([]StageTiming, 0, kept)
	for i := range stages {
		if t := stages[i].Timing; t != nil {
			exact = append(exact, *t)
			stages[i].Timing = &exact[len(exact)-1]
		}
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
// run, plus the usual length of the stages after it. ok is false when some stage left has no history, and
// for a run that is not running (failed, blocked, paused, awaiting input, stalled, over): no time is being
// spent on it, and "~11m left" under a failed run read as if it were on its way. The list, Detail, the
// brief and the JSON all ask here.
func (r *Run) ETA(now time.Time) (left time.Duration, ok bool) {
	rt := r.Timing
	if rt == nil || rt.RemainingSeconds == nil || r.Status != StatusRunning || r.Archived {
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
	age := a.age.get()
	if !age.set() {
		return a.Reason
	}
	return age.at(now)
}

// AgeFrom is the instant the reason's age counts from (zero: the reason holds none).
func (a Attention) AgeFrom() time.Time { return a.age.get().from() }

// RecheckAt is when the passage of time alone changes the judgement (zero: it does not).
func (a Attention) RecheckAt() time.Time { return a.recheck.time() }
