package watch

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"runwatch/model"
)

func (w *Watcher) loop() {
	defer w.wg.Done()
	if w.initial != nil {
		w.loadInitial()
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w.fsw != nil {
		events, errs = w.fsw.events(), w.fsw.errors()
	}
	// The poll and liveness timers run only while there is something for them to do (a polled folder, a
	// verdict that time can change): a quiet tree under inotify wakes nobody but the reconcile scan.
	pollT := time.NewTimer(w.pollIvl)
	pollOn := true
	defer pollT.Stop()
	// The walk that set up the watches listed every folder, as a scan does: the first scan waits for its share
	// of that, as every later one waits for its share of the scan before it. (At a fixed 30 s, the first
	// scan was an idle dashboard's only work in its first minute: 0.33% of a core at 1,200 runs, issue 35.)
	w.rec.start(w.opts.reconcile, w.walkTook)
	defer w.rec.t.Stop()
	w.rec.arm(w.reconcileAfter(w.rec.ivl, w.rec.took), w.opts.reconcileArmed)
	live := newLivenessTimer(w.opts.liveness)
	defer live.t.Stop()
	for {
		if !pollOn && w.tree.polled > 0 {
			pollT.Reset(w.pollIvl)
			pollOn = true
		}
		if w.livenessWanted {
			live.want()
		}
		w.livenessWanted = false
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
		case <-w.judgeT.C:
			// Some run's judgement changes by the clock now (it went quiet, or orphaned): flush re-judges it.
			w.judgeDue = true
			w.flush()
		case now := <-w.rereadT.C:
			for sp, at := range w.rereads {
				if !now.Before(at) {
					w.force[sp] = true
				}
			}
			w.flush()
		case <-pollT.C:
			pollOn = w.pollDirs(pollT)
		case now := <-live.t.C:
			w.judgeLiveness(now, live)
		case <-w.rec.t.C:
			w.reconcile()
		}
	}
}

// pollDirs scans the directories inotify does not cover, and says whether the poll timer is armed again.
func (w *Watcher) pollDirs(pollT *time.Timer) bool {
	if w.tree.polled == 0 {
		return false
	}
	var ch []change
	for _, d := range w.tree.polledDirs() {
		w.tree.scan(d, &ch)
	}
	if len(ch) > 0 {
		w.addChanges(ch)
		w.flush()
	}
	if w.tree.polled > 0 {
		pollT.Reset(w.pollIvl)
		return true
	}
	return false
}

// livenessTimer re-judges the locks whose verdict time alone can change; it runs only while some does.
type livenessTimer struct {
	t     *time.Timer
	every time.Duration
	on    bool
	at    time.Time // when the armed timer fires
}

func newLivenessTimer(every time.Duration) *livenessTimer {
	if every <= 0 {
		every = livenessInterval
	}
	return &livenessTimer{t: time.NewTimer(every), every: every, on: true, at: time.Now().Add(every)}
}

// want arms the timer for a run tracked since it was last set: when it is off, or armed for a lock's
// acquired_at far ahead.
func (l *livenessTimer) want() {
	if !l.on || time.Until(l.at) > l.every {
		l.t.Reset(l.every)
		l.on, l.at = true, time.Now().Add(l.every)
	}
}

// judgeLiveness re-judges the runs whose lock verdicts the clock can change. A holder that crashed leaves
// its lock file untouched: no event will ever say so. Re-judging is a kill(pid, 0) per lock and a clock
// comparison; a run is read again only if a verdict flips. Runs whose locks only wait for an acquired_at in
// the future to come are judged when it comes, not every interval: a workspace dated ahead (or a skewed
// clock) kept the timer judging thousands of locks, a kill(pid, 0) each, every 2 s (issue 26).
func (w *Watcher) judgeLiveness(now time.Time, l *livenessTimer) {
	env := w.runs.env
	env.Now = now
	l.on = false
	var comes time.Time // the earliest acquired_at still to come
	judged := 0
	for sp, tr := range w.runs.runs {
		poll := model.JudgementNeedsPolling(tr.run, env)
		at := model.JudgementComesAt(tr.run)
		if !poll && (at.IsZero() || now.Before(at)) {
			if !at.IsZero() && (comes.IsZero() || at.Before(comes)) {
				comes = at
			}
			continue
		}
		l.on = l.on || poll
		judged++
		if model.JudgementOutdated(tr.run, env) {
			w.force[sp] = true
		}
	}
	if w.opts.livenessPass != nil {
		w.opts.livenessPass(judged)
	}
	switch {
	case l.on:
		l.t.Reset(l.every)
		l.at = now.Add(l.every)
	case !comes.IsZero():
		l.t.Reset(max(0, comes.Sub(now)))
		l.on, l.at = true, comes
	}
	if len(w.force) > 0 {
		w.flush()
	}
}

