// Package state reads run roots of both conventions from disk into the model, and finds them.
package state

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"runwatch/model"
	"runwatch/state/runlog"
)

// Location is where one run lives on disk. Identity everywhere (watch, ui, actions) is StatePath.
type Location struct {
	Kind model.Kind
	// Dir is the jonggrang feature dir (.jonggrang/.output/features/<fid>) or the dir holding a resumable
	// state file.
	Dir string
	// StatePath is MANIFEST.yaml, or state.env / <name>.state.env. It may not exist; the reader then reports
	// a problem on the run instead of dropping it.
	StatePath string
	// ProjectRoot is the dir holding .jonggrang/ (jonggrang only).
	ProjectRoot string
	// Archived marks resumable run folders renamed *.reset-<ts> by the convention's reset.
	Archived bool
}

// DefaultMaxDepth bounds the scan below each given path. It reaches $OPENCODE_CONFIG_DIR/reports/<run>/ from
// the config dir and a project's .jonggrang from a parent of several projects.
const DefaultMaxDepth = 4

// skipDirs are never descended into: they are large and never hold run roots.
// artifacts/ is a run's evidence folder, possibly huge.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "artifacts": true}

// DefaultPaths are the scan roots when none are given: the current dir, plus $OPENCODE_CONFIG_DIR/reports
// of the environment getenv reads.
func DefaultPaths(getenv func(string) string) []string {
	paths := []string{"."}
	if cfg := getenv("OPENCODE_CONFIG_DIR"); cfg != "" {
		reports := filepath.Join(cfg, "reports")
		if st, err := os.Stat(reports); err == nil && st.IsDir() {
			paths = append(paths, reports)
		}
	}
	return paths
}

// IsArchivedName reports whether a run folder name marks an archived run (…<run-id>.reset-<ts>).
func IsArchivedName(name string) bool { return strings.Contains(name, ".reset-") }

// IsStateFileName reports whether a file name holds resumable run state: state.env, or <name>.state.env that
// is not a checklist.
func IsStateFileName(name string) bool {
	if name == "state.env" {
		return true
	}
	base, ok := strings.CutSuffix(name, ".state.env")
	if !ok || base == "" {
		return false
	}
	lower := strings.ToLower(base)
	return lower != "checklist" && !strings.HasSuffix(lower, ".checklist") && !strings.HasSuffix(lower, "-checklist")
}

// UnreadableDirError names a folder the scan could not list: runs under it cannot be shown, and the person
// must be told so rather than see an empty list.
type UnreadableDirError struct {
	Dir string
	Err error
}

func (e *UnreadableDirError) Error() string {
	return fmt.Sprintf("cannot read folder %s: %v; runs under it are not shown", e.Dir, e.Err)
}

func (e *UnreadableDirError) Unwrap() error { return e.Err }

// SplitUnreadable separates the folders Discover could not list (to report; the scan went on) from the errors
// that make the request itself wrong, such as a path that does not exist.
func SplitUnreadable(err error) ([]*UnreadableDirError, error) {
	if err == nil {
		return nil, nil
	}
	list := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		list = joined.Unwrap()
	}
	var unreadable []*UnreadableDirError
	var rest []error
	for _, e := range list {
		var u *UnreadableDirError
		if errors.As(e, &u) {
			unreadable = append(unreadable, u)
		} else {
			rest = append(rest, e)
		}
	}
	return unreadable, errors.Join(rest...)
}

// Discover finds run roots of both conventions under paths, to maxDepth directory levels below each. Symlinked
// directories are followed once (a loop is cut by remembering device and inode). The error joins a path that
// does not exist and one *UnreadableDirError per folder that could not be listed; the locations found
// elsewhere are returned all the same.
func Discover(paths []string, maxDepth int) ([]Location, error) {
	return discover(paths, maxDepth, nil, osFS{})
}

// DiscoverEach is Discover handing each location to found as it is found, in the order of the walk, not
// sorted, and keeping none: a caller that reads each run as it is found (status over 100,000 runs) never
// holds the list. The error is Discover's, returned once the walk is done.
func DiscoverEach(paths []string, maxDepth int, found func(Location)) error {
	_, err := discoverTo(paths, maxDepth, nil, osFS{}, found)
	return err
}

