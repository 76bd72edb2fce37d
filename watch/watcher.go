// Package watch turns changes on disk into batches of re-read runs and new log entries. One inotify
// instance per process (read by our own reader on Linux, fsnotify's kqueue elsewhere) watches directories
// (never single files: an atomic replace ends a file watch silently); recursion, batching, recovery from
// lost events and polling where inotify cannot help are ours.
package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/runlog"
)

// Options configure a Watcher.
type Options struct {
	Paths    []string
	MaxDepth int // 0: state.DefaultMaxDepth
	// Poll > 0 compares stats at this interval everywhere instead of using inotify.
	Poll       time.Duration
	StaleAfter time.Duration
	// Progressive makes New return as soon as the runs are found, before any is read: the runs then arrive
	// through Updates (as Changed, in a few batches a second, in the order they finish loading) while
	// Health.Loading counts those still to come. Snapshot is empty. The dashboard uses it to show a usable
	// list within a frame or two of starting, whatever the number of runs.
	Progressive bool
	// StageOrders is the config's stage_order (resumable runs whose writer keeps the order in code).
	StageOrders []model.StageOrderRule
	// Elsewhere judges locks that name other machines on those machines (package remote); the liveness
	// timer asks it again, so a holder that exits there is seen here.
	Elsewhere model.Elsewhere
	// Liveness are the thresholds of the judgements the clock decides (orphaned, quiet): a timer set to the
	// next moment one of them changes re-judges the runs it concerns, with no re-read.
	Liveness model.LivenessRules
	// NoArtifactListing reads resumable runs without their artifacts' listing (model.Env): for a watcher
	// whose runs are only shown in panes, none of which shows it.
	NoArtifactListing bool

	// Test hooks: a watch cap that makes Add fail with ENOSPC, a filesystem-type probe, the interval for
	// directories inotify cannot watch, a filter that loses events the way a queue overflow does, and the
	// reconcile interval.
	watchLimit   int
	remote       func(string) (string, bool)
	fallbackPoll time.Duration
	// costsDescriptors budgets descriptors as kqueue builds do (watchCostsDescriptors), over inotify.
	costsDescriptors bool
	loseEvent        func(fsnotify.Event) bool
	reconcile        time.Duration
	// reconcileArmed is told each interval the reconcile scan is armed for; reconcileShare replaces its
	// namesake when set.
	reconcileArmed func(time.Duration)
	reconcileShare time.Duration
	liveness       time.Duration          // how often lock holders and workers are checked for life
	grace          time.Duration          // how long a vanished state file may take to come back
	inotifyErr     error                  // as if inotify_init failed (EMFILE: the per-user instance limit)
	initialRead    func(i int)            // Progressive: runs after run i of the initial read was read, before it is handed on
	secondRead     func(statePath string) // Progressive: a run read before watching began is read again
	unseenSlack    time.Duration          // Progressive: how much older than a read a change may look (0: mtimeSlack)
	beforeWatch    func()                 // Progressive: runs before the roots are walked and watched
	livenessPass   func(judged int)       // after each liveness pass, with the number of runs it judged again
}

// Health is how well the watcher can see changes, for the footer and the events stream.
type Health struct {
	// Mode is "inotify" ("kqueue" on macOS and the BSDs), "polling 2s" (every directory compared by stat at
	// that interval) or "mixed".
	Mode       string    `json:"mode"`
	Err        string    `json:"error,omitempty"`
	LastChange time.Time `json:"last_change"`
	Watches    int       `json:"watches"`
	// Loading counts the runs found but not read yet (only with Options.Progressive).
	Loading int `json:"loading,omitempty"`
}

// LogAppend carries entries appended to a run.log since the last batch. Continuation lines can be written
// after their entry was handed over: then Entries starts with an entry whose HasTime is false, which belongs
// to the last entry of the previous LogAppend of the same Path (runlog.Append merges them).
type LogAppend struct {
	Path    string           `json:"path"`
	Entries []model.LogEntry `json:"entries"`
	// Truncated: the log shrank and is read again from its start. Rotated: run.log is a new file.
	Truncated bool `json:"truncated,omitempty"`
	Rotated   bool `json:"rotated,omitempty"`
	// Skipped counts entries dropped from the front of Entries because the reader fell behind by more than
	// maxPendingEntries; they are still in the file (read them with runlog when needed).
	Skipped int `json:"skipped,omitempty"`
}