// reconcile is the safety net: it compares every watched directory with what was last seen, by stat only,
// and arms itself again.
func (w *Watcher) reconcile() {
	start := time.Now()
	var ch []change
	for _, d := range w.tree.allDirs() {
		w.tree.scan(d, &ch)
	}
	w.rec.took = time.Since(start)
	w.rec.found(len(ch) > 0)
	w.rec.arm(w.reconcileAfter(w.rec.ivl, w.rec.took), w.opts.reconcileArmed)
	w.addChanges(ch)
	if len(ch) > 0 || (w.lastErr != "" && time.Since(w.lastErrAt) >= errShownFor) {
		w.flush() // also takes an old passing error off the health line
	}
}

// reconcileAfter is how long the reconcile scan waits, at interval ivl, after a look at the whole tree that
// took took. Over 10,000 runs one scan lists and stats every folder (hundreds of milliseconds, and the
// collection its garbage costs): at a fixed 30 s it was most of an idle dashboard's CPU. Spaced by its own
// cost, it takes at most 1/reconcileShare of the time however big the tree.
func (w *Watcher) reconcileAfter(ivl, took time.Duration) time.Duration {
	if w.opts.reconcile > 0 {
		return ivl
	}
	share := time.Duration(reconcileShare)
	if w.opts.reconcileShare > 0 {
		share = w.opts.reconcileShare
	}
	return max(ivl, share*took)
}

// reconcileSched is when the reconcile scan runs. Its interval doubles after each scan that found nothing
// inotify had not already reported, up to reconcileStretch times the base, and is back at the base after
// one that did, or after a passing error (an overflow, a failed read). inotify misses nothing but what an
// overflow reports, so a scan that keeps finding nothing only costs: at 30 s over a small tree it was a
// third of an idle dashboard's CPU (issue 35), while the base interval still holds wherever events are
// being lost.
type reconcileSched struct {
	t    *time.Timer // nil until the loop starts
	at   time.Time   // when t fires
	base time.Duration
	ivl  time.Duration
	took time.Duration // how long the last look at the whole tree took
}

func (r *reconcileSched) start(test, walkTook time.Duration) {
	r.base = reconcileEvery
	if test > 0 {
		r.base = test
	}
	r.ivl, r.took = r.base, walkTook
	r.t = time.NewTimer(time.Hour)
}

func (r *reconcileSched) arm(d time.Duration, told func(time.Duration)) {
	r.t.Reset(d)
	r.at = time.Now().Add(d)
	if told != nil {
		told(d)
	}
}

// found sets the interval after a scan that found something (or not).
func (r *reconcileSched) found(something bool) {
	if something {
		r.ivl = r.base
		return
	}
	r.ivl = min(2*r.ivl, reconcileStretch*r.base)
}

