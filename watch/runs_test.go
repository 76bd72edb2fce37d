package watch

import (
	"maps"
	"slices"
	"testing"
	"unsafe"

	"runwatch/model"
	"runwatch/state"
)

// A run whose state file is its folder's state.env or MANIFEST.yaml is found by that path, not through
// byDir (issue 35); a change in its folder still reaches it, and none once it is dropped.
func TestRunInItsOwnFolderIsFoundWithoutByDir(t *testing.T) {
	t.Parallel()
	tk := newTracker(nil, 4, model.Env{})
	own := state.Location{Kind: model.KindResumable, Dir: "/r/a", StatePath: "/r/a/state.env"}
	feature := state.Location{Kind: model.KindJonggrang, Dir: "/p/f", StatePath: "/p/f/MANIFEST.yaml"}
	named := state.Location{Kind: model.KindResumable, Dir: "/r", StatePath: "/r/x.state.env"}
	for _, loc := range []state.Location{own, feature, named} {
		tk.set(loc, &model.Run{Kind: loc.Kind, StatePath: loc.StatePath})
	}
	if one, _ := tk.byDir.Of("/r"); tk.byDir.Len() != 1 || one != named.StatePath {
		t.Fatalf("byDir %v, want only the named state file's run", tk.byDir)
	}
	affected := func(path string) []string {
		into := map[string]bool{}
		tk.affected(path, false, into)
		return slices.Sorted(maps.Keys(into))
	}
	if got := affected("/r/a/run.log"); !slices.Equal(got, []string{own.StatePath, named.StatePath}) {
		t.Errorf("a change in /r/a affects %v", got)
	}
	if got := affected("/p/f/MANIFEST.yaml"); !slices.Equal(got, []string{feature.StatePath}) {
		t.Errorf("a change of the manifest affects %v", got)
	}
	tk.drop(own.StatePath)
	if got := affected("/r/a/run.log"); !slices.Equal(got, []string{named.StatePath}) {
		t.Errorf("with its run dropped, a change in /r/a affects %v", got)
	}
}

// A tracked run keeps no copy of where it was found when the run's own fields say it: 80 bytes, not 144
// (issue 35); where they differ, the location is kept and told.
func TestTrackedRunKeepsItsLocationOnlyWhenTheRunDiffers(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(trackedRun{}); n != 80 {
		t.Errorf("a tracked run is %d bytes, want 80", n)
	}
	tk := newTracker(nil, 4, model.Env{})
	loc := state.Location{Kind: model.KindJonggrang, Dir: "/p/.jonggrang/.output/features/f", StatePath: "/p/.jonggrang/.output/features/f/MANIFEST.yaml", ProjectRoot: "/p"}
	same := tk.set(loc, &model.Run{Kind: loc.Kind, Dir: loc.Dir, StatePath: loc.StatePath, ProjectRoot: loc.ProjectRoot})
	if same.loc != nil || same.location() != loc {
		t.Errorf("a run that says where it was found: loc %v, location %+v", same.loc, same.location())
	}
	other := tk.set(loc, &model.Run{Kind: loc.Kind, Dir: "/elsewhere", StatePath: loc.StatePath})
	if other.loc == nil || other.location() != loc {
		t.Errorf("a run that says otherwise: location %+v, want %+v", other.location(), loc)
	}
}

// A lock file inside its run's folder is not in byLock (issue 35): a change to it, or to a folder holding
// it, still reaches its run, as one to a lock outside does.
func TestLockInsideItsRunsFolderIsFoundWithoutByLock(t *testing.T) {
	t.Parallel()
	tk := newTracker(nil, 4, model.Env{})
	inside := state.Location{Kind: model.KindResumable, Dir: "/r/a", StatePath: "/r/a/state.env"}
	outside := state.Location{Kind: model.KindResumable, Dir: "/r/b", StatePath: "/r/b/state.env"}
	for loc, lock := range map[state.Location]string{inside: "/r/a/lock/LOCK", outside: "/locks/b.lock"} {
		tk.set(loc, &model.Run{Kind: loc.Kind, Dir: loc.Dir, StatePath: loc.StatePath, Resumable: &model.ResumableDetail{LockFile: lock}})
	}
	if one, _ := tk.byLock.Of("/locks/b.lock"); tk.byLock.Len() != 1 || one != outside.StatePath {
		t.Fatalf("byLock %v, want only the lock outside its run's folder", tk.byLock)
	}
	affected := func(path string, isDir bool) []string {
		into := map[string]bool{}
		tk.affected(path, isDir, into)
		return slices.Sorted(maps.Keys(into))
	}
	for _, c := range []struct {
		path  string
		isDir bool
		want  []string
	}{
		{"/r/a/lock/LOCK", false, []string{inside.StatePath}},
		{"/r/a/lock", true, []string{inside.StatePath}},
		{"/r", true, []string{inside.StatePath}},
		{"/locks/b.lock", false, []string{outside.StatePath}},
		{"/locks", true, []string{outside.StatePath}},
	} {
		if got := affected(c.path, c.isDir); !slices.Equal(got, c.want) {
			t.Errorf("a change of %s affects %v, want %v", c.path, got, c.want)
		}
	}
}
