//go:build linux

package state

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cacheTree is a small tree of what completion must tell apart: run folders, a folder of runs below the
// root, a folder that holds no run (yet), a run whose state did not travel, a <name>.state.env variant, an
// archived run and a jonggrang project.
func cacheTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, rel := range []string{"reports/run-a-1/state.env", "reports/run-b-1/state.env", "reports/other-1/state.env",
		"reports/older/run-a-0/state.env", "reports/run-a-2.reset-20260101T000000Z/state.env", "reports/solo.state.env"} {
		write(t, filepath.Join(root, rel), "STATUS=running\n")
	}
	write(t, filepath.Join(root, "reports/run-lost/run.log"), "[2026-02-16T02:00:00Z] run started\n")
	if err := os.MkdirAll(filepath.Join(root, "reports/pending"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "proj/.jonggrang/.output/features/feat-a/MANIFEST.yaml"), "feature_id: feat-a\n")
	write(t, filepath.Join(root, "proj/src/main.go"), "package main\n")
	return root
}

// agedAt is the mtime every folder is given: old enough that the cache trusts a listing of it. A mutation
// followed by ageFolders leaves a changed folder's mtime as it was, so only its ctime (and size) tell.
var agedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func ageFolders(t *testing.T, root string, at time.Time) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Chtimes(p, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func statePaths(locs []Location) string {
	var b strings.Builder
	for _, l := range locs {
		fmt.Fprintf(&b, "%q %v %q %q\n", l.StatePath, l.Kind, l.Dir, l.ProjectRoot)
	}
	return b.String()
}

var cachePrefixes = []string{"run-a", "run-b-1", "feat", "o", "solo", "nothing", ""}

// sameAsFresh checks that the cached walk answers what a fresh walk of the same names answers, for several prefixes, twice
// (the second time from the cache the first wrote).
func sameAsFresh(t *testing.T, step string, roots []string, c WalkCache, inner walkFS) {
	t.Helper()
	files := cacheFiles(t, c.Dir)
	var start []byte
	if len(files) == 1 {
		start, _ = os.ReadFile(files[0])
	}
	for _, prefix := range cachePrefixes {
		if start != nil {
			os.WriteFile(files[0], start, 0o600)
		}
		named := func(name string) bool { return strings.HasPrefix(name, prefix) }
		want, _ := discover(roots, 0, named, osFS{})
		for i := range 2 {
			got, _ := discoverCached(roots, 0, named, c, inner)
			if g, w := statePaths(got), statePaths(want); g != w {
				t.Errorf("%s, prefix %q, cached walk %d:\n%s\nfresh walk:\n%s", step, prefix, i+1, g, w)
			}
		}
	}
}

func cacheDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "runwatch")
	return dir
}

func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "walk-*"))
	return m
}

