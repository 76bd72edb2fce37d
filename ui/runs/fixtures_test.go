// The fixtures the table tests lay out: both conventions' runs read with the real readers, pinned to one
// clock, in a runs pane set up as the root sets it up on a snapshot (ui/root.go).

package runs

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
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/theme"
)

// fixtureNow is a little after the newest timestamp in the fixtures, so ages read like a live session.
var fixtureNow = time.Date(2026, 2, 16, 6, 0, 0, 0, time.UTC)

// noProcs answers that no pid is running: fixture pids are made up and must not depend on this machine.
type noProcs struct{}

func (noProcs) Alive(int) bool                  { return false }
func (noProcs) StartTime(int) (time.Time, bool) { return time.Time{}, false }

// fixturePane is the runs pane holding the fixtures, w×h, in the mono theme at fixtureNow.
func fixturePane(t testing.TB, w, h int) *Pane {
	t.Helper()
	a := &app.App{Opts: app.Options{Theme: "mono", Now: func() time.Time { return fixtureNow }},
		Keys: keys.DefaultKeyMap(false), Theme: theme.NewTheme("mono", true), Runs: map[string]model.Run{}}
	for _, r := range loadFixtures(t) {
		if r.Attention.Code == "" {
			r.Attention = model.Judge(&r)
		}
		a.Runs[r.Key()] = r
	}
	a.Loaded = true
	p := New(a)
	p.Resort()
	p.SetSize(w, h)
	return p
}

// loadFixtures reads the repository's fixtures from a copy whose mtimes are pinned (the readers report
// them as "updated"; a checkout's are whatever git made them), with the copy's path rewritten to /fixtures.
func loadFixtures(t testing.TB) []model.Run {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "..", "testdata"))
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
	pinned := fixtureNow.Add(-10 * time.Minute)
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
	env := model.Env{Now: fixtureNow, Host: resumabletest.HostPlaceholder, StaleAfter: model.DefaultStaleAfter, Proc: noProcs{}}
	runList := state.LoadAll(locs, env)
	for i := range runList {
		relocateRun(&runList[i], root)
	}
	return runList
}

func relocateRun(r *model.Run, root string) {
	relocate := func(s string) string { return strings.ReplaceAll(s, root, "/fixtures") }
	r.Dir, r.StatePath, r.ProjectRoot = relocate(r.Dir), relocate(r.StatePath), relocate(r.ProjectRoot)
	r.Attention.Reason, r.Attention.Command = relocate(r.Attention.Reason), relocate(r.Attention.Command)
	for i := range r.Locks {
		r.Locks[i].Path = relocate(r.Locks[i].Path)
		for j := range r.Locks[i].Reasons {
			r.Locks[i].Reasons[j] = relocate(r.Locks[i].Reasons[j])
		}
	}
	for i := range r.Problems {
		r.Problems[i].Message = relocate(r.Problems[i].Message)
		r.Problems[i].Path = relocate(r.Problems[i].Path)
	}
	if r.Log != nil {
		// The table reads no log: only what is displayed is relocated.
		r.Log = &model.LogRef{Path: r.Log.Path, SizeBytes: r.Log.SizeBytes}
	}
}
