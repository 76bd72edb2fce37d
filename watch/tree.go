package watch

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"runwatch/state"
	"runwatch/state/resumable"
)

// change is one path that changed, seen by inotify or by comparing stats.
type change struct {
	path string
	op   fsnotify.Op
	// wasDir: a directory went away here. Once it is gone nothing on disk can say so, and a folder of runs
	// renamed away must still take its runs along.
	wasDir bool
}

// fileStat is what polling and the reconcile scan compare: size and mtime catch in-place rewrites and
// truncation, the inode catches an atomic replace that kept both.
type fileStat struct {
	size  int64
	mtime int64
	ino   uint64
	dir   bool
	// baseline: only the name and kind are known yet (see entryStat); the next scan records the rest
	// without reporting a change.
	baseline bool
}

func statOf(fi fs.FileInfo) fileStat {
	s := fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), dir: fi.IsDir()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = sys.Ino
	}
	if s.dir {
		// A directory's own size and mtime change whenever an entry does; its entries are compared in its own
		// scan, so only its identity matters here.
		s.size, s.mtime = 0, 0
	}
	return s
}

type fileID struct{ dev, ino uint64 }

// idSet is a set of identities by device, then inode: an inode is a key of 8 bytes where a fileID is one of
// 16, and the watched folders are on one device or a few. At 10,000 runs the set of fileIDs was 1.7 MB
// (issue 35).
type idSet map[uint64]map[uint64]struct{}

func (s idSet) has(id fileID) bool {
	_, ok := s[id.dev][id.ino]
	return ok
}

func (s idSet) add(id fileID) {
	inos := s[id.dev]
	if inos == nil {
		inos = map[uint64]struct{}{}
		s[id.dev] = inos
	}
	inos[id.ino] = struct{}{}
}

func (s idSet) del(id fileID) {
	inos := s[id.dev]
	delete(inos, id.ino)
	if len(inos) == 0 {
		delete(s, id.dev)
	}
}

// dirNode is one watched directory: 48 bytes, a size class below 64, over some 36,000 folders at 10,000
// runs (issue 35). Its fields leave no padding between them; the descriptors a kqueue watch holds are the
// fdBudget's, not a field every folder pays for on Linux.
type dirNode struct {
	id fileID
	// entries is the directory's snapshot; listed says it has been taken (an empty folder has none).
	entries dirEntries
	// wd is its watch's descriptor (notifier.add), or wdPolled or wdOverBudget when it has none.
	wd int32
	// budget is how many levels below this directory are still watched (0: this one only); at most
	// maxBudgetDepth.
	budget int16
	listed bool
	// inRun: a run folder (it holds state.env) or a folder inside one, whose entries' names recur from run
	// to run (names).
	inRun bool
}

// A dirNode's wd when it has no watch: polled, inotify could not or must not watch it, so the poll timer
// compares stats instead; over budget, polled because its descriptors did not fit the fdBudget.
const (
	wdPolled     = -1
	wdOverBudget = -2
)

func (n *dirNode) polled() bool     { return n.wd < 0 }
func (n *dirNode) overBudget() bool { return n.wd == wdOverBudget }

// dirEntries is a directory's snapshot sorted by name: a slice, not a map, because most watched folders
// hold a handful of entries and a Go map costs some 400 bytes before its first. At 2,000 runs the maps were
// a tenth of the dashboard's bytes a run (issue 35); a slice costs 40 bytes an entry.
type dirEntries []dirEntry

// dirEntry is a name and its fileStat with the stat's kind in its size's sign: 40 bytes, not fileStat's 32
// beside the name's 16, over ~130,000 entries at 10,000 runs (issue 35). A size is never negative, and a
// folder's and a baseline's are 0 (statOf, entryStat), so the sign tells them apart without losing a bit.
type dirEntry struct {
	name  string
	size  int64 // >= 0: a file's size; else one of the kinds below
	mtime int64
	ino   uint64
}

