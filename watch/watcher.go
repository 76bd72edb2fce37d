// Package watch turns changes on disk into batches of re-read runs and new log entries. One fsnotify
// watcher per process watches directories (never single files: an atomic replace ends a file watch
// silently); recursion, batching, recovery from lost events and polling where inotify cannot help are ours.
package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
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

	// Test hooks: a watch cap that makes Add fail with ENOSPC, a filesystem-type probe, the interval for
	// directories inotify cannot watch, a filter that loses events the way a queue overflow does, and the
	// reconcile interval.
	watchLimit   int
	remote       func(string) (string, bool)
	fallbackPoll time.Duration
	loseEvent    func(fsnotify.Event) bool
	reconcile    time.Duration
	grace        time.Duration // how long a vanished state file may take to come back
	inotifyErr   error         // as if inotify_init failed (EMFILE: the per-user instance limit)
}

// Health is how well the watcher can see changes, for the footer and the events stream.
type Health struct {
	// Mode is "inotify", "polling 2s" (every directory compared by stat at that interval) or "mixed".
	Mode       string    `json:"mode"`
	Err        string    `json:"error,omitempty"`
	LastChange time.Time `json:"last_change"`
	Watches    int       `json:"watches"`
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
	Changed  []model.Run
	Removed  []string // StatePaths
	Appended []LogAppend
	Health   Health
	At       time.Time
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
	// DefaultPoll is the interval for directories inotify cannot watch (limit reached, network filesystem).
	DefaultPoll = 2 * time.Second
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
	opts     Options
	pollIvl  time.Duration
	grace    time.Duration
	fsw      *fsnotify.Watcher
	tree     *tree
	runs     *tracker
	logs     map[string]*logTail
	snapshot []model.Run

	updates chan Update
	out     outbox
	done    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once

	// Loop state, owned by the loop goroutine after New returns.
	pending   map[string]fsnotify.Op
	goneDirs  map[string]bool // pending paths that were watched directories before they went away
	force     map[string]bool // runs to re-read whatever changed (follow-up reads)
	rescanAll bool
	firstAt   time.Time
	lastAt    time.Time
	batchT    *time.Timer
	armed     bool
	rereads   map[string]time.Time // StatePath → when to read again after a parse failure
	rereadT   *time.Timer
	health    Health
	healthMu  sync.Mutex // health is read by Health from other goroutines
	errNote   string     // a lasting condition (inotify unavailable)
	lastErr   string     // a passing one (overflow, a read error), shown for errShownFor after lastErrAt
	lastErrAt time.Time
	injected  chan error         // test hook: errors as if from fsnotify
	pause     chan chan struct{} // test hook: the loop stops reading until the channel sent is closed
}