// reconcileSoon puts the reconcile scan back at its base interval, and brings it forward if it was armed
// for later than that.
func (w *Watcher) reconcileSoon() {
	r := &w.rec
	if r.t == nil {
		return
	}
	r.ivl = r.base
	if d := w.reconcileAfter(r.ivl, r.took); time.Now().Add(d).Before(r.at) {
		r.arm(d, w.opts.reconcileArmed)
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
	w.reconcileSoon()
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
	f := &flushing{w: w, now: now, dirty: map[string]bool{}, followUps: w.force, rediscover: map[string]bool{},
		logsToRead: map[string]bool{}, vanished: map[string]bool{}, u: Update{At: now}}
	for sp := range w.force {
		f.dirty[sp] = true
		delete(w.rereads, sp)
	}
	w.force = map[string]bool{}
	if w.rescanAll {
		w.rescanAll = false
		f.rescanAll(batch, goneDirs)
	}
	f.classify(batch, goneDirs)
	for sp := range f.followUps {
		// The grace for a vanished state file is over and it is still gone: let discovery decide whether
		// the folder is still a run.
		if tr, ok := w.runs.runs[sp]; ok {
			if _, err := os.Stat(sp); errors.Is(err, os.ErrNotExist) {
				f.rediscover[tr.location().Dir] = true
			}
		}
	}
	f.discover()
	w.rewatchRoots(&f.synth)
	f.readLogs()
	f.reload()
	w.armReread(now)
	if len(f.synth) > 0 {
		// Folders that became watched during this batch: what they hold goes through the next one.
		w.addChanges(f.synth)
	}
	w.rejudge(now, &f.u)
	w.armJudge(now)
	w.publish(now, f.u)
}

// flushing is one flush under way: what it found to do, and the Update it builds.
type flushing struct {
	w          *Watcher
	now        time.Time
	dirty      map[string]bool // state files to read again
	followUps  map[string]bool // forced: a grace or a re-read came due
	rediscover map[string]bool // folders where runs may have appeared or vanished
	logsToRead map[string]bool
	vanished   map[string]bool // state files gone, shown as they were until their grace ends
	synth      []change        // changes the next batch must see
	u          Update
}

// rescanAll stats every watched folder again, and reads every run and log, after events were lost.
func (f *flushing) rescanAll(batch map[string]fsnotify.Op, goneDirs map[string]bool) {
	w := f.w
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
		f.rediscover[r] = true
	}
	for sp := range w.runs.runs {
		f.dirty[sp] = true
	}
	for p := range w.logs {
		f.logsToRead[p] = true
	}
}

// classify sorts the batch's paths into runs to read, folders to rediscover and logs to read.
func (f *flushing) classify(batch map[string]fsnotify.Op, goneDirs map[string]bool) {
	w := f.w
	for path, op := range batch {
		st, exists, wasDir := w.tree.refresh(path)
		isDir := (exists && st.dir) || (!exists && (wasDir || goneDirs[path]))
		_, known := w.runs.runs[path]
		structural := op&(fsnotify.Create|fsnotify.Remove|fsnotify.Rename) != 0
		switch {
		case structural && isDir:
			f.rediscover[path] = true
		case structural && known && !exists:
			// A run's state file vanished. An editor's save or a writer's replace usually puts it back
			// within milliseconds: decide after a grace period rather than flash the run away and back.
			w.scheduleAt(path, f.now.Add(w.grace))
			f.vanished[path] = true
		case structural && isStateName(filepath.Base(path)) && !known:
			f.rediscover[filepath.Dir(path)] = true
		}
		w.runs.affected(path, isDir, f.dirty)
		if _, ok := w.logs[path]; ok {
			f.logsToRead[path] = true
		}
	}
}

// discover finds the runs that appeared or vanished under the folders to rediscover, and reads the new ones.
func (f *flushing) discover() {
	w := f.w
	for _, d := range topmost(f.rediscover) {
		added, removed := w.runs.rediscover(d)
		for _, sp := range removed {
			w.removeRun(sp, &f.u)
			delete(f.dirty, sp)
		}
		for _, loc := range added {
			run := w.runs.load(loc)
			w.trackRun(loc, run, false, &f.synth)
			delete(f.dirty, loc.StatePath)
			if manifestNotYet(run) {
				w.unshown[loc.StatePath] = true
				w.scheduleAt(loc.StatePath, f.now.Add(w.grace))
				continue
			}
			if needsReread(run) {
				w.scheduleReread(loc.StatePath, f.now)
				continue
			}
			f.u.Changed = append(f.u.Changed, run)
			delete(w.unshown, loc.StatePath)
			if tr := w.runs.runs[loc.StatePath]; tr.logPath != "" {
				f.logsToRead[tr.logPath] = true
			}
		}
	}
}