// Update is one batch of changes. Apply it in order: drop Removed, upsert Changed (a StatePath not seen
// before is a new run), then append Appended.
type Update struct {
	// Changed are the runs as read, shared with the watcher, which never changes them in place (a change
	// is a new value): a reader keeps them as they are and must not write to them either.
	Changed  []*model.Run
	Removed  []string // StatePaths
	Appended []LogAppend
	Health   Health
	At       time.Time
	// Initial marks the batches of Options.Progressive's first read: the runs in Changed were already there
	// when watching began, so they are not changes to notify about. The last such batch is taken by the
	// reader before any later one is sent, so a real change never merges into one.
	Initial bool
}

// Timing of batches. The first change after a quiet period goes out after settle (a writer's burst of
// events for one save usually lands within it); a steady stream still goes out every maxWait.
const (
	settle      = 3 * time.Millisecond
	maxWait     = 50 * time.Millisecond
	rereadAfter = 50 * time.Millisecond
	// vanishGrace: a run whose state file disappeared while its folder stays is kept this long before
	// discovery decides; a deleted folder removes its runs at once.
	vanishGrace    = 250 * time.Millisecond
	reconcileEvery = 30 * time.Second
	// reconcileShare: the reconcile scan waits at least this many times as long as it took, so it costs at
	// most 0.1% of the time (inotify misses nothing but an overflow, which rescans at once).
	reconcileShare = 1000
	// reconcileStretch: the reconcile interval grows to at most this many times reconcileEvery while its
	// scans find nothing (see reconcileSched).
	reconcileStretch = 8
	// livenessInterval: how soon a lock holder's death (or a lock ageing into stale) reaches the screen
	// when no file changes to say so.
	livenessInterval = 2 * time.Second
	// DefaultPoll is the interval for directories inotify cannot watch (limit reached, network filesystem).
	DefaultPoll = 2 * time.Second
	// MinPoll is the shortest polling interval accepted (CheckPoll): each round stats every folder and file
	// watched, so `--poll 1ns` would keep a core busy doing nothing else.
	MinPoll = 100 * time.Millisecond
	// newLogFromStart: a run.log that appears while watching is reported from its first line when it is at
	// most this big when first seen; a bigger one from its end (read its tail with runlog.ReadTail).
	newLogFromStart = 256 << 10
	// errShownFor is how long a passing problem (an overflow, a failed read) stays in Health.Err: long
	// enough to be noticed, not so long that the footer keeps alarming after the rescan fixed things.
	errShownFor = time.Minute
	// maxPendingEntries bounds the entries per log held for a reader that has not taken the last Update.
	maxPendingEntries = 100_000
)

// Watcher watches run roots. Create with New; read Updates until Close.
type Watcher struct {
	opts    Options
	pollIvl time.Duration
	grace   time.Duration
	fsw     notifier
	tree    *tree
	// walkTook is how long the walk that set up the watches took: the first reconcile scan is spaced by it.
	walkTook time.Duration
	rec      reconcileSched
	runs     *tracker
	logs     map[string]*logTail
	snapshot []model.Run

	updates chan Update
	out     outbox
	done    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once

	// Loop state, owned by the loop goroutine after New returns.
	initial   []state.Location // runs the loop reads before anything else (Options.Progressive)
	loading   atomic.Int64     // of initial, how many are not read yet
	pending   map[string]fsnotify.Op
	goneDirs  map[string]bool // pending paths that were watched directories before they went away
	force     map[string]bool // runs to re-read whatever changed (follow-up reads)
	rescanAll bool
	firstAt   time.Time
	lastAt    time.Time
	batchT    *time.Timer
	armed     bool
	rereads   map[string]time.Time // StatePath → when to read again after a parse failure
	// unshown are runs found but not yet handed out: a feature folder whose manifest has not appeared
	// (createManifest is between its mkdir and its write) waits out the grace unseen, and if it turns out
	// to be no run at all (a plan, plan.md only) it goes without a trace.
	unshown map[string]bool
	rereadT *time.Timer
	// livenessWanted: a run tracked since the loop last looked may change its verdict with time alone.
	livenessWanted bool
	// judgeT fires at nextJudge, the earliest moment the clock alone changes some run's judgement;
	// judgedVersion is the history the runs were last judged with.
	judgeT        *time.Timer
	nextJudge     time.Time
	judgeDue      bool
	judgedVersion uint64
	health        Health
	healthMu      sync.Mutex // health is read by Health from other goroutines
	errNote       string     // a lasting condition (inotify unavailable)
	lastErr       string     // a passing one (overflow, a read error), shown for errShownFor after lastErrAt
	lastErrAt     time.Time
	injected      chan error         // test hook: errors as if from fsnotify
	pause         chan chan struct{} // test hook: the loop stops reading until the channel sent is closed
}

