package state

import (
	"path/filepath"
	"testing"
	"unsafe"

	"runwatch/model"
)

// A run read keeps its location's paths rather than a copy of its own of each: the watcher keeps the
// location too, and the paths are the longest strings a run has (issue 35). A jonggrang run whose
// feature_id is its folder's name keeps that name from its path.
func TestLoadKeepsTheLocationsPaths(t *testing.T) {
	t.Parallel()
	locs := fixtureLocations(t)
	same := func(a, b string) bool {
		return a == b && unsafe.StringData(a) == unsafe.StringData(b)
	}
	within := func(s, in string) bool {
		p, q := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(in)))
		return p >= q && p+uintptr(len(s)) <= q+uintptr(len(in))
	}
	kinds, named := map[model.Kind]int{}, 0
	for _, loc := range locs {
		r := Load(loc, model.Env{})
		if r.StatePath == loc.StatePath && !same(r.StatePath, loc.StatePath) {
			t.Errorf("%s: the run's state path is a copy of its location's", loc.StatePath)
		}
		if r.Dir == loc.Dir && !same(r.Dir, loc.Dir) {
			t.Errorf("%s: the run's folder is a copy of its location's", loc.StatePath)
		}
		if r.Kind == model.KindJonggrang && r.ID == filepath.Base(r.Dir) {
			named++
			if !within(r.ID, r.Dir) {
				t.Errorf("%s: the id %q is a copy of its folder's name", loc.StatePath, r.ID)
			}
		}
		kinds[r.Kind]++
	}
	if kinds[model.KindJonggrang] == 0 || kinds[model.KindResumable] == 0 || named == 0 {
		t.Fatalf("runs read by kind: %v, %d named as their folder: the fixtures do not cover both", kinds, named)
	}
}

// A location's folder (and a feature's project) is the head of its state path, not a string of its own:
// the watcher keeps every run's location (issue 35).
func TestLocationsFolderIsTheHeadOfItsStatePath(t *testing.T) {
	t.Parallel()
	locs := fixtureLocations(t)
	if len(locs) == 0 {
		t.Fatal("no runs found in the fixtures")
	}
	for _, loc := range locs {
		if unsafe.StringData(loc.Dir) != unsafe.StringData(loc.StatePath) {
			t.Errorf("%s: its folder %s is a string of its own", loc.StatePath, loc.Dir)
		}
		if loc.ProjectRoot != "" && unsafe.StringData(loc.ProjectRoot) != unsafe.StringData(loc.StatePath) {
			t.Errorf("%s: its project %s is a string of its own", loc.StatePath, loc.ProjectRoot)
		}
	}
}

// fixtureLocations are the runs of the jonggrang and resumable-c1 fixtures, found by their absolute paths.
func fixtureLocations(t *testing.T) []Location {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	locs, err := Discover([]string{filepath.Join(root, "jonggrang"), filepath.Join(root, "resumable-c1")}, 4)
	if err != nil {
		t.Fatal(err)
	}
	return locs
}