// The kinds a dirEntry's size stands for when negative.
const (
	sizeDir          = -1
	sizeBaselineFile = -2
	sizeBaselineDir  = -3
)

func packEntry(name string, st fileStat) dirEntry {
	e := dirEntry{name: name, size: st.size, mtime: st.mtime, ino: st.ino}
	switch {
	case st.dir && st.baseline:
		e.size = sizeBaselineDir
	case st.dir:
		e.size = sizeDir
	case st.baseline:
		e.size = sizeBaselineFile
	}
	return e
}

func (e dirEntry) stat() fileStat {
	st := fileStat{size: e.size, mtime: e.mtime, ino: e.ino}
	if e.size < 0 {
		st.size = 0
		st.dir = e.size == sizeDir || e.size == sizeBaselineDir
		st.baseline = e.size <= sizeBaselineFile
	}
	return st
}

func (d dirEntries) find(name string) (int, bool) {
	return slices.BinarySearchFunc(d, name, func(e dirEntry, name string) int { return strings.Compare(e.name, name) })
}

func (d dirEntries) get(name string) (fileStat, bool) {
	if i, ok := d.find(name); ok {
		return d[i].stat(), true
	}
	return fileStat{}, false
}

// set records name's stat; a name new to the snapshot is kept as keep gives it.
func (d *dirEntries) set(name string, st fileStat, keep func(string) string) {
	if i, ok := d.find(name); ok {
		(*d)[i] = packEntry((*d)[i].name, st)
	} else {
		*d = slices.Insert(*d, i, packEntry(keep(name), st))
	}
}

// maxNames bounds the names a tree shares: a run folder's and its artifacts' are the writer's few dozen.
const maxNames = 4096

// names are the entry names a tree keeps once for every folder in a run that holds them (state.env,
// run.log, checkpoints, M0.done.json, ...): at 10,000 runs a copy each was 110,000 strings (issue 35).
type names map[string]string

// keeper is how node's new entries keep their names: shared when node is in a run, else as given (a name
// a listing gave is a string of its own).
func (n names) keeper(node *dirNode) func(string) string {
	if !node.inRun {
		return func(name string) string { return name }
	}
	return n.of
}

func (n names) of(name string) string {
	if s, ok := n[name]; ok {
		return s
	}
	s := strings.Clone(name)
	if len(n) < maxNames {
		n[s] = s
	}
	return s
}

// reuse makes name's entry keep same, a string equal to name, instead of its own.
func (d dirEntries) reuse(name, same string) {
	if i, ok := d.find(name); ok && same == name {
		d[i].name = same
	}
}

func (d *dirEntries) del(name string) {
	if i, ok := d.find(name); ok {
		*d = slices.Delete(*d, i, i+1)
	}
}

// Budgets of the directories whose depth is fixed by the conventions rather than by the scan depth.
const (
	// maxBudgetDepth bounds a folder's budget, which a dirNode holds in 16 bits: no tree is that deep.
	maxBudgetDepth = math.MaxInt16

	// A resumable run folder: its files, lock/ and artifacts/ with the folders the reader opens under it
	// (childBudget). The rest of artifacts/ is evidence, possibly huge, that no reader looks into.
	runDirBudget = 2
	// .jonggrang → .output → features → <feature_id>, and locks/, .ephemeral/pending-roles/.
	jonggrangBudget = 3
)

// mtimeSlack: file times come from the kernel's coarse clock (a tick behind) or have a granularity up to
// 2 s (FAT), so a file written just after watching began can carry an earlier mtime. Entries modified this
// little before are reported once too: a spare re-read, never a lost change.
const mtimeSlack = 2 * time.Second

// errWatchLimit stands in for ENOSPC when a test caps the number of watches.
var errWatchLimit = syscall.ENOSPC

