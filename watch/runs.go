package watch

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"runwatch/model"
	"runwatch/state"
)

// trackedRun is a run as last read, with the paths that tie file changes back to it.
type trackedRun struct {
	// run is the run as last read and judged, the very value the reader holds too (Update.Changed): never
	// changed in place, a change is a new value (issue 35).
	run *model.Run
	// loc is where the run was found when the run's own fields say otherwise (location); nil, and no copy of
	// them, nearly always: 72 bytes a run (issue 35).
	loc      *state.Location
	lockPath string // resumable LOCK_FILE, which may sit in a subfolder or outside the run folder
	logPath  string
	// planPath is the plan (PLAN_PATH) the stage order was read from; it sits in the repository, outside
	// the run folder and often outside every root, and an edit of it can reorder the run's stages.
	planPath string
	// worktreeDir is the live copy's feature folder while a parallel jonggrang group runs in a git worktree
	// (the reader shows that copy, and that worktree's locks and gates).
	worktreeDir string
}

// location is where the run was found.
func (tr *trackedRun) location() state.Location {
	if tr.loc != nil {
		return *tr.loc
	}
	return locationOf(tr.run)
}

// locationOf is the location a run's own fields name.
func locationOf(r *model.Run) state.Location {
	return state.Location{Kind: r.Kind, Dir: r.Dir, StatePath: r.StatePath, ProjectRoot: r.ProjectRoot, Archived: r.Archived}
}

// tracker knows the runs and which files belong to which run.
type tracker struct {
	roots     []string
	fileRoots map[string]bool // roots that were files (a state file given directly) when watching began
	maxDepth  int
	env       model.Env
	// history learns stage durations from every run read; rules are the clock's thresholds (JudgeTime).
	history *model.History
	rules   model.LivenessRules

	runs map[string]*trackedRun // by StatePath, the run identity everywhere
	// Reverse indexes from a path to the StatePaths of the runs it belongs to.
	// byDir: run folder (several <name>.state.env runs can share one), but for a run whose state file is
	// its folder's state.env or MANIFEST.yaml, found in runs by that path instead (byOwnDir).
	byDir     model.KeyIndex
	byLock    model.KeyIndex      // lock file path
	byPlan    model.KeyIndex      // plan file path (several runs can share one)
	byProject map[string][]string // <project>/.jonggrang/locks and .ephemeral: shared by every feature run
	// key is affected's scratch for the paths it looks up in runs.
	key []byte
}

// ownStateNames are the state files that make a folder one run's: a run with one of them is not in byDir,
// its folder's path and the name are its StatePath (10,000 entries fewer at 10,000 runs, issue 35).
var ownStateNames = [...]string{"state.env", "MANIFEST.yaml"}

// inOwnDir says whether tr's StatePath is its folder's state.env or MANIFEST.yaml.
func (tr *trackedRun) inOwnDir() bool {
	sp, dir := tr.location().StatePath, tr.location().Dir
	if len(sp) <= len(dir)+1 || sp[:len(dir)] != dir || sp[len(dir)] != filepath.Separator {
		return false
	}
	return slices.Contains(ownStateNames[:], sp[len(dir)+1:])
}

// lockOutside says whether tr has a lock file outside its folder. One inside needs no byLock: a change to it,
// or to a folder holding it, is below the run's folder, which byDir or markOwnDir find (8,000 entries fewer
// at 10,000 runs, issue 35).
func (tr *trackedRun) lockOutside() bool {
	dir := tr.location().Dir
	return tr.lockPath != "" && !(len(tr.lockPath) > len(dir)+1 && tr.lockPath[:len(dir)] == dir && tr.lockPath[len(dir)] == filepath.Separator)
}

// markOwnDir marks the runs whose folder is dir and whose state file one of ownStateNames.
func (tk *tracker) markOwnDir(dir string, into map[string]bool) {
	for _, name := range ownStateNames {
		tk.key = append(append(append(tk.key[:0], dir...), filepath.Separator), name...)
		if tr, ok := tk.runs[string(tk.key)]; ok && tr.location().Dir == dir {
			into[tr.location().StatePath] = true
		}
	}
}

// markUnder sets into[sp] for every run sp filed under key.
func markUnder(x model.KeyIndex, key string, into map[string]bool) {
	one, several := x.Of(key)
	if one != "" {
		into[one] = true
	}
	for _, sp := range several {
		into[sp] = true
	}
}

func newTracker(roots []string, maxDepth int, env model.Env) *tracker {
	return &tracker{
		roots: roots, fileRoots: map[string]bool{}, maxDepth: maxDepth, env: env, history: model.NewHistory(),
		runs: map[string]*trackedRun{}, byDir: model.NewKeyIndex(), byLock: model.NewKeyIndex(), byPlan: model.NewKeyIndex(),
		byProject: map[string][]string{},
	}
}

func (tk *tracker) load(loc state.Location) *model.Run {
	run, now := tk.read(loc)
	model.JudgeTime(run, now, tk.rules, tk.history)
	return run
}