// logTail is a followed run.log. Its Follower is made when the log first changes: an idle dashboard's logs
// never do, and a follower each was 96 bytes a run of 10,000 (issue 35); until then from is where it starts.
type logTail struct {
	f      *runlog.Follower
	path   string
	from   int64
	owners []string
}

// follower is lt's Follower, made at its first use.
func (lt *logTail) follower() *runlog.Follower {
	if lt.f == nil {
		lt.f = runlog.NewFollower(lt.path, lt.from)
	}
	return lt.f
}

// close closes lt's Follower, if it has one.
func (lt *logTail) close() {
	if lt.f != nil {
		_ = lt.f.Close() // read-only file: nothing to lose on close
	}
}

// CheckPoll refuses a polling interval below MinPoll (0 means inotify) or a negative one, with a message
// for the person who typed it. The flags and the config file are checked with it; New takes any interval,
// so tests can poll fast.
func CheckPoll(d time.Duration) error {
	switch {
	case d < 0:
		return fmt.Errorf("poll %s is negative", d)
	case d > 0 && d < MinPoll:
		return fmt.Errorf("poll %s is below the floor of %s (each round stats every watched file, so faster would keep a core busy); "+
			"use 0 for inotify, or %s or more", d, MinPoll, MinPoll)
	}
	return nil
}