// tree is the set of watched directories. Recursion is ours: inotify watches one directory at a time.
type tree struct {
	fsw        notifier // nil when inotify is unavailable: everything is polled
	forcePoll  bool
	watchLimit int // test hook: Add fails with ENOSPC once this many watches exist (0: no cap)
	remote     func(string) (string, bool)

	dirs map[string]*dirNode
	// ids are the identities of the watched directories, to watch a directory reached twice (a symlink)
	// once. A set: its name is the one in dirs, and a name beside each id cost ~40 bytes a folder. Only
	// those the notifier does not identify itself (keepsID).
	ids     idSet
	names   names
	wanted  map[string]int // directories to watch as soon as they exist, with their budget
	watches int
	polled  int

	since      int64          // UnixNano when watching began: baseline entries modified later are reported
	limitErr   error          // the first ENOSPC/EMFILE, kept for health
	remoteSeen map[string]int // remote filesystem name → polled directories on it
	otherErr   error
	fds        fdBudget
}

func newTree(fsw notifier, forcePoll, costsDescriptors bool) *tree {
	return &tree{
		fsw: fsw, forcePoll: forcePoll, remote: remoteFS, since: time.Now().Add(-mtimeSlack).UnixNano(),
		dirs: map[string]*dirNode{}, ids: idSet{}, names: names{}, wanted: map[string]int{},
		remoteSeen: map[string]int{}, fds: newFDBudget(costsDescriptors),
	}
}

// childBudget decides whether a subdirectory named name of a directory with budget parentBudget is watched,
// and with what budget. It mirrors state.Discover, so that every place a run could appear is watched.
func childBudget(parentDir string, parentBudget int, name string) (int, bool) {
	switch {
	case name == ".git" || name == "node_modules":
		return 0, false
	case name == ".worktree" && filepath.Base(parentDir) == ".jonggrang":
		// Whole git worktrees of parallel runs: far too big to watch. The one feature folder a running group
		// writes to is watched on its own (trackRun).
		return 0, false
	case name == ".jonggrang":
		// Discover looks into .jonggrang of every directory it visits, whatever the depth.
		return jonggrangBudget, true
	case parentBudget <= 0:
		return 0, false
	}
	return parentBudget - 1, true
}

// ensure watches dir with at least the given budget, or, when it does not exist yet, watches its nearest
// existing ancestor so that its creation is seen. New files found are appended to synth as Create changes:
// files made between a mkdir and our Add would otherwise never be reported.
func (t *tree) ensure(dir string, budget int, synth *[]change) {
	if _, err := os.Stat(dir); err != nil {
		if b, ok := t.wanted[dir]; !ok || b < budget {
			t.wanted[dir] = budget
		}
		for anc := filepath.Dir(dir); anc != dir; dir, anc = anc, filepath.Dir(anc) {
			if _, err := os.Stat(anc); err == nil {
				t.add(anc, 0, nil)
				return
			}
		}
		return
	}
	t.add(dir, budget, synth)
}

