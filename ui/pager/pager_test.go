package pager

import (
	"strings"
	"testing"
	"time"

	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
)

// TestPagerNeverWrapsInsideAnID (issue 24 point 6): a command in a pager wraps before a run id that fits a
// row, never inside it, at every pager width where it fits, up to 120 columns.
func TestPagerNeverWrapsInsideAnID(t *testing.T) {
	t.Parallel()
	const id = "sphinx-traceability-migration-20261201T185600Z"
	txt := "To go on, run this in the run's folder: runwatch step --to M3 " + id + " and then watch it in the dashboard."
	a := &app.App{Opts: app.Options{Now: time.Now}, Keys: keys.DefaultKeyMap(false), Theme: theme.NewTheme("mono", true)}
	for w := len(id) + theme.BorderCells; w <= 120; w++ {
		p := New(a, "Message", txt, true)
		p.SetSize(w, 30)
		if v := text.Stripped(p.View()); !strings.Contains(v, id) {
			t.Errorf("%d columns: the id is cut in two:\n%s", w, v)
		}
	}
}