type logTail struct {
	f      *runlog.Follower
	owners []string
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

	var roots []string
	for _, p := range opts.Paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("watch: %s: %w", p, err)
		}
		roots = append(roots, abs)
	}

	if opts.Poll <= 0 {
		fsw, err := fsnotify.NewWatcher()
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
	w.tree = newTree(w.fsw, opts.Poll > 0)
	w.tree.watchLimit = opts.watchLimit
	if opts.remote != nil {
		w.tree.remote = opts.remote
	}
	for _, r := range roots {
		if st, err := os.Stat(r); err == nil && !st.IsDir() {
			w.tree.ensure(filepath.Dir(r), 0, nil) // a state file given directly
			continue
		}
		w.tree.ensure(r, opts.MaxDepth, nil)
	}

	env := state.NewEnv(opts.StaleAfter)
	w.runs = newTracker(roots, opts.MaxDepth, env)
	for _, r := range roots {
		if st, err := os.Stat(r); err == nil && !st.IsDir() {
			w.runs.fileRoots[r] = true
		}
	}
	locs, err := state.Discover(roots, opts.MaxDepth)
	if err != nil {
		// A missing root is watched for its creation; say so rather than fail.
		w.noteErr(strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	runs := loadAll(w.runs, locs)
	for i, loc := range locs {
		w.trackRun(loc, runs[i], true, nil)
		if needsReread(runs[i]) {
			w.rereads[loc.StatePath] = time.Now().Add(rereadAfter)
		}
	}
	w.snapshot = runs
	// The snapshot is what disk held at this moment: the footer's "changed N ago" counts from here.
	w.health = w.currentHealth(time.Now())

	w.batchT = time.NewTimer(time.Hour)
	w.batchT.Stop()
	w.rereadT = time.NewTimer(time.Hour)
	w.rereadT.Stop()
	w.armReread(time.Now())
	w.wg.Add(2)
	go w.loop()
	go w.send()
	return w, nil
}

// loadAll reads runs in parallel: startup with many runs is bound by parsing, and there are cores to use.
func loadAll(tk *tracker, locs []state.Location) []model.Run {
	runs := make([]model.Run, len(locs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(locs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				runs[i] = tk.load(locs[i])
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
			_ = lt.f.Close() // read-only files: nothing to lose
		}
	})
	return err
}

// trackRun records a run and makes sure every folder it depends on is watched.
func (w *Watcher) trackRun(loc state.Location, run model.Run, initial bool, synth *[]change) {
	prevLog := ""
	if old, ok := w.runs.runs[loc.StatePath]; ok {
		prevLog = old.logPath
	}
	tr := w.runs.set(loc, run)
	budget := 0
	if loc.Kind == model.KindResumable && !loc.Archived && filepath.Base(loc.StatePath) == "state.env" {
		budget = runDirBudget
	}
	w.tree.ensure(loc.Dir, budget, synth)
	if tr.lockPath != "" {
		w.tree.ensure(filepath.Dir(tr.lockPath), 0, synth)
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
	sp := tr.loc.StatePath
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
	w.logs[tr.logPath] = &logTail{f: runlog.NewFollower(tr.logPath, from), owners: []string{sp}}
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
		_ = lt.f.Close() // read-only file: nothing to lose on close
		delete(w.logs, path)
	}
}

func (w *Watcher) loop() {
	defer w.wg.Done()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w.fsw != nil {
		events, errs = w.fsw.Events, w.fsw.Errors
	}
	pollT := time.NewTimer(w.pollIvl)
	defer pollT.Stop()
	every := reconcileEvery
	if w.opts.reconcile > 0 {
		every = w.opts.reconcile
	}
	reconcileT := time.NewTicker(every)
	defer reconcileT.Stop()
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			w.noteEvent(ev)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			w.noteError(err)
		case err := <-w.injected:
			w.noteError(err)
		case resume := <-w.pause:
			<-resume
		case now := <-w.batchT.C:
			w.armed = false
			if due := w.due(); now.Before(due) {
				w.arm(due.Sub(now))
				continue
			}
			w.flush()
		case now := <-w.rereadT.C:
			for sp, at := range w.rereads {
				if !now.Before(at) {
					w.force[sp] = true
				}
			}
			w.flush()
		case <-pollT.C:
			// Only directories inotify does not cover; in pure inotify mode this is one cheap no-op per
			// interval and no I/O.
			if w.tree.polled > 0 {
				var ch []change
				for _, d := range w.tree.polledDirs() {
					w.tree.scan(d, &ch)
				}
				if len(ch) > 0 {
					w.addChanges(ch)
					w.flush()
				}
			}
			pollT.Reset(w.pollIvl)
		case <-reconcileT.C:
			// The safety net: compare every watched directory with what we last saw, by stat only.
			var ch []change
			for _, d := range w.tree.allDirs() {
				w.tree.scan(d, &ch)
			}
			w.addChanges(ch)
			if len(ch) > 0 || (w.lastErr != "" && time.Since(w.lastErrAt) >= errShownFor) {
				w.flush() // also takes an old passing error off the health line
			}
		}
	}
}

// noteEvent records one inotify event. New directories are watched at once (and scanned, so files made
// before the watch existed are not lost); the expensive part, re-reading runs, waits for the batch.
func (w *Watcher) noteEvent(ev fsnotify.Event) {
	if scratchName(filepath.Base(ev.Name)) || (w.opts.loseEvent != nil && w.opts.loseEvent(ev)) {
		return
	}
	var synth []change
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		if _, ok := w.tree.dirs[ev.Name]; ok {
			w.tree.remove(ev.Name)
			w.goneDirs[ev.Name] = true
		}
	}
	if ev.Has(fsnotify.Create) {
		if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
			if node, ok := w.tree.dirs[ev.Name]; ok && node.id != idOf(st) {
				w.tree.remove(ev.Name) // another directory moved in under a watched name
			}
			w.tree.addChild(ev.Name, &synth)
		}
	}
	w.pending[ev.Name] |= ev.Op
	w.addChanges(synth)
}