func TestWalkCacheAnswersAsAFreshWalkAfterEachChange(t *testing.T) {
	root := cacheTree(t)
	roots := []string{root}
	c := WalkCache{Dir: cacheDir(t)}
	ageFolders(t, root, agedAt)
	sameAsFresh(t, "the tree as made", roots, c, osFS{})
	if len(cacheFiles(t, c.Dir)) != 1 {
		t.Fatalf("no cache file written in %s", c.Dir)
	}
	reports := filepath.Join(root, "reports")
	steps := []struct {
		name   string
		mutate func()
	}{
		{"a new run folder", func() { write(t, filepath.Join(reports, "run-a-3/state.env"), "STATUS=running\n") }},
		{"state.env in a folder that held no run", func() { write(t, filepath.Join(reports, "pending/state.env"), "STATUS=running\n") }},
		{"state.env in a folder of runs", func() { write(t, filepath.Join(reports, "older/state.env"), "STATUS=running\n") }},
		{"a run folder removed", func() { os.RemoveAll(filepath.Join(reports, "run-b-1")) }},
		{"a run folder renamed", func() { os.Rename(filepath.Join(reports, "run-a-1"), filepath.Join(reports, "other-2")) }},
		{"a new nested folder of runs", func() {
			write(t, filepath.Join(reports, "batch/run-a-7/state.env"), "STATUS=running\n")
			write(t, filepath.Join(reports, "batch/deeper/run-a-8/state.env"), "STATUS=running\n")
		}},
		{"a feature added to a project", func() {
			write(t, filepath.Join(root, "proj/.jonggrang/.output/features/feat-b/MANIFEST.yaml"), "feature_id: feat-b\n")
		}},
		{"a feature's manifest removed (its plan alone is no run)", func() {
			write(t, filepath.Join(root, "proj/.jonggrang/.output/features/feat-a/plan.md"), "plan\n")
			os.Remove(filepath.Join(root, "proj/.jonggrang/.output/features/feat-a/MANIFEST.yaml"))
		}},
		{"a <name>.state.env variant beside run folders", func() { write(t, filepath.Join(reports, "run-a-9.state.env"), "STATUS=running\n") }},
		{"a variant in a run folder of that name", func() { write(t, filepath.Join(reports, "run-a-3/run-a-3b.state.env"), "STATUS=running\n") }},
		{"a symlink loop", func() {
			if err := os.Symlink(reports, filepath.Join(reports, "batch/loop")); err != nil {
				t.Fatal(err)
			}
		}},
		{"the run whose state did not travel gets it", func() { write(t, filepath.Join(reports, "run-lost/state.env"), "STATUS=running\n") }},
	}
	file := cacheFiles(t, c.Dir)[0]
	for _, s := range steps {
		// The cache each prefix's walk leaves (what it listed, which run folders of other names it found)
		// meets the change, and every prefix's walk after it.
		before := map[string][]byte{}
		for _, p := range cachePrefixes {
			discoverCached(roots, 0, func(name string) bool { return strings.HasPrefix(name, p) }, c, osFS{})
			before[p], _ = os.ReadFile(file)
		}
		s.mutate()
		// The mtimes go back to what the cache saw: a listing must not be trusted on its mtime alone.
		ageFolders(t, root, agedAt)
		for _, p := range cachePrefixes {
			if err := os.WriteFile(file, before[p], 0o600); err != nil {
				t.Fatal(err)
			}
			sameAsFresh(t, fmt.Sprintf("%s, the cache of a walk for %q", s.name, p), roots, c, osFS{})
		}
	}
}

// A change made in the same tick as the listing leaves the folder's timestamps as they were: a listing whose
// folder's mtime is not older than the listing by racyMargin is taken again, as git does for its index.
func TestWalkCacheDoesNotTrustAListingTakenInTheTickOfItsFolder(t *testing.T) {
	root := cacheTree(t)
	roots := []string{root}
	c := WalkCache{Dir: cacheDir(t)}
	reports := filepath.Join(root, "reports")

	// Real files: the folders' mtimes are set to a second ago, within the margin, before and after a change.
	recent := time.Now().Add(-time.Second).Truncate(time.Second)
	ageFolders(t, root, recent)
	sameAsFresh(t, "a tree of a second ago", roots, c, osFS{})
	write(t, filepath.Join(reports, "run-a-4/state.env"), "STATUS=running\n")
	ageFolders(t, root, recent)
	sameAsFresh(t, "a run folder made in the same second", roots, c, osFS{})

	// A file system whose stat shows no change at all (one tick that never ends): only the racy rule is left.
	frozen := frozenFS{at: time.Now()}
	sameAsFresh(t, "frozen stats", roots, c, frozen)
	write(t, filepath.Join(reports, "run-a-5/state.env"), "STATUS=running\n")
	os.RemoveAll(filepath.Join(reports, "run-b-1"))
	sameAsFresh(t, "a run made and one removed under frozen stats", roots, c, frozen)

	// The same frozen stats an hour old are trusted, and then the cache cannot see a change: this is what the
	// racy rule guards against (and proves that frozenFS does hide the change from the stat).
	old := frozenFS{at: time.Now().Add(-time.Hour)}
	named := func(name string) bool { return strings.HasPrefix(name, "run-a") }
	discoverCached(roots, 0, named, c, old)
	write(t, filepath.Join(reports, "run-a-6/state.env"), "STATUS=running\n")
	got, _ := discoverCached(roots, 0, named, c, old)
	if strings.Contains(statePaths(got), "run-a-6") {
		t.Fatalf("frozenFS does not hide a change from the cache:\n%s", statePaths(got))
	}
}

// frozenFS is osFS whose folders' stats keep one mtime, ctime and size, as a change within a tick leaves them.
type frozenFS struct{ at time.Time }

