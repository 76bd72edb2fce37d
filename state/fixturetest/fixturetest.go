// Package fixturetest reads the repository's testdata fixtures (both conventions) with the real readers, on
// one pinned clock, for the tests of the packages that show them (the dashboard's goldens, the runs table).
package fixturetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/resumable/resumabletest"
)

// Now is a little after the newest timestamp in the fixtures, so ages read like a live session.
var Now = time.Date(2026, 2, 16, 6, 0, 0, 0, time.UTC)

// NoProcs answers that no pid is running: fixture pids are made up and must not depend on this machine.
type NoProcs struct{}

func (NoProcs) Alive(int) bool                  { return false }
func (NoProcs) StartTime(int) (time.Time, bool) { return time.Time{}, false }

// Env is the environment the fixtures are judged in.
func Env() model.Env {
	return model.Env{Now: Now, Host: resumabletest.HostPlaceholder, StaleAfter: model.DefaultStaleAfter, Proc: NoProcs{}}
}

// Load reads testdata's jonggrang and opencode fixtures from a copy whose mtimes are pinned (the readers
// report them as "updated"; a checkout's are whatever git made them), then rewrites the copy's path to
// /fixtures so what is shown does not depend on where the repository lives.
func Load(t testing.TB, testdata string) []model.Run {
	t.Helper()
	src, err := filepath.Abs(testdata)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	var paths []string
	for _, sub := range []string{"jonggrang", "opencode"} {
		if err := os.CopyFS(filepath.Join(root, sub), os.DirFS(filepath.Join(src, sub))); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Join(root, sub))
	}
	pinned := Now.Add(-10 * time.Minute)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, pinned, pinned)
	})
	if err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover(paths, 8)
	if err != nil && len(locs) == 0 {
		t.Fatal(err)
	}
	runs := LoadAll(locs, Env())
	for i := range runs {
		relocate(&runs[i], root)
	}
	return runs
}

func relocate(r *model.Run, root string) {
	at := func(s string) string { return strings.ReplaceAll(s, root, "/fixtures") }
	r.Dir, r.StatePath, r.ProjectRoot = at(r.Dir), at(r.StatePath), at(r.ProjectRoot)
	r.Attention.Reason, r.Attention.Command = at(r.Attention.Reason), at(r.Attention.Command)
	for i := range r.Locks {
		r.Locks[i].Path = at(r.Locks[i].Path)
		for j := range r.Locks[i].Reasons {
			r.Locks[i].Reasons[j] = at(r.Locks[i].Reasons[j])
		}
	}
	for i := range r.Problems {
		r.Problems[i].Message = at(r.Problems[i].Message)
		r.Problems[i].Path = at(r.Problems[i].Path)
	}
	if r.Log != nil {
		// The timeline still reads the real file: only what is displayed is relocated.
		r.Log = &model.LogRef{Path: r.Log.Path, SizeBytes: r.Log.SizeBytes}
	}
}

// LoadAll reads every location with state.LoadEach, runs[i] from locs[i].
func LoadAll(locs []state.Location, env model.Env) []model.Run {
	runs := make([]model.Run, len(locs))
	state.LoadEach(locs, env, func(i int, r model.Run) { runs[i] = r })
	return runs
}
