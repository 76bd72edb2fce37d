// The fixtures the table tests lay out: both conventions' runs read with the real readers, pinned to one
// clock (state/fixturetest), in a runs pane set up as the root sets it up on a snapshot (ui/root.go).

package runs

import (
	"path/filepath"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state/fixturetest"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/theme"
)

var fixtureNow = fixturetest.Now

// fixturePane is the runs pane holding the fixtures, w×h, in the mono theme at fixtureNow.
func fixturePane(t testing.TB, w, h int) *Pane {
	t.Helper()
	return paneOf(loadFixtures(t), w, h)
}

// paneOf is the runs pane holding runs, w×h, as fixturePane.
func paneOf(runs []model.Run, w, h int) *Pane {
	a := &app.App{Opts: app.Options{Theme: "mono", Now: func() time.Time { return fixtureNow }},
		Keys: keys.DefaultKeyMap(false), Theme: theme.NewTheme("mono", true), Runs: map[string]*model.Run{}}
	for _, r := range runs {
		if r.Attention.Code == "" {
			r.Attention = model.Judge(&r)
		}
		a.Runs[r.Key()] = &r
	}
	a.Loaded = true
	p := New(a)
	p.Resort()
	p.SetSize(w, h)
	return p
}

func loadFixtures(t testing.TB) []model.Run {
	return fixturetest.Load(t, filepath.Join("..", "..", "testdata"))
}