func (f frozenFS) statDir(dir string) (fs.FileInfo, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return fi, err
	}
	st := *fi.Sys().(*syscall.Stat_t)
	st.Mtim = syscall.NsecToTimespec(f.at.UnixNano())
	st.Ctim = st.Mtim
	st.Size = 4096
	return frozenInfo{fi, &st}, nil
}
func (frozenFS) readDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }
func (frozenFS) holdsStateEnv(dir, name string) bool       { return osFS{}.holdsStateEnv(dir, name) }

type frozenInfo struct {
	fs.FileInfo
	st *syscall.Stat_t
}

func (f frozenInfo) Sys() any { return f.st }

// countingFS counts the reads that reach the file system.
type countingFS struct {
	osFS
	mu           sync.Mutex
	stats, lists []string
	stateEnvs    []string
}

func (c *countingFS) statDir(dir string) (fs.FileInfo, error) {
	c.mu.Lock()
	c.stats = append(c.stats, dir)
	c.mu.Unlock()
	return c.osFS.statDir(dir)
}
func (c *countingFS) readDir(dir string) ([]fs.DirEntry, error) {
	c.lists = append(c.lists, dir)
	return c.osFS.readDir(dir)
}
func (c *countingFS) holdsStateEnv(dir, name string) bool {
	c.stateEnvs = append(c.stateEnvs, filepath.Join(dir, name))
	return c.osFS.holdsStateEnv(dir, name)
}

// The second keystroke in an unchanged tree lists no folder and looks for no state.env: it stats the folders
// the first listed, and no run folder of a name not typed.
func TestWalkCacheSecondKeystrokeStatsTheListedFoldersOnly(t *testing.T) {
	root := cacheTree(t)
	for i := range 50 {
		write(t, filepath.Join(root, fmt.Sprintf("reports/many-%02d/state.env", i)), "STATUS=running\n")
	}
	ageFolders(t, root, agedAt)
	roots := []string{root}
	c := WalkCache{Dir: cacheDir(t)}
	named := func(name string) bool { return strings.HasPrefix(name, "run-a") }
	first := &countingFS{}
	want, _ := discoverCached(roots, 0, named, c, first)
	if len(first.stateEnvs) < 50 || len(first.lists) == 0 {
		t.Fatalf("the first walk made %d state.env looks and %d listings: the test does not test", len(first.stateEnvs), len(first.lists))
	}
	second := &countingFS{}
	got, _ := discoverCached(roots, 0, named, c, second)
	if statePaths(got) != statePaths(want) {
		t.Errorf("second keystroke:\n%s\nfirst:\n%s", statePaths(got), statePaths(want))
	}
	if len(second.lists) != 0 || len(second.stateEnvs) != 0 {
		t.Errorf("the second keystroke listed %q and looked for state.env in %q", second.lists, second.stateEnvs)
	}
	for _, p := range second.stats {
		if name := filepath.Base(p); strings.HasPrefix(name, "many-") || name == "run-b-1" || name == "other-1" {
			t.Errorf("the second keystroke stat'ed %s, a run folder of a name not typed", p)
		}
	}
	if len(second.stats) > len(first.lists) {
		t.Errorf("the second keystroke made %d stats, more than the %d folders the first listed", len(second.stats), len(first.lists))
	}
}