// read is load without the judgement by the clock, for runs judged once all are read (loadAll): judged as
// each was read, every run of a task taught the history, which then worked out that task's usual durations
// again for the next, over all its runs (a twentieth of a host's events CPU over 1,000 generated runs;
// issue 35).
func (tk *tracker) read(loc state.Location) (*model.Run, time.Time) {
	env := tk.env
	env.Now = time.Now()
	run := state.Load(loc, env)
	tk.history.Observe(&run)
	trim(&run)
	return &run, env.Now
}

// trim drops the spare room reading left at the end of a run's lists (appends double it): the watcher and the
// screen keep every run for as long as it is shown, 10,000 of them and more (issue 35).
func trim(r *model.Run) {
	r.Stages = clipped(r.Stages)
	r.Flags = clipped(r.Flags)
	r.Locks = clipped(r.Locks)
	r.Problems = clipped(r.Problems)
	r.Gates = clipped(r.Gates)
}

// clipped is s without spare capacity: a copy when it has some.
func clipped[S ~[]E, E any](s S) S {
	if cap(s) == len(s) {
		return s
	}
	return append(make(S, 0, len(s)), s...)
}

// set records a freshly read run and re-indexes its paths (a rewrite can move LOCK_FILE).
func (tk *tracker) set(loc state.Location, run *model.Run) *trackedRun {
	if old, ok := tk.runs[loc.StatePath]; ok {
		tk.unindex(old)
	}
	tr := &trackedRun{run: run}
	if loc != locationOf(run) {
		tr.loc = &loc
	}
	if run.Resumable != nil && run.Resumable.LockFile != "" {
		tr.lockPath = run.Resumable.LockFile
		if !filepath.IsAbs(tr.lockPath) {
			tr.lockPath = filepath.Join(loc.Dir, tr.lockPath)
		}
		tr.lockPath = filepath.Clean(tr.lockPath)
	}
	if run.Log != nil && run.Log.Path != "" {
		tr.logPath = filepath.Clean(run.Log.Path)
	}
	if run.Resumable != nil && run.Resumable.PlanPath != "" {
		tr.planPath = filepath.Clean(run.Resumable.PlanPath)
	}
	if run.Jonggrang != nil && run.Jonggrang.WorktreeCopyOf != "" {
		tr.worktreeDir = filepath.Dir(filepath.Clean(run.Jonggrang.WorktreeCopyOf))
	}
	tk.runs[loc.StatePath] = tr
	tk.index(tr)
	return tr
}

func (tk *tracker) drop(statePath string) *trackedRun {
	tr, ok := tk.runs[statePath]
	if !ok {
		return nil
	}
	tk.unindex(tr)
	delete(tk.runs, statePath)
	tk.history.Forget(tr.run.Key())
	return tr
}

func (tk *tracker) index(tr *trackedRun) {
	sp := tr.location().StatePath
	if !tr.inOwnDir() {
		tk.byDir.Add(tr.location().Dir, sp)
	}
	if tr.lockOutside() {
		tk.byLock.Add(tr.lockPath, sp)
	}
	if tr.planPath != "" {
		tk.byPlan.Add(tr.planPath, sp)
	}
	for _, d := range tr.projectDirs() {
		tk.byProject[d] = append(tk.byProject[d], sp)
	}
	if tr.worktreeDir != "" {
		tk.byDir.Add(tr.worktreeDir, sp)
	}
}

func (tk *tracker) unindex(tr *trackedRun) {
	sp := tr.location().StatePath
	if !tr.inOwnDir() {
		tk.byDir.Del(tr.location().Dir, sp)
	}
	if tr.lockOutside() {
		tk.byLock.Del(tr.lockPath, sp)
	}
	if tr.planPath != "" {
		tk.byPlan.Del(tr.planPath, sp)
	}
	for _, d := range tr.projectDirs() {
		without(tk.byProject, d, sp)
	}
	if tr.worktreeDir != "" {
		tk.byDir.Del(tr.worktreeDir, sp)
	}
}

func without(m map[string][]string, key, sp string) {
	list := m[key]
	for i, s := range list {
		if s == sp {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(m, key)
	} else {
		m[key] = list
	}
}

// projectDirs are the project-level folders whose files change every feature run of a jonggrang project:
// agent locks and the ephemeral gates; while a worktree copy is shown, that worktree's ones too.
func (tr *trackedRun) projectDirs() []string {
	if tr.location().Kind != model.KindJonggrang || tr.location().ProjectRoot == "" {
		return nil
	}
	dirs := jonggrangShared(tr.location().ProjectRoot)
	if tr.worktreeDir != "" {
		// <worktree>/.jonggrang/.output/features/<fid>
		wroot := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(tr.worktreeDir))))
		dirs = append(dirs, jonggrangShared(wroot)...)
	}
	return dirs
}

func jonggrangShared(projectRoot string) []string {
	dot := filepath.Join(projectRoot, ".jonggrang")
	return []string{filepath.Join(dot, "locks"), filepath.Join(dot, ".ephemeral")}
}