// add watches dir and its eligible subdirectories. An already watched directory is re-walked only when the
// new budget reaches deeper. It returns the string a directory it began to watch is known by (see rekey),
// "" when it watched no new one.
func (t *tree) add(dir string, budget int, synth *[]change) string {
	if b, ok := t.wanted[dir]; ok {
		budget = max(budget, b)
		delete(t.wanted, dir)
	}
	budget = min(budget, maxBudgetDepth)
	node, known := t.dirs[dir]
	if known && int(node.budget) >= budget {
		return ""
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return ""
	}
	if !known {
		id := idOf(st)
		// dir is not in dirs, so an id already there is another name's.
		if t.ids.has(id) && id.ino != 0 {
			// The same directory reached through a symlink: inotify would report its events under the first
			// name only, so watching it twice would only confuse which run a change belongs to.
			return ""
		}
		parent := t.dirs[filepath.Dir(dir)]
		node = &dirNode{budget: int16(budget), id: id, inRun: parent != nil && parent.inRun}
		// Watch before reading the directory: whatever is created after Add is evented, whatever before is
		// in the listing below.
		if !t.watchDir(dir, node) {
			return ""
		}
		t.dirs[dir] = node
		if t.keepsID(node) {
			t.ids.add(id)
		}
	}
	node.budget = int16(budget)
	key := ""
	if !known {
		key = dir
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return key
	}
	fresh := !node.listed
	if fresh {
		node.entries, node.listed = make(dirEntries, 0, len(entries)), true
	}
	node.inRun = node.inRun || slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == "state.env" })
	keep := t.names.keeper(node)
	var subdirs []string
	for _, e := range entries {
		name := e.Name()
		if scratchName(name) {
			continue
		}
		if name == "state.env" {
			// A run folder: watch what its readers use, no more, whatever the scan depth.
			node.budget = runDirBudget
		}
		if fresh {
			if st, ok := entryStat(dir, e, node.polled()); ok {
				node.entries.set(name, st, keep)
				if synth != nil {
					*synth = append(*synth, change{path: filepath.Join(dir, name), op: fsnotify.Create})
				}
			}
		}
		if e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			subdirs = append(subdirs, name)
		}
	}
	if state.IsArchivedName(filepath.Base(dir)) {
		node.budget = 0
	}
	share := ""
	for _, name := range subdirs {
		child := filepath.Join(dir, name)
		if cb, ok := t.subBudget(dir, int(node.budget), name); ok {
			ck := t.add(child, cb, synth)
			if ck != "" && fresh && !node.inRun {
				// The entry's name is the tail of the path the child is watched under, not a string of its own:
				// the run folders' names and repos/'s folders', 16,000 strings at 10,000 runs (issue 35). A run's
				// entries share theirs already (names).
				node.entries.reuse(name, ck[len(ck)-len(name):])
			}
			if share == "" {
				share = ck
			}
		}
	}
	if key != "" && strings.HasPrefix(share, key) {
		key = t.rekey(key, node, share[:len(key)])
	}
	return key
}

// rekey makes the watched directory dir known by same, a string equal to dir: the start of a subdirectory's
// path, so that a run folder, its artifacts/ and artifacts/checkpoints/ hold one path between them, not three
// (issue 35).
func (t *tree) rekey(dir string, node *dirNode, same string) string {
	delete(t.dirs, dir)
	t.dirs[same] = node
	if t.fsw != nil && !node.polled() {
		t.fsw.rekey(node.wd, same)
	}
	return same
}

// subBudget is childBudget plus directories someone asked for (a lock file's folder, a missing root).
func (t *tree) subBudget(dir string, budget int, name string) (int, bool) {
	cb, ok := childBudget(dir, budget, name)
	if ok && !resumable.ReadsArtifactFolder(name) && t.runArtifacts(dir) {
		// A run's evidence (m0/, logs/, ...: four in five of the folders at 10,000 runs, issue 35). Discover
		// never enters artifacts/, so no run is there, and the reader reads none of it: what it takes from
		// artifacts/ is in the folders it names and artifacts/'s own entries, watched. Only the listing of
		// artifacts (ResumableDetail.Artifacts), which no pane shows (events' lines carry it), may miss a
		// file made in there until the run is read again; status and brief read the disk themselves.
		cb, ok = 0, false
	}
	child := filepath.Join(dir, name)
	for w, wb := range t.wanted {
		if w == child {
			return max(cb, wb), true
		}
		if !ok && strings.HasPrefix(w, child+string(filepath.Separator)) {
			return 0, true
		}
	}
	return cb, ok
}

// runArtifacts reports whether dir is a watched run folder's artifacts/.
func (t *tree) runArtifacts(dir string) bool {
	if filepath.Base(dir) != "artifacts" {
		return false
	}
	run, ok := t.dirs[filepath.Dir(dir)]
	if !ok {
		return false
	}
	st, ok := run.entries.get("state.env")
	return ok && !st.dir
}