// rewatchRoots watches each root again where it is not watched: a deleted root is watched for its return
// (for a state file given directly: its folder).
func (w *Watcher) rewatchRoots(synth *[]change) {
	for _, r := range w.runs.roots {
		if _, ok := w.tree.dirs[r]; ok {
			continue
		}
		st, err := os.Stat(r)
		switch {
		case err == nil && !st.IsDir():
			w.tree.ensure(filepath.Dir(r), 0, synth)
		case err != nil && w.runs.isFileRoot(r):
			w.tree.ensure(filepath.Dir(r), 0, synth)
		default:
			w.tree.ensure(r, w.opts.MaxDepth, synth)
		}
	}
}

// readLogs reads what was appended to each log to read; a run whose log grew is read again too.
func (f *flushing) readLogs() {
	w := f.w
	for _, p := range sortedKeys(f.logsToRead) {
		lt, ok := w.logs[p]
		if !ok {
			continue
		}
		fl := lt.follower()
		entries, truncated, rotated, err := fl.Poll()
		if err != nil {
			w.noteErr(err.Error())
		}
		if fl.More() {
			// A big append is handed over in pieces; the next batch reads on.
			f.synth = append(f.synth, change{path: p, op: fsnotify.Write})
		}
		if len(entries) == 0 && !truncated && !rotated {
			continue
		}
		f.u.Appended = append(f.u.Appended, LogAppend{Path: p, Entries: entries, Truncated: truncated, Rotated: rotated})
		// The run reflects its log too (size, last activity, stage order from stage_start lines): read it
		// again, once per batch however many lines arrived.
		for _, sp := range lt.owners {
			f.dirty[sp] = true
		}
	}
}

// reload reads each dirty run once, and shows it when it changed.
func (f *flushing) reload() {
	w := f.w
	for _, sp := range sortedKeys(f.dirty) {
		tr, ok := w.runs.runs[sp]
		if !ok {
			continue
		}
		if _, err := os.Stat(tr.location().Dir); errors.Is(err, os.ErrNotExist) {
			w.removeRun(sp, &f.u)
			continue
		}
		if f.vanished[sp] {
			continue // shown as it was until the grace period ends
		}
		run := w.runs.load(tr.location())
		old := tr.run
		w.trackRun(tr.location(), run, false, &f.synth)
		if w.unshown[sp] && manifestNotYet(run) && !f.followUps[sp] {
			continue // still within the grace of a brand-new feature folder
		}
		if needsReread(run) && !f.followUps[sp] {
			// Probably read mid-write: look again shortly before showing the error.
			w.scheduleReread(sp, f.now)
			continue
		}
		if !reflect.DeepEqual(old, run) || f.followUps[sp] || w.unshown[sp] {
			f.u.Changed = append(f.u.Changed, run)
			delete(w.unshown, sp)
		}
	}
}