// walkFS is the reads a walk makes to tell runs from folders of runs: osFS makes them, the completion cache
// (discovercache.go) answers from an earlier walk what a folder's stat shows is unchanged. The rules of what
// is a run stay in walk alone; only where its facts come from differs. Not in it: the root's own stat, a
// file given as a root, and stateTravelledWithout's look into a folder without state (its run.log's bytes,
// its checkpoints), which no folder's stat vouches for and which completion makes only for a folder of the
// name asked for.
type walkFS interface {
	// statDir is os.Stat of a folder about to be walked (links followed). The cache calls it from several
	// goroutines at once.
	statDir(dir string) (fs.FileInfo, error)
	readDir(dir string) ([]fs.DirEntry, error)
	// holdsStateEnv reports whether dir/name/state.env is there and no folder (Lstat): dir/name is a run
	// folder.
	holdsStateEnv(dir, name string) bool
}

type osFS struct{}

func (osFS) statDir(dir string) (fs.FileInfo, error)   { return os.Stat(dir) }
func (osFS) readDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }
func (osFS) holdsStateEnv(dir, name string) bool {
	st, err := os.Lstat(model.ChildPath(model.ChildPath(dir, name), "state.env"))
	return err == nil && !st.IsDir()
}

func discover(paths []string, maxDepth int, named func(string) bool, fsys walkFS) ([]Location, error) {
	return discoverTo(paths, maxDepth, named, fsys, nil)
}

// discoverTo is discover handing each location to found, when it is set, instead of returning them.
func discoverTo(paths []string, maxDepth int, named func(string) bool, fsys walkFS, found func(Location)) ([]Location, error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	d := newDiscoverer(maxDepth, named, fsys, found)
	var errs []error
	for _, p := range paths {
		abs, isDir, err := d.root(p)
		if err != nil {
			errs = append(errs, err)
		} else if isDir {
			d.walk(abs, 0)
		}
	}
	sort.Slice(d.locs, func(i, j int) bool { return d.locs[i].StatePath < d.locs[j].StatePath })
	for _, u := range d.unreadable {
		errs = append(errs, u)
	}
	return d.locs, errors.Join(errs...)
}

func newDiscoverer(maxDepth int, named func(string) bool, fsys walkFS, found func(Location)) *discoverer {
	return &discoverer{seenDirs: map[fileID]bool{}, seenLocs: map[locKey]struct{}{}, locSeed: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		maxDepth: maxDepth, named: named, fs: fsys, found: found}
}

// root resolves path p as given to discovery: a folder to walk (isDir), or a state file or manifest given
// directly, whose run it takes; err names p and why discovery cannot take it.
func (d *discoverer) root(p string) (abs string, isDir bool, err error) {
	if abs, err = filepath.Abs(p); err != nil {
		return "", false, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", false, &RootError{Path: p, Err: err}
	}
	if st.IsDir() {
		return abs, true, nil
	}
	if err := d.visitFile(filepath.Dir(abs), filepath.Base(abs)); err != nil {
		return "", false, &RootError{Path: p, Err: err}
	}
	return abs, false, nil
}

// RootError is a root that cannot be taken at all: missing, unreadable, or a file that is no run's.
type RootError struct {
	Path string
	Err  error
}

// Error names the path once: an os error repeats it ("stat /x: no such file or directory").
func (e *RootError) Error() string {
	err := e.Err
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return e.Path + ": " + err.Error()
}

func (e *RootError) Unwrap() error { return e.Err }

