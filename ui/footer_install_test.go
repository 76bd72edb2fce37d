// The footer's status line keeps the way out of a host's trouble when the pane is narrow.

package ui

import (
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/ui/app"

	tea "charm.land/bubbletea/v2"
)

// A host that lacks runwatch says "I install" on the footer line that shows it failed, at every width the
// README tries: the segments that matter less (the focus, the notifications, the age of the last change)
// give way before it is cut.
func TestFooterKeepsTheInstallKeyAtEveryWidth(t *testing.T) {
	t.Parallel()
	for _, w := range []int{200, 120, 80, 50} {
		opts := app.Options{Now: func() time.Time { return testNow }, Theme: "mono"}
		m := New(opts)
		m = send(t, m, tea.WindowSizeMsg{Width: w, Height: 20})
		m = send(t, m, app.SnapshotMsg{Runs: sampleRuns(), Health: app.Health{Mode: "inotify"}, At: testNow})
		failed := model.HostHealth{Host: "gpu2", State: model.HostFailed,
			Error: "gpu2: runwatch is not installed there; runwatch install ssh://gpu2/srv/runs copies this one"}
		m = send(t, m, app.BatchMsg{At: testNow, Health: app.Health{Mode: "inotify"}, Hosts: []model.HostHealth{failed}})
		lines := strings.Split(plain(m), "\n")
		var footer string
		for _, l := range lines {
			if strings.Contains(l, "inotify") {
				footer = l
			}
		}
		if !strings.Contains(footer, "gpu2 failed I install") {
			t.Errorf("%d columns: the footer line %q lacks the host's way out", w, footer)
		}
	}
}