func (w *Watcher) addChanges(ch []change) {
	for _, c := range ch {
		w.pending[c.path] |= c.op
		if c.wasDir {
			w.goneDirs[c.path] = true
		}
	}
	if len(w.pending) == 0 {
		return
	}
	now := time.Now()
	if w.firstAt.IsZero() {
		w.firstAt = now
	}
	w.lastAt = now
	if !w.armed {
		w.arm(settle)
	}
}

func (w *Watcher) due() time.Time {
	quiet := w.lastAt.Add(settle)
	if capAt := w.firstAt.Add(maxWait); capAt.Before(quiet) {
		return capAt
	}
	return quiet
}

func (w *Watcher) arm(d time.Duration) {
	w.armed = true
	w.batchT.Reset(d)
}

// noteErr records a passing problem for the health line.
func (w *Watcher) noteErr(msg string) {
	w.lastErr, w.lastErrAt = msg, time.Now()
}

func (w *Watcher) noteError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		// The kernel queue overflowed: events are gone and nothing says which. Compare everything.
		w.rescanAll = true
		w.noteErr("inotify queue overflowed; rescanned everything")
		w.flush()
		return
	}
	w.noteErr(err.Error())
	w.flush()
}

// flush turns the pending paths into one Update: rediscovery where runs may have appeared or vanished, log
// reads, and one re-read of each affected run.
func (w *Watcher) flush() {
	now := time.Now()
	batch, goneDirs := w.pending, w.goneDirs
	w.pending, w.goneDirs = map[string]fsnotify.Op{}, map[string]bool{}
	w.firstAt, w.lastAt = time.Time{}, time.Time{}
	if w.armed {
		w.batchT.Stop()
		w.armed = false
	}

	dirty := map[string]bool{}
	for sp := range w.force {
		dirty[sp] = true
		delete(w.rereads, sp)
	}
	followUps := w.force
	w.force = map[string]bool{}
	rediscover := map[string]bool{}
	logsToRead := map[string]bool{}
	vanished := map[string]bool{}

	if w.rescanAll {
		w.rescanAll = false
		var ch []change
		for _, d := range w.tree.allDirs() {
			w.tree.scan(d, &ch)
		}
		for _, c := range ch {
			batch[c.path] |= c.op
			if c.wasDir {
				goneDirs[c.path] = true
			}
		}
		for _, r := range w.runs.roots {
			rediscover[r] = true
		}
		for sp := range w.runs.runs {
			dirty[sp] = true
		}
		for p := range w.logs {
			logsToRead[p] = true
		}
	}

	for path, op := range batch {
		st, exists, wasDir := w.tree.refresh(path)
		isDir := (exists && st.dir) || (!exists && (wasDir || goneDirs[path]))
		_, known := w.runs.runs[path]
		structural := op&(fsnotify.Create|fsnotify.Remove|fsnotify.Rename) != 0
		switch {
		case structural && isDir:
			rediscover[path] = true
		case structural && known && !exists:
			// A run's state file vanished. An editor's save or a writer's replace usually puts it back
			// within milliseconds: decide after a grace period rather than flash the run away and back.
			w.scheduleAt(path, now.Add(w.grace))
			vanished[path] = true
		case structural && isStateName(filepath.Base(path)) && !known:
			rediscover[filepath.Dir(path)] = true
		}
		w.runs.affected(path, isDir, dirty)
		if _, ok := w.logs[path]; ok {
			logsToRead[path] = true
		}
	}

	for sp := range followUps {
		// The grace for a vanished state file is over and it is still gone: let discovery decide whether
		// the folder is still a run.
		if tr, ok := w.runs.runs[sp]; ok {
			if _, err := os.Stat(sp); errors.Is(err, os.ErrNotExist) {
				rediscover[tr.loc.Dir] = true
			}
		}
	}

	u := Update{At: now}
	var synth []change
	for _, d := range topmost(rediscover) {
		added, removed := w.runs.rediscover(d)
		for _, sp := range removed {
			w.removeRun(sp, &u)
			delete(dirty, sp)
		}
		for _, loc := range added {
			run := w.runs.load(loc)
			w.trackRun(loc, run, false, &synth)
			delete(dirty, loc.StatePath)
			if needsReread(run) {
				w.scheduleReread(loc.StatePath, now)
				continue
			}
			u.Changed = append(u.Changed, run)
			if tr := w.runs.runs[loc.StatePath]; tr.logPath != "" {
				logsToRead[tr.logPath] = true
			}
		}
	}
	for _, r := range w.runs.roots {
		// A deleted root is watched for its return (for a state file given directly: its folder).
		if _, ok := w.tree.dirs[r]; ok {
			continue
		}
		st, err := os.Stat(r)
		switch {
		case err == nil && !st.IsDir():
			w.tree.ensure(filepath.Dir(r), 0, &synth)
		case err != nil && w.runs.isFileRoot(r):
			w.tree.ensure(filepath.Dir(r), 0, &synth)
		default:
			w.tree.ensure(r, w.opts.MaxDepth, &synth)
		}
	}

	for _, p := range sortedKeys(logsToRead) {
		lt, ok := w.logs[p]
		if !ok {
			continue
		}
		entries, truncated, rotated, err := lt.f.Poll()
		if err != nil {
			w.noteErr(err.Error())
		}
		if lt.f.More() {
			// A big append is handed over in pieces; the next batch reads on.
			synth = append(synth, change{path: p, op: fsnotify.Write})
		}
		if len(entries) == 0 && !truncated && !rotated {
			continue
		}
		u.Appended = append(u.Appended, LogAppend{Path: p, Entries: entries, Truncated: truncated, Rotated: rotated})
		// The run reflects its log too (size, last activity, stage order from stage_start lines): read it
		// again, once per batch however many lines arrived.
		for _, sp := range lt.owners {
			dirty[sp] = true
		}
	}

	for _, sp := range sortedKeys(dirty) {
		tr, ok := w.runs.runs[sp]
		if !ok {
			continue
		}
		if _, err := os.Stat(tr.loc.Dir); errors.Is(err, os.ErrNotExist) {
			w.removeRun(sp, &u)
			continue
		}
		if vanished[sp] {
			continue // shown as it was until the grace period ends
		}
		run := w.runs.load(tr.loc)
		old := tr.run
		w.trackRun(tr.loc, run, false, &synth)
		if needsReread(run) && !followUps[sp] {
			// Probably read mid-write: look again shortly before showing the error.
			w.scheduleReread(sp, now)
			continue
		}
		if !reflect.DeepEqual(old, run) || followUps[sp] {
			u.Changed = append(u.Changed, run)
		}
	}
	w.armReread(now)
	if len(synth) > 0 {
		// Folders that became watched during this batch: what they hold goes through the next one.
		w.addChanges(synth)
	}

	changed := len(u.Changed) > 0 || len(u.Removed) > 0 || len(u.Appended) > 0
	last := w.health.LastChange
	if changed {
		last = now
	}
	h := w.currentHealth(last)
	healthMoved := h.Mode != w.health.Mode || h.Err != w.health.Err || h.Watches != w.health.Watches
	w.healthMu.Lock()
	w.health = h
	w.healthMu.Unlock()
	if !changed && !healthMoved {
		return
	}
	u.Health = h
	w.out.put(u)
}