// watchDir sets up inotify for dir, or marks it polled when inotify cannot or should not be used there.
// It returns false when the directory cannot be watched at all (it vanished).
func (t *tree) watchDir(dir string, node *dirNode) bool {
	if t.forcePoll || t.fsw == nil {
		node.wd = wdPolled
		t.polled++
		return true
	}
	if name, ok := t.remote(dir); ok {
		t.remoteSeen[name]++
		node.wd = wdPolled
		t.polled++
		return true
	}
	cost := 0
	if t.fds.limit > 0 {
		if cost = t.fds.cost(dir); t.fds.used+cost > t.fds.limit {
			t.fds.over++
			node.wd = wdOverBudget
			t.polled++
			return true
		}
	}
	var err error
	if t.watchLimit > 0 && t.watches >= t.watchLimit {
		err = errWatchLimit
	} else {
		node.wd, err = t.fsw.add(dir)
	}
	switch {
	case err == nil:
		t.watches++
		t.fds.hold(node, cost)
		return true
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR), errors.Is(err, errSameFolder):
		return false
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EMFILE):
		if t.limitErr == nil {
			t.limitErr = err
		}
	default:
		t.otherErr = &fs.PathError{Op: "watch", Path: dir, Err: err}
	}
	node.wd = wdPolled
	t.polled++
	return true
}

// keepsID says whether node's identity goes into ids: not when its watch is the notifier's and the notifier
// tells a folder reached twice (at 10,000 runs the set was a megabyte, issue 35). Where descriptors are
// budgeted or watches capped, a folder can be polled beside its watched twin without add being asked.
func (t *tree) keepsID(node *dirNode) bool {
	return node.polled() || t.fsw == nil || !t.fsw.identifies() || t.fds.limit > 0 || t.watchLimit > 0
}

// remove forgets dir and everything below it. inotify drops watches of deleted directories itself; for a
// directory renamed away the watches would live on under the old names, so they are removed explicitly.
func (t *tree) remove(dir string) {
	prefix := dir + string(filepath.Separator)
	for p, node := range t.dirs {
		if p != dir && !strings.HasPrefix(p, prefix) {
			continue
		}
		if node.overBudget() {
			t.fds.over--
		}
		t.fds.release(node)
		if node.polled() {
			t.polled--
		} else if t.fsw != nil {
			_ = t.fsw.remove(p, node.wd) // already gone when the directory was deleted
			t.watches--
		}
		t.ids.del(node.id)
		delete(t.dirs, p)
	}
	if parent, ok := t.dirs[filepath.Dir(dir)]; ok {
		parent.entries.del(filepath.Base(dir))
	}
}

// refresh records path's current stat in its directory's snapshot after an inotify event, so that the
// reconcile scan reports only what inotify missed.
func (t *tree) refresh(path string) (now fileStat, exists, wasDir bool) {
	parent, ok := t.dirs[filepath.Dir(path)]
	name := filepath.Base(path)
	had := false
	if ok {
		var before fileStat
		before, had = parent.entries.get(name)
		wasDir = before.dir
	}
	fi, err := os.Lstat(path)
	if err != nil {
		if ok {
			parent.entries.del(name)
			t.fdsFollow(parent, had, false)
		}
		return fileStat{}, false, wasDir
	}
	if ok {
		t.fdsFollow(parent, had, true)
	}
	now = statOf(fi)
	if fi.Mode()&fs.ModeSymlink != 0 {
		if tfi, err := os.Stat(path); err == nil && tfi.IsDir() {
			now.dir, now.size, now.mtime = true, 0, 0 // compared like entryStat records it
		}
	}
	if ok {
		keep := t.names.keeper(parent)
		if !parent.inRun {
			keep = strings.Clone // name is cut from the event's path: kept alone, it would keep the path
		}
		parent.entries.set(name, now, keep)
	}
	return now, true, wasDir
}

// fdsFollow keeps the descriptor count of a kqueue-watched folder as fsnotify does: an entry that appears
// gets a watch, one that goes releases it.
func (t *tree) fdsFollow(parent *dirNode, had, exists bool) {
	if t.fds.limit == 0 || parent.polled() || had == exists {
		return
	}
	t.fds.hold(parent, map[bool]int{true: 1, false: -1}[exists])
}