// publish hands u on with the watcher's health, unless nothing changed and the health did not move.
func (w *Watcher) publish(now time.Time, u Update) {
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
	if w.unshown[sp] {
		delete(w.unshown, sp) // never handed out: nothing to take back
		return
	}
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

// rejudge judges again, in memory, the runs whose time-based judgement may have moved: every run when the
// history changed (a stage finished somewhere, so what is usual moved), else those whose recheck time has
// come. Runs that judge differently go into u (replacing a copy already there).
func (w *Watcher) rejudge(now time.Time, u *Update) {
	v := w.runs.history.Version()
	all := v != w.judgedVersion
	w.judgedVersion = v
	at := map[string]int{}
	for i, r := range u.Changed {
		at[r.StatePath] = i
		w.noteJudge(r)
	}
	due := w.judgeDue || (!w.nextJudge.IsZero() && !now.Before(w.nextJudge))
	w.judgeDue = false
	if !all && !due {
		return
	}
	// Every run is looked at (a clock comparison each), so nextJudge is found again from all of them.
	w.nextJudge = time.Time{}
	// Each run is judged on one scratch copy (the screen holds the run itself), and a run of its own is made
	// only for those that judge differently: after a first load all 10,000 are judged again and a sixth of
	// them differ; a copy of each, of its stages and reflect.DeepEqual's visited pointers were 50 MB of
	// garbage, a twentieth of what the load allocates (issue 35).
	var scratch model.Run
	var stages []model.Stage
	for sp, tr := range w.runs.runs {
		rc := tr.run.Attention.RecheckAt()
		if !all && (rc.IsZero() || now.Before(rc)) {
			w.noteJudge(tr.run)
			continue
		}
		scratch = *tr.run
		stages = append(stages[:0], tr.run.Stages...)
		scratch.Stages = stages
		model.JudgeTime(&scratch, now, w.runs.rules, w.runs.history)
		w.noteJudge(&scratch)
		if judgedAlike(&scratch, tr.run) {
			continue
		}
		again := scratch
		again.Stages = slices.Clone(stages)
		tr.run = &again
		if _, pending := w.rereads[sp]; pending || w.unshown[sp] {
			continue // held back (read mid-write, or not shown yet): its next read goes out instead
		}
		if i, ok := at[sp]; ok {
			u.Changed[i] = &again
		} else {
			at[sp] = len(u.Changed)
			u.Changed = append(u.Changed, &again)
		}
	}
}

// judgedAlike says whether a run judged again (a copy of b) came out as b did in what model.JudgeTime sets:
// status, attention, the run's timing and each stage's, compared by value (reflect.DeepEqual allocated its
// map of visited pointers, a few hundred bytes a run). TestJudgedAlikeKnowsEveryTimingField fails when a
// timing gets a field it does not compare; should JudgeTime set more of a run, compare that here too.
func judgedAlike(a, b *model.Run) bool {
	if a.Status != b.Status || a.Attention != b.Attention || !sameRunTiming(a.Timing, b.Timing) || len(a.Stages) != len(b.Stages) {
		return false
	}
	for i := range a.Stages {
		if !sameStageTiming(a.Stages[i].Timing, b.Stages[i].Timing) {
			return false
		}
	}
	return true
}

func sameRunTiming(a, b *model.RunTiming) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Task == b.Task && same(a.Started, b.Started) && same(a.RemainingSeconds, b.RemainingSeconds) && a.Runs == b.Runs &&
		same(a.ElapsedSeconds, b.ElapsedSeconds) && same(a.ETASeconds, b.ETASeconds)
}

func sameStageTiming(a, b *model.StageTiming) bool {
	if a == nil || b == nil {
		return a == b
	}
	return same(a.Started, b.Started) && same(a.Ended, b.Ended) && same(a.UsualMedianSeconds, b.UsualMedianSeconds) &&
		same(a.UsualP90Seconds, b.UsualP90Seconds) && same(a.UsualLowSeconds, b.UsualLowSeconds) &&
		same(a.UsualHighSeconds, b.UsualHighSeconds) && a.Runs == b.Runs && same(a.ElapsedSeconds, b.ElapsedSeconds)
}

// same compares what two pointers point to; a time.Time by ==, its location by pointer: stricter than
// DeepEqual, so a change is never missed, at worst a run goes out again.
func same[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// noteJudge keeps nextJudge the earliest recheck time of the runs judged.
func (w *Watcher) noteJudge(r *model.Run) {
	if rc := r.Attention.RecheckAt(); !rc.IsZero() && (w.nextJudge.IsZero() || rc.Before(w.nextJudge)) {
		w.nextJudge = rc
	}
}

// armJudge sets the judge timer to nextJudge. Only one timer, and it fires only when a judgement is due: at
// the scale of the grace periods (minutes), never on a tick.
func (w *Watcher) armJudge(now time.Time) {
	if w.judgeT == nil {
		return
	}
	w.judgeT.Stop()
	if w.nextJudge.IsZero() {
		return
	}
	// A past recheck (a run re-read since, so it moved on) costs one scan and is forgotten.
	w.judgeT.Reset(max(time.Second, w.nextJudge.Sub(now)))
}