// Run folder names are anyone's bytes: they go through the cache file and come back exactly.
func TestWalkCacheKeepsHostileNamesExactly(t *testing.T) {
	root := t.TempDir()
	hostile := []string{"run-a\nnewline", "run-a\ttab", "run-a\x1b[31mred", "run-a'quote\"", "run-a$(touch pwned)",
		"run-a\xff\xfenot-utf8", "run-a\\back", "run-a ", "run-a-" + strings.Repeat("long", 60)}
	for _, n := range hostile {
		write(t, filepath.Join(root, "reports", n, "state.env"), "STATUS=running\n")
		write(t, filepath.Join(root, "reports", "x"+n, "state.env"), "STATUS=running\n")
	}
	ageFolders(t, root, agedAt)
	c := WalkCache{Dir: cacheDir(t)}
	sameAsFresh(t, "hostile names", []string{root}, c, osFS{})
	got, _ := discoverCached([]string{root}, 0, func(n string) bool { return strings.HasPrefix(n, "run-a") }, c, &countingFS{})
	seen := map[string]bool{}
	for _, l := range got {
		seen[filepath.Base(l.Dir)] = true
	}
	for _, n := range hostile {
		if !seen[n] {
			t.Errorf("%q did not come back from the cache", n)
		}
	}
	// and the file itself, decoded, holds them byte for byte
	files := cacheFiles(t, c.Dir)
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	folders, err := decodeWalkCache(data, walkCacheKey([]string{root}, DefaultMaxDepth))
	if err != nil {
		t.Fatal(err)
	}
	rec := folders[filepath.Join(root, "reports")]
	if rec == nil {
		t.Fatal("the reports folder is not in the cache")
	}
	for _, n := range hostile {
		if e := rec.find("x" + n); e == nil || !e.runSeen {
			t.Errorf("%q: not kept as a run folder of another name (%v)", "x"+n, e)
		}
	}
}

func TestWalkCacheRefusesAFolderOrFileNotOursAlone(t *testing.T) {
	root := cacheTree(t)
	ageFolders(t, root, agedAt)
	roots := []string{root}

	open := filepath.Join(t.TempDir(), "runwatch")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	sameAsFresh(t, "a cache folder of mode 0777", roots, WalkCache{Dir: open}, osFS{})
	if f := cacheFiles(t, open); len(f) != 0 {
		t.Errorf("a cache was written in a folder of mode 0777: %q", f)
	}

	// A link where the cache file should be: neither read nor written through.
	dir := cacheDir(t)
	c := WalkCache{Dir: dir}
	sameAsFresh(t, "a new cache", roots, c, osFS{})
	file := cacheFiles(t, dir)[0]
	elsewhere := filepath.Join(t.TempDir(), "target")
	good, _ := os.ReadFile(file)
	os.WriteFile(elsewhere, good, 0o600)
	os.Remove(file)
	if err := os.Symlink(elsewhere, file); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "reports/run-a-5/state.env"), "STATUS=running\n")
	ageFolders(t, root, agedAt)
	sameAsFresh(t, "a symlinked cache file", roots, c, osFS{})
	if fi, err := os.Lstat(file); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlinked cache file was replaced: %v %v", fi, err)
	}
	if after, _ := os.ReadFile(elsewhere); !bytes.Equal(after, good) {
		t.Error("the symlink's target was written")
	}

	// A cache folder that is a link.
	linked := filepath.Join(t.TempDir(), "runwatch")
	os.Symlink(dir, linked)
	sameAsFresh(t, "a symlinked cache folder", roots, WalkCache{Dir: linked}, osFS{})

	if os.Geteuid() == 0 {
		other := cacheDir(t)
		os.Mkdir(other, 0o700)
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		sameAsFresh(t, "a cache folder owned by nobody", roots, WalkCache{Dir: other}, osFS{})
		if f := cacheFiles(t, other); len(f) != 0 {
			t.Errorf("a cache was written in a folder owned by another user: %q", f)
		}
	}
}