// scan compares one directory's entries with its snapshot and reports the differences as changes. New
// subdirectories are watched (and their content reported); vanished ones are forgotten.
func (t *tree) scan(dir string, out *[]change) {
	node, ok := t.dirs[dir]
	if !ok {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			t.remove(dir)
			*out = append(*out, change{path: dir, op: fsnotify.Remove, wasDir: true})
		}
		return
	}
	seen := make(map[string]bool, len(entries))
	keep := t.names.keeper(node)
	for _, e := range entries {
		name := e.Name()
		if scratchName(name) {
			continue
		}
		now, ok := entryStat(dir, e, true)
		if !ok {
			continue
		}
		seen[name] = true
		before, had := node.entries.get(name)
		node.entries.set(name, now, keep)
		path := filepath.Join(dir, name)
		switch {
		case had && before.baseline && before.dir == now.dir:
			// First full look at an entry inotify has been covering: its baseline. Only a modification
			// after watching began can have been missed.
			if !now.dir && now.mtime >= t.since {
				*out = append(*out, change{path: path, op: fsnotify.Write})
			}
		case !had:
			*out = append(*out, change{path: path, op: fsnotify.Create})
			if now.dir {
				t.addChild(path, out)
			}
		case before.ino != now.ino || before.dir != now.dir:
			// Replaced (rename over it): report it as the remove and create inotify would have shown.
			*out = append(*out, change{path: path, op: fsnotify.Remove | fsnotify.Create, wasDir: before.dir})
			if before.dir {
				t.remove(path)
				node.entries.set(name, now, keep)
			}
			if now.dir {
				t.addChild(path, out)
			}
		case before != now:
			*out = append(*out, change{path: path, op: fsnotify.Write})
		}
	}
	var gone []dirEntry
	for _, e := range node.entries {
		if !seen[e.name] {
			gone = append(gone, e)
		}
	}
	for _, e := range gone {
		path := filepath.Join(dir, e.name)
		node.entries.del(e.name)
		if e.stat().dir {
			t.remove(path)
		}
		*out = append(*out, change{path: path, op: fsnotify.Remove, wasDir: e.stat().dir})
	}
}

// entryStat is what a snapshot keeps of a directory entry. With full false only the name and kind are
// recorded: in directories inotify covers, events report changes and the first scan takes the baseline,
// which spares a stat per file when thousands of directories are watched at startup.
func entryStat(dir string, e fs.DirEntry, full bool) (fileStat, bool) {
	isDir := e.IsDir()
	if e.Type()&fs.ModeSymlink != 0 {
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
			isDir = fi.IsDir()
		}
	}
	if !full {
		return fileStat{dir: isDir, baseline: true}, true
	}
	fi, err := e.Info()
	if err != nil {
		return fileStat{}, false
	}
	st := statOf(fi)
	if isDir {
		st.dir, st.size, st.mtime = true, 0, 0
	}
	return st, true
}

// addChild watches a directory that appeared inside a watched one, if it is within the watched depth.
func (t *tree) addChild(path string, synth *[]change) {
	parentDir := filepath.Dir(path)
	parent, ok := t.dirs[parentDir]
	if !ok {
		return
	}
	if cb, ok := t.subBudget(parentDir, int(parent.budget), filepath.Base(path)); ok {
		t.add(path, cb, synth)
	}
}

// polledDirs lists the directories inotify does not cover, sorted for a stable scan order.
func (t *tree) polledDirs() []string {
	var out []string
	for p, n := range t.dirs {
		if n.polled() {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// allDirs lists every watched directory, parents before children.
func (t *tree) allDirs() []string {
	out := make([]string, 0, len(t.dirs))
	for p := range t.dirs {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func idOf(fi fs.FileInfo) fileID {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{uint64(sys.Dev), sys.Ino}
	}
	return fileID{}
}