func (w *Watcher) removeRun(sp string, u *Update) {
	tr := w.runs.drop(sp)
	if tr == nil {
		return
	}
	if tr.logPath != "" {
		w.detachLog(tr.logPath, sp)
	}
	delete(w.rereads, sp)
	u.Removed = append(u.Removed, sp)
}

func (w *Watcher) scheduleReread(sp string, now time.Time) { w.scheduleAt(sp, now.Add(rereadAfter)) }

// scheduleAt arranges a forced re-read of a run; an earlier one already arranged stands.
func (w *Watcher) scheduleAt(sp string, at time.Time) {
	if _, ok := w.rereads[sp]; !ok {
		w.rereads[sp] = at
	}
}

func (w *Watcher) armReread(now time.Time) {
	var next time.Time
	for _, at := range w.rereads {
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	if !next.IsZero() {
		w.rereadT.Reset(max(next.Sub(now), 0))
	}
}

func (w *Watcher) currentHealth(last time.Time) Health {
	h := Health{LastChange: last, Watches: w.tree.watches, Err: w.errNote}
	if w.lastErr != "" {
		if time.Since(w.lastErrAt) < errShownFor {
			h.Err = strings.Trim(h.Err+"; "+w.lastErr, "; ")
		} else {
			w.lastErr = ""
		}
	}
	polled := w.tree.polled
	switch {
	case polled == 0:
		h.Mode = "inotify"
	case polled == len(w.tree.dirs) || w.fsw == nil:
		h.Mode = "polling " + w.pollIvl.String()
	default:
		h.Mode = "mixed"
	}
	var notes []string
	if w.tree.limitErr != nil {
		what := "watch limit (fs.inotify.max_user_watches)"
		if errors.Is(w.tree.limitErr, syscall.EMFILE) {
			what = "instance limit (fs.inotify.max_user_instances)"
		}
		notes = append(notes, fmt.Sprintf("inotify %s reached: polling %d folders every %s", what, polled, w.pollIvl))
	}
	for _, name := range sortedKeys(w.tree.remoteSeen) {
		notes = append(notes, fmt.Sprintf("%s filesystem: polling every %s (inotify cannot see remote changes)", name, w.pollIvl))
	}
	if w.tree.otherErr != nil {
		notes = append(notes, w.tree.otherErr.Error())
	}
	if h.Err != "" {
		notes = append(notes, h.Err)
	}
	h.Err = strings.Join(notes, "; ")
	return h
}

// topmost drops directories that lie below another one in the set: rediscovering the parent covers them.
func topmost(dirs map[string]bool) []string {
	list := sortedKeys(dirs)
	var out []string
	for _, d := range list {
		if len(out) > 0 {
			last := out[len(out)-1]
			if d == last || strings.HasPrefix(d, last+string(filepath.Separator)) {
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// outbox hands Updates to the reader without ever blocking the watcher: an Update not yet taken absorbs
// the next one.
type outbox struct {
	mu      sync.Mutex
	pending *Update
	notify  chan struct{}
}

func (o *outbox) put(u Update) {
	o.mu.Lock()
	if o.pending == nil {
		o.pending = &u
	} else {
		o.pending.merge(u)
	}
	o.mu.Unlock()
	select {
	case o.notify <- struct{}{}:
	default:
	}
}

func (o *outbox) take() (Update, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending == nil {
		return Update{}, false
	}
	u := *o.pending
	o.pending = nil
	return u, true
}

func (w *Watcher) send() {
	defer w.wg.Done()
	for {
		select {
		case <-w.done:
			return
		case <-w.out.notify:
		}
		u, ok := w.out.take()
		if !ok {
			continue
		}
		select {
		case w.updates <- u:
		case <-w.done:
			return
		}
	}
}

// merge folds a later Update into this one so that applying the result equals applying both in order.
func (u *Update) merge(later Update) {
	for _, sp := range later.Removed {
		u.Changed = slicesDeleteRun(u.Changed, sp)
		u.Removed = append(u.Removed, sp)
	}
	for _, r := range later.Changed {
		u.Changed = slicesDeleteRun(u.Changed, r.StatePath)
		u.Changed = append(u.Changed, r)
	}
	for _, a := range later.Appended {
		last := -1
		for i := range u.Appended {
			if u.Appended[i].Path == a.Path {
				last = i
			}
		}
		if last < 0 || a.Truncated || a.Rotated {
			// A reset starts a new run of entries; it must stay after what came before it.
			u.Appended = append(u.Appended, a)
			continue
		}
		merged := &u.Appended[last]
		merged.Entries = runlog.Append(merged.Entries, a.Entries)
		merged.Skipped += a.Skipped
		if over := len(merged.Entries) - maxPendingEntries; over > 0 {
			// A reader that stopped reading must not make the watcher's memory grow with the log.
			merged.Entries = append([]model.LogEntry(nil), merged.Entries[over:]...)
			merged.Skipped += over
		}
	}
	u.Health = later.Health
	u.At = later.At
}

func slicesDeleteRun(runs []model.Run, sp string) []model.Run {
	out := runs[:0]
	for _, r := range runs {
		if r.StatePath != sp {
			out = append(out, r)
		}
	}
	return out
}