// A file that is not a whole cache of this version (cut short, a byte changed, another version, too large)
// is ignored: the walk answers as a fresh one, and the file is replaced by a good one.
func TestWalkCacheIgnoresAndReplacesADamagedFile(t *testing.T) {
	root := cacheTree(t)
	ageFolders(t, root, agedAt)
	roots := []string{root}
	c := WalkCache{Dir: cacheDir(t)}
	sameAsFresh(t, "a new cache", roots, c, osFS{})
	file := cacheFiles(t, c.Dir)[0]
	key := walkCacheKey(roots, DefaultMaxDepth)
	damage := map[string]func(good []byte) []byte{
		"cut in half":     func(good []byte) []byte { return good[:len(good)/2] },
		"cut by one byte": func(good []byte) []byte { return good[:len(good)-1] },
		"a name changed": func(good []byte) []byte {
			i := bytes.Index(good, []byte("run-b-1"))
			if i < 0 {
				t.Fatal("run-b-1 is not in the cache file")
			}
			flipped := bytes.Clone(good)
			flipped[i+6] = '2' // run-b-2: a run that is not there (and run-b-1 lost), were the file believed
			return flipped
		},
		"another version": func(good []byte) []byte {
			return append([]byte("runwatch walk cache 999\n"), good[len(walkCacheMagic):]...)
		},
		"empty":             func([]byte) []byte { return []byte{} },
		"garbage":           func([]byte) []byte { return bytes.Repeat([]byte{0xff}, 4096) },
		"larger than a cap": func([]byte) []byte { return nil },
	}
	for name, damaged := range damage {
		for _, changed := range []bool{false, true} {
			named := func(n string) bool { return strings.HasPrefix(n, "run-b") }
			discoverCached(roots, 0, named, c, osFS{})
			good, _ := os.ReadFile(file)
			if _, err := decodeWalkCache(good, key); err != nil {
				t.Fatalf("the cache written does not decode: %v", err)
			}
			if data := damaged(good); data == nil {
				f, _ := os.Create(file)
				f.Truncate(maxWalkCacheBytes + 1)
				f.Close()
			} else if err := os.WriteFile(file, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if changed {
				// the tree changed meanwhile, so a cache wrongly believed would show it
				os.RemoveAll(filepath.Join(root, "reports/run-b-1"))
				write(t, filepath.Join(root, "reports/run-b-1/state.env"), "STATUS=running\n")
				ageFolders(t, root, agedAt)
			}
			want, _ := discover(roots, 0, named, osFS{})
			got, _ := discoverCached(roots, 0, named, c, osFS{})
			if statePaths(got) != statePaths(want) {
				t.Errorf("a cache file %s (tree changed: %v):\n%s\nfresh walk:\n%s", name, changed, statePaths(got), statePaths(want))
			}
			now, _ := os.ReadFile(file)
			if _, err := decodeWalkCache(now, key); err != nil {
				t.Errorf("a cache file %s was not replaced by a good one: %v", name, err)
			}
		}
	}
}

// A read-only cache (read-only mode) is read, and neither written nor made.
func TestWalkCacheReadOnlyWritesNothing(t *testing.T) {
	root := cacheTree(t)
	ageFolders(t, root, agedAt)
	dir := cacheDir(t)
	sameAsFresh(t, "read-only, no cache folder", []string{root}, WalkCache{Dir: dir, ReadOnly: true}, osFS{})
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("read-only completion made %s", dir)
	}
}

// Whatever bytes the cache file holds, decoding returns a cache or an error, never a panic or a huge
// allocation.
func FuzzDecodeWalkCache(f *testing.F) {
	root := "/r"
	rec := &folderRec{path: "/r/reports", key: statKey{dev: 1, ino: 2, mtime: 3, ctime: 4, size: 4096, ok: true}, taken: 9}
	rec.entries = []cachedEntry{{name: "a\nb", typ: fs.ModeDir, runSeen: true}, {name: "c", typ: 0}}
	good := encodeWalkCache(map[string]*folderRec{rec.path: rec, "/r": {path: "/r", key: statKey{ok: true}}}, root)
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add([]byte(walkCacheMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		folders, err := decodeWalkCache(data, root)
		if err == nil && len(folders) > len(data) {
			t.Fatalf("%d folders from %d bytes", len(folders), len(data))
		}
	})
}

// A cache file no keystroke wrote for a month (roots given once, a folder TAB was pressed in once) goes when
// another is made; others, and files not the cache's, stay.
func TestWalkCacheRemovesFilesUnusedForAMonth(t *testing.T) {
	dir := cacheDir(t)
	os.MkdirAll(dir, 0o700)
	long := time.Now().Add(-40 * 24 * time.Hour)
	for name, at := range map[string]time.Time{"walk-old": long, ".walk-old.1.2.tmp": long, "walk-recent": time.Now(), "not-ours": long} {
		write(t, filepath.Join(dir, name), "x")
		os.Chtimes(filepath.Join(dir, name), at, at)
	}
	root := cacheTree(t)
	discoverCached([]string{root}, 0, nil, WalkCache{Dir: dir}, osFS{})
	for name, want := range map[string]bool{"walk-old": false, ".walk-old.1.2.tmp": false, "walk-recent": true, "not-ours": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: kept %v, want %v", name, err == nil, want)
		}
	}
	if len(cacheFiles(t, dir)) != 2 {
		t.Errorf("cache files: %q", cacheFiles(t, dir))
	}
}