// affected returns the runs a changed path belongs to: anything inside a run folder, a run's lock file (and
// the folder holding it, whose removal takes the lock along), the plan its stage order came from, and a
// project's shared folders.
func (tk *tracker) affected(path string, isDir bool, into map[string]bool) {
	markUnder(tk.byLock, path, into)
	markUnder(tk.byPlan, path, into)
	for p := path; ; {
		markUnder(tk.byDir, p, into)
		tk.markOwnDir(p, into)
		for _, sp := range tk.byProject[p] {
			into[sp] = true
		}
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	if !isDir {
		return
	}
	// The lock folder itself appearing or vanishing (lock/ created by the writer, or removed with the lock).
	tk.locksUnder(path, into)
}

// locksUnder marks the runs whose lock file is below a changed directory path. A scan of the runs, as
// byLock holds only the locks outside their runs' folders (lockOutside).
func (tk *tracker) locksUnder(dir string, into map[string]bool) {
	prefix := dir + string(filepath.Separator)
	for sp, tr := range tk.runs {
		if strings.HasPrefix(tr.lockPath, prefix) {
			into[sp] = true
		}
	}
}

// rootOf finds the scan root holding path and path's depth below it.
func (tk *tracker) rootOf(path string) (root string, depth int, ok bool) {
	for _, r := range tk.roots {
		if path != r && !strings.HasPrefix(path, r+string(filepath.Separator)) {
			continue
		}
		if len(r) < len(root) {
			continue
		}
		root, ok = r, true
		depth = 0
		if rel := strings.TrimPrefix(path, r); rel != "" {
			depth = strings.Count(rel, string(filepath.Separator))
		}
	}
	return root, depth, ok
}

// rediscover runs discovery over the subtree at dir, the way the scan from the roots would see it, and
// compares with the runs known there: new locations are returned as added, known runs the scan no longer
// finds (folder deleted or renamed away, state file gone) as removed.
func (tk *tracker) rediscover(dir string) (added []state.Location, removed []string) {
	if i := strings.Index(dir+string(filepath.Separator), string(filepath.Separator)+".jonggrang"+string(filepath.Separator)); i >= 0 {
		// Anything under .jonggrang is found through its project, whatever the depth, unless the scan root
		// itself lies inside .jonggrang (a features folder given as a path).
		if _, _, ok := tk.rootOf(dir[:i]); ok {
			dir = dir[:i]
		}
	}
	_, depth, ok := tk.rootOf(dir)
	if !ok {
		return tk.rediscoverFiles(dir)
	}
	remaining := tk.maxDepth - depth
	if remaining < 0 {
		return nil, nil
	}
	found := map[string]bool{}
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		// Discover treats a depth of 0 as "default"; at the depth limit only dir itself counts.
		locs, _ := state.Discover([]string{dir}, max(remaining, 1))
		for _, loc := range locs {
			if remaining == 0 && loc.Dir != dir && loc.ProjectRoot != dir {
				continue
			}
			found[loc.StatePath] = true
			if _, known := tk.runs[loc.StatePath]; !known {
				added = append(added, loc)
			}
		}
	}
	prefix := dir + string(filepath.Separator)
	for sp, tr := range tk.runs {
		under := tr.location().Dir == dir || strings.HasPrefix(tr.location().Dir, prefix) || tr.location().ProjectRoot == dir
		if under && !found[sp] {
			removed = append(removed, sp)
		}
	}
	sort.Strings(removed)
	return added, removed
}

func (tk *tracker) isFileRoot(root string) bool { return tk.fileRoots[root] }

// rediscoverFiles handles roots that are state files given directly: the folder holding one changed.
func (tk *tracker) rediscoverFiles(dir string) (added []state.Location, removed []string) {
	for _, root := range tk.roots {
		if filepath.Dir(root) != dir {
			continue
		}
		var locs []state.Location
		if st, err := os.Stat(root); err == nil && !st.IsDir() {
			locs, _ = state.Discover([]string{root}, 1)
		}
		found := false
		for _, loc := range locs {
			found = found || loc.StatePath == root
			if _, known := tk.runs[loc.StatePath]; !known {
				added = append(added, loc)
			}
		}
		if _, known := tk.runs[root]; known && !found {
			removed = append(removed, root)
		}
	}
	return added, removed
}

// isStateName reports whether a file name could make a folder a run (a change to it may add or remove one).
func isStateName(name string) bool { return name == "MANIFEST.yaml" || state.IsStateFileName(name) }

// manifestNotYet reports a jonggrang feature folder without its MANIFEST.yaml: brand new, it is one
// createManifest has made and not yet written.
func manifestNotYet(run *model.Run) bool {
	if run.Kind != model.KindJonggrang {
		return false
	}
	for _, p := range run.Problems {
		if p.Code == model.CodeManifestMissing {
			return true
		}
	}
	return false
}

// needsReread reports whether a run's problems look like a half-written file: jonggrang writers rewrite the
// manifest in place without a temp file, so a read can land between truncate and write.
func needsReread(run *model.Run) bool {
	for _, p := range run.Problems {
		switch p.Code {
		case model.CodeManifestUnparsable, model.CodeManifestInvalid, model.CodeManifestTorn, model.CodeStateUnparsable,
			model.CodeChecklistUnparsable:
			return true
		}
	}
	return false
}