// CheckRoots is the error Discover would give for paths it cannot take at all (missing, a file that is no
// run's), found without walking any folder: a caller that streams the runs as they are found says so at
// once, not after reading every run of the other paths.
func CheckRoots(paths []string) error {
	d := newDiscoverer(DefaultMaxDepth, nil, osFS{}, func(Location) {})
	var errs []error
	for _, p := range paths {
		if _, _, err := d.root(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

type fileID struct{ dev, ino uint64 }

// locKey is a state file's path hashed twice, under two seeds made for this walk: what a walk remembers of
// each location it found, to take a run found again by another route (two paths given that overlap) once.
// Not the path: at 100,000 runs the paths kept 12 MB, and as many pointers for the collector to follow. Two
// different paths of 100,000 share a key with a chance of about 10^-29, far below that of the disk
// returning a wrong byte, and the seeds are unknown to whoever names the files.
type locKey [2]uint64

type discoverer struct {
	unreadable []*UnreadableDirError
	seenDirs   map[fileID]bool
	seenLocs   map[locKey]struct{}
	locSeed    [2]maphash.Seed
	locs       []Location
	maxDepth   int
	// named, when set, is DiscoverNamedCached's: folders of other names are looked at only as far as telling a run
	// folder from a folder that may hold runs.
	named func(folder string) bool
	fs    walkFS
	// found, when set, is DiscoverEach's: it takes each location instead of locs.
	found func(Location)
}

// skipsRunFolder reports whether the folder dir/name, about to be walked, is a run folder whose name named
// refuses, known by one stat without listing it: it holds state.env.
func (d *discoverer) skipsRunFolder(dir, name string) bool {
	return d.named != nil && !d.named(name) && d.fs.holdsStateEnv(dir, name)
}

func (d *discoverer) refuses(dir string) bool { return d.named != nil && !d.named(filepath.Base(dir)) }

func (d *discoverer) add(loc Location) {
	shareHead(&loc)
	k := locKey{maphash.String(d.locSeed[0], loc.StatePath), maphash.String(d.locSeed[1], loc.StatePath)}
	if _, seen := d.seenLocs[k]; seen {
		return
	}
	d.seenLocs[k] = struct{}{}
	if d.found != nil {
		d.found(loc)
		return
	}
	d.locs = append(d.locs, loc)
}

func (d *discoverer) walk(dir string, depth int) {
	st, err := d.fs.statDir(dir)
	if err != nil || !st.IsDir() {
		return
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		id := fileID{uint64(sys.Dev), sys.Ino}
		if d.seenDirs[id] {
			return
		}
		d.seenDirs[id] = true
	}
	entries, err := d.fs.readDir(dir)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		d.unreadable = append(d.unreadable, &UnreadableDirError{Dir: dir, Err: err})
		return
	}
	if isFeatureDir(dir) {
		if IsFeatureRun(entries) {
			d.add(Location{Kind: model.KindJonggrang, Dir: dir, StatePath: filepath.Join(dir, "MANIFEST.yaml"), ProjectRoot: projectOfFeature(dir)})
		}
		return
	}
	archived := IsArchivedName(filepath.Base(dir))
	isRun, hasStateFile := false, false
	for _, e := range entries {
		if !e.IsDir() && IsStateFileName(e.Name()) {
			hasStateFile = true
			d.add(Location{Kind: model.KindResumable, Dir: dir, StatePath: filepath.Join(dir, e.Name()), Archived: archived})
			// Only state.env makes the folder a run folder: <name>.state.env variants sit in a reports folder
			// beside other run folders, which must still be scanned.
			isRun = isRun || e.Name() == "state.env"
		}
	}
	if !isRun && !hasStateFile && depth > 0 && d.refuses(dir) && (hasEntry(entries, "run.log") || hasEntry(entries, "artifacts")) {
		// Perhaps a run whose state did not travel, perhaps not: either way not a folder of runs, and not of
		// the name asked for, so its log is not read to tell which.
		isRun = true
	} else if !isRun && !hasStateFile && stateTravelledWithout(dir, entries) {
		// A run folder that reached this machine without its state (state.env is gitignored): a run whose
		// state is missing, listed so, not "no run" (docs/FORMATS.md C.1).
		d.add(Location{Kind: model.KindResumable, Dir: dir, StatePath: filepath.Join(dir, "state.env"), Archived: archived})
		isRun = true
	}
	if archived || isRun {
		// A run folder's artifacts can be huge and never hold other runs; archived runs are listed, not entered.
		return
	}
	for _, e := range entries {
		name := e.Name()
		if name == ".jonggrang" {
			d.jonggrangProject(dir)
			continue
		}
		if skipDirs[name] || depth >= d.maxDepth {
			continue
		}
		if e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			if !d.skipsRunFolder(dir, name) {
				d.walk(model.ChildPath(dir, name), depth+1)
			}
		}
	}
}

// jonggrangProject lists the feature folders of a project that are runs (IsFeatureRun): a folder whose
// manifest is missing but whose run files are there is a run with a problem, not nothing.
func (d *discoverer) jonggrangProject(projectRoot string) {
	features := filepath.Join(projectRoot, ".jonggrang", ".output", "features")
	entries, err := d.fs.readDir(features)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			d.unreadable = append(d.unreadable, &UnreadableDirError{Dir: features, Err: err})
		}
		return
	}
	for _, e := range entries {
		if !e.IsDir() || d.named != nil && !d.named(e.Name()) {
			continue
		}
		dir := filepath.Join(features, e.Name())
		inner, err := d.fs.readDir(dir)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			d.unreadable = append(d.unreadable, &UnreadableDirError{Dir: dir, Err: err})
			continue
		}
		if IsFeatureRun(inner) {
			d.add(Location{Kind: model.KindJonggrang, Dir: dir, StatePath: filepath.Join(dir, "MANIFEST.yaml"), ProjectRoot: projectRoot})
		}
	}
}