// New scans the paths, reads every run once (see Snapshot) and starts watching.
func New(opts Options) (*Watcher, error) {
	if len(opts.Paths) == 0 {
		return nil, errors.New("watch: no paths to watch")
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = state.DefaultMaxDepth
	}
	w := &Watcher{
		opts: opts, pollIvl: DefaultPoll, logs: map[string]*logTail{},
		updates: make(chan Update), done: make(chan struct{}),
		pending: map[string]fsnotify.Op{}, goneDirs: map[string]bool{}, force: map[string]bool{}, rereads: map[string]time.Time{},
		unshown:  map[string]bool{},
		injected: make(chan error, 1), pause: make(chan chan struct{}),
	}
	if opts.fallbackPoll > 0 {
		w.pollIvl = opts.fallbackPoll
	}
	w.grace = vanishGrace
	if opts.grace > 0 {
		w.grace = opts.grace
	}
	if opts.Poll > 0 {
		w.pollIvl = opts.Poll
	}
	w.out.notify = make(chan struct{}, 1)
	w.out.taken = make(chan struct{}, 1)

	var roots []string
	for _, p := range opts.Paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("watch: %s: %w", p, err)
		}
		roots = append(roots, abs)
	}

	if opts.Poll <= 0 {
		fsw, err := newNotifier()
		if opts.inotifyErr != nil {
			if fsw != nil {
				_ = fsw.Close()
			}
			fsw, err = nil, opts.inotifyErr
		}
		if err != nil {
			// EMFILE here is the per-user inotify instance limit: poll rather than see nothing.
			w.errNote = fmt.Sprintf("inotify unavailable (%v): polling every %s", err, w.pollIvl)
		}
		w.fsw = fsw
	}
	w.tree = newTree(w.fsw, opts.Poll > 0, watchCostsDescriptors || opts.costsDescriptors)
	w.tree.watchLimit = opts.watchLimit
	if opts.remote != nil {
		w.tree.remote = opts.remote
	}
	if !opts.Progressive {
		w.watchRoots(roots)
	}

	env := state.NewEnv(opts.StaleAfter)
	env.StageOrders = opts.StageOrders
	env.Elsewhere = opts.Elsewhere
	env.NoArtifactListing = opts.NoArtifactListing
	w.runs = newTracker(roots, opts.MaxDepth, env)
	w.runs.rules = opts.Liveness
	for _, r := range roots {
		if st, err := os.Stat(r); err == nil && !st.IsDir() {
			w.runs.fileRoots[r] = true
		}
	}
	locs, err := state.Discover(roots, opts.MaxDepth)
	// Folders that cannot be listed are named by the watcher's own walk (with what it does about them).
	if _, err = state.SplitUnreadable(err); err != nil {
		// A missing root is watched for its creation; say so rather than fail.
		w.noteErr(strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if opts.Progressive {
		// Watching (a walk of every folder) and reading happen in the loop, before it handles any event: an
		// event that arrives meanwhile waits in the queue and is handled after, so nothing is missed.
		w.initial = append([]state.Location{}, locs...)
		w.loading.Store(int64(len(locs)))
		w.health = w.currentHealth(time.Now())
	} else {
		runs := loadAll(w.runs, locs)
		// Judged again once every run has taught the history: the order they were read in must not matter.
		now := time.Now()
		for _, r := range runs {
			model.JudgeTime(r, now, w.runs.rules, w.runs.history)
			w.noteJudge(r)
		}
		w.judgedVersion = w.runs.history.Version()
		for i, loc := range locs {
			w.trackRun(loc, runs[i], true, nil)
			if needsReread(runs[i]) {
				w.rereads[loc.StatePath] = time.Now().Add(rereadAfter)
			}
		}
		w.snapshot = make([]model.Run, len(runs))
		for i, r := range runs {
			w.snapshot[i] = *r
		}
		// The snapshot is what disk held at this moment: the footer's "changed N ago" counts from here.
		w.health = w.currentHealth(time.Now())
	}

	w.batchT = time.NewTimer(time.Hour)
	w.batchT.Stop()
	w.rereadT = time.NewTimer(time.Hour)
	w.rereadT.Stop()
	w.judgeT = time.NewTimer(time.Hour)
	w.judgeT.Stop()
	w.armJudge(time.Now())
	w.armReread(time.Now())
	w.wg.Add(2)
	go w.loop()
	go w.send()
	return w, nil
}

func (w *Watcher) watchRoots(roots []string) {
	start := time.Now()
	defer func() { w.walkTook = time.Since(start) }()
	for _, r := range roots {
		if st, err := os.Stat(r); err == nil && !st.IsDir() {
			w.tree.ensure(filepath.Dir(r), 0, nil) // a state file given directly
			continue
		}
		w.tree.ensure(r, w.opts.MaxDepth, nil)
	}
}

// firstLoadBatch and loadBatchEvery pace the batches of Options.Progressive's first read: the first goes out
// after about one frame, so the list is there at once; later ones a few times a second, since every batch
// costs the reader a re-sort and a frame over all the runs it holds.
const (
	firstLoadBatch = 16 * time.Millisecond
	loadBatchEvery = 200 * time.Millisecond
)

// deliverInitial hands the runs of the first read to the reader in batches, in the order read says they
// were read, each batch judged by the clock as it goes out; it passes each index on to tracked.
func (w *Watcher) deliverInitial(runs []*model.Run, read <-chan int, tracked chan<- int, stop <-chan struct{}) {
	var batch []*model.Run
	last, wait := time.Now(), firstLoadBatch
	for n := 1; n <= len(runs); n++ {
		var i int
		select {
		case i = <-read:
		case <-stop:
			return
		}
		batch = append(batch, runs[i])
		tracked <- i
		left := w.loading.Add(-1)
		if left == 0 || time.Since(last) >= wait {
			now := time.Now()
			for _, r := range batch {
				model.JudgeTime(r, now, w.runs.rules, w.runs.history)
			}
			w.healthMu.Lock()
			w.health.Loading, w.health.LastChange = int(left), now
			h := w.health
			w.healthMu.Unlock()
			w.out.put(Update{Changed: batch, Health: h, At: now, Initial: true})
			batch, last, wait = nil, now, loadBatchEvery
		}
	}
}

// loadInitial reads the runs New found (Options.Progressive) on every core and hands them to the reader in
// batches as they are read, while this goroutine walks and watches the roots. It returns early when the
// watcher is closed.
func (w *Watcher) loadInitial() {
	roots := w.runs.roots
	locs := w.initial
	w.initial = nil
	runs := make([]*model.Run, len(locs))
	readAt := make([]time.Time, len(locs))
	read := make(chan int, len(locs)) // never blocks a reader: every index fits
	stop := make(chan struct{})
	defer close(stop)
	var next atomic.Int64
	w.parallel(len(locs), &next, stop, func(i int) {
		readAt[i] = time.Now()
		// Judged as its batch goes out, not as read: each run read teaches the history, and a judgement
		// after each made the history work out the task's usual durations again over all its runs, for
		// every run (a fifth of the dashboard's CPU over 8,000 local runs, issue 35).
		runs[i], _ = w.runs.read(locs[i])
		if w.opts.initialRead != nil {
			w.opts.initialRead(i)
		}
		read <- i
	})
	// The batches go out from their own goroutine: the walk below can take longer than reading every run.
	tracked := make(chan int, len(locs))
	delivered := make(chan struct{})
	go func() {
		defer close(delivered)
		w.deliverInitial(runs, read, tracked, stop)
	}()
	if w.opts.beforeWatch != nil {
		w.opts.beforeWatch()
	}
	w.watchRoots(roots)
	// A run read before its folders were watched may have changed unseen in between: those are read again
	// below, and shown again only if they did change.
	unwatched := int(next.Load())
	select {
	case <-delivered:
	case <-w.done:
		return
	}
	close(tracked)
	for i := range tracked {
		w.trackRun(locs[i], runs[i], true, nil)
		if needsReread(runs[i]) {
			w.rereads[locs[i].StatePath] = time.Now().Add(rereadAfter)
		}
	}
	unwatched = min(unwatched, len(locs))
	// Only runs whose watched folders hold something newer than their read are read again, and only those
	// that read differently are kept: a second copy of every run would double the heap while loading.
	unseen := newUnseenChanges(w.tree, w.rereadSlack())
	var mu sync.Mutex
	var again []int
	againRuns := map[int]*model.Run{}
	var next2 atomic.Int64
	done := make(chan struct{})
	var left atomic.Int64
	left.Store(int64(unwatched))
	if unwatched == 0 {
		close(done)
	}
	w.parallel(unwatched, &next2, stop, func(i int) {
		if tr := w.runs.runs[locs[i].StatePath]; tr == nil || unseen.since(tr, readAt[i]) {
			if w.opts.secondRead != nil {
				w.opts.secondRead(locs[i].StatePath)
			}
			if r := w.runs.load(locs[i]); !reflect.DeepEqual(r, runs[i]) {
				mu.Lock()
				again = append(again, i)
				againRuns[i] = r
				mu.Unlock()
			}
		}
		if left.Add(-1) == 0 {
			close(done)
		}
	})
	select {
	case <-done:
	case <-w.done:
		return
	}
	slices.Sort(again)
	u := Update{At: time.Now(), Initial: true}
	for _, i := range again {
		w.trackRun(locs[i], againRuns[i], false, nil)
		u.Changed = append(u.Changed, againRuns[i])
	}
	// Every run has taught the history now: judge again those read before the runs that teach them.
	w.rejudge(u.At, &u)
	w.armJudge(u.At)
	u.Health = w.currentHealth(time.Now())
	w.healthMu.Lock()
	w.health = u.Health
	w.healthMu.Unlock()
	w.out.put(u) // also the health with the watches now set up
	w.out.waitTaken(w.done)
	w.armReread(time.Now())
}

func (w *Watcher) rereadSlack() time.Duration {
	if w.opts.unseenSlack > 0 {
		return w.opts.unseenSlack
	}
	return mtimeSlack
}

// parallel runs fn(i) for every i < n on every core, taking each i once from next, until stop is closed.
// It does not wait.
func (w *Watcher) parallel(n int, next *atomic.Int64, stop <-chan struct{}, fn func(i int)) {
	for range max(1, min(runtime.GOMAXPROCS(0), n)) {
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
}

// loadAll reads runs in parallel: startup with many runs is bound by parsing, and there are cores to use. Its
// caller judges them once all are read.
func loadAll(tk *tracker, locs []state.Location) []*model.Run {
	runs := make([]*model.Run, len(locs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(locs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				runs[i], _ = tk.read(locs[i])
			}
		}()
	}
	for i := range locs {
		next <- i
	}
	close(next)
	wg.Wait()
	return runs
}

// Snapshot returns the runs as read by New, sorted by StatePath.
func (w *Watcher) Snapshot() []model.Run { return append([]model.Run(nil), w.snapshot...) }

// Health is the watcher's current health; before the first Update it tells what New set up.
func (w *Watcher) Health() Health {
	w.healthMu.Lock()
	defer w.healthMu.Unlock()
	return w.health
}

// Updates delivers one Update per batch. It never blocks the watcher: while the reader is busy, further
// batches are merged into the one waiting. The channel is closed by Close.
func (w *Watcher) Updates() <-chan Update { return w.updates }

// Close stops watching and closes the Updates channel.
func (w *Watcher) Close() error {
	var err error
	w.once.Do(func() {
		close(w.done)
		if w.fsw != nil {
			err = w.fsw.Close()
		}
		w.wg.Wait()
		close(w.updates)
		for _, lt := range w.logs {
			lt.close()
		}
	})
	return err
}

// trackRun records a run and makes sure every folder it depends on is watched.
func (w *Watcher) trackRun(loc state.Location, run *model.Run, initial bool, synth *[]change) {
	prevLog := ""
	if old, ok := w.runs.runs[loc.StatePath]; ok {
		prevLog = old.logPath
	}
	tr := w.runs.set(loc, run)
	if model.JudgementMayChange(run, w.runs.env) {
		w.livenessWanted = true
	}
	budget := 0
	if loc.Kind == model.KindResumable && !loc.Archived && filepath.Base(loc.StatePath) == "state.env" {
		budget = runDirBudget
	}
	w.tree.ensure(loc.Dir, budget, synth)
	if tr.lockPath != "" {
		w.tree.ensure(filepath.Dir(tr.lockPath), 0, synth)
	}
	if tr.planPath != "" {
		w.tree.ensure(filepath.Dir(tr.planPath), 0, synth)
	}
	for _, d := range tr.projectDirs() {
		w.tree.ensure(d, 1, synth)
	}
	if tr.worktreeDir != "" {
		w.tree.ensure(tr.worktreeDir, 0, synth)
	}
	if prevLog != "" && prevLog != tr.logPath {
		w.detachLog(prevLog, loc.StatePath)
	}
	if tr.logPath != "" {
		w.attachLog(tr, initial)
	}
}

func (w *Watcher) attachLog(tr *trackedRun, initial bool) {
	sp := tr.location().StatePath
	if lt, ok := w.logs[tr.logPath]; ok {
		for _, o := range lt.owners {
			if o == sp {
				return
			}
		}
		lt.owners = append(lt.owners, sp)
		return
	}
	from := tr.run.Log.SizeBytes
	if !initial && from <= newLogFromStart {
		from = 0
	}
	w.logs[tr.logPath] = &logTail{path: tr.logPath, from: from, owners: []string{sp}}
}

func (w *Watcher) detachLog(path, sp string) {
	lt, ok := w.logs[path]
	if !ok {
		return
	}
	for i, o := range lt.owners {
		if o == sp {
			lt.owners = append(lt.owners[:i:i], lt.owners[i+1:]...)
			break
		}
	}
	if len(lt.owners) == 0 {
		lt.close()
		delete(w.logs, path)
	}
}