// IsFeatureRun reports whether a jonggrang feature folder, given its entries, is a run (docs/FORMATS.md C.2). It
// is when it holds MANIFEST.yaml; when it holds run files without one (progress.txt, jonggrang-tasks.json,
// NN-*.json phase outputs: the manifest was lost); and when it is empty, which is what createManifest leaves
// for a moment between its mkdir and its write (the reader and the watcher give it the re-read grace). It is
// not when all it holds is a plan (plan.md, with its notes, waiting for approval in the web UI) or a
// MANIFEST.yml, which no real reader opens: every real reader skips both, and so does runwatch, until a
// MANIFEST.yaml appears.
func IsFeatureRun(entries []fs.DirEntry) bool {
	if len(entries) == 0 {
		return true
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == "MANIFEST.yaml", name == "progress.txt", name == "jonggrang-tasks.json":
			return true
		case !e.IsDir() && isPhaseOutputName(name):
			return true
		}
	}
	return false
}

// isPhaseOutputName matches NN-<role>-<suffix>.json, the phase output files agents write.
func isPhaseOutputName(name string) bool {
	return len(name) > 8 && name[0] >= '0' && name[0] <= '9' && name[1] >= '0' && name[1] <= '9' && name[2] == '-' &&
		strings.HasSuffix(name, ".json")
}

// isFeatureDir reports whether dir is <project>/.jonggrang/.output/features/<fid>.
func isFeatureDir(dir string) bool {
	features := filepath.Dir(dir)
	output := filepath.Dir(features)
	return filepath.Base(features) == "features" && filepath.Base(output) == ".output" &&
		filepath.Base(filepath.Dir(output)) == ".jonggrang"
}

// shareHead makes a location's folder (and project) the head of its state path rather than strings of their
// own: the watcher keeps every run's location for as long as it runs (issue 35).
func shareHead(loc *Location) {
	sp, dir := loc.StatePath, loc.Dir
	if len(sp) <= len(dir) || sp[:len(dir)] != dir || !os.IsPathSeparator(sp[len(dir)]) {
		return
	}
	loc.Dir = sp[:len(dir)]
	if root := loc.ProjectRoot; root != "" && strings.HasPrefix(loc.Dir, root) {
		loc.ProjectRoot = loc.Dir[:len(root)]
	}
}

func projectOfFeature(featureDir string) string {
	return filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(featureDir))))
}

// visitFile takes the run of a file given as a path: a state file or manifest is its run; another file
// (a run.log) means the run whose folder holds it. A file in no run's folder is an error: it used to mean
// "scan its folder", and a file in a home folder listed every run below it.
func (d *discoverer) visitFile(dir, name string) error {
	switch {
	case name == "MANIFEST.yaml" && isFeatureDir(dir):
		d.add(Location{Kind: model.KindJonggrang, Dir: dir, StatePath: filepath.Join(dir, name), ProjectRoot: projectOfFeature(dir)})
		return nil
	case IsStateFileName(name):
		d.add(Location{Kind: model.KindResumable, Dir: dir, StatePath: filepath.Join(dir, name), Archived: IsArchivedName(filepath.Base(dir))})
		return nil
	}
	entries, _ := os.ReadDir(dir)
	found := false
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && (IsStateFileName(n) || (n == "MANIFEST.yaml" && isFeatureDir(dir))) {
			_ = d.visitFile(dir, n)
			found = true
		}
	}
	if !found {
		return errors.New("a file, not a folder of runs nor a file of a run's folder: give the folder to scan, or a run's state.env or MANIFEST.yaml")
	}
	return nil
}

func hasEntry(entries []fs.DirEntry, name string) bool {
	for _, e := range entries {
		if e.Name() == name {
			return true
		}
	}
	return false
}

// stateTravelledWithout reports whether dir is a resumable run folder without its state.env: it holds a
// run.log of the convention, or artifacts/checkpoints/*.done.json.
func stateTravelledWithout(dir string, entries []fs.DirEntry) bool {
	hasLog, hasArtifacts := false, false
	for _, e := range entries {
		switch e.Name() {
		case "run.log":
			hasLog = e.Type().IsRegular()
		case "artifacts":
			hasArtifacts = e.IsDir()
		}
	}
	if hasLog && runlog.LooksLikeRunLog(filepath.Join(dir, "run.log")) {
		return true
	}
	if !hasArtifacts {
		return false
	}
	cps, err := os.ReadDir(filepath.Join(dir, "artifacts", "checkpoints"))
	if err != nil {
		return false
	}
	for _, c := range cps {
		if strings.HasSuffix(c.Name(), ".done.json") && c.Type().IsRegular() {
			return true
		}
	}
	return false
}
