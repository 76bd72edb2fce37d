// Tests of the footer's watcher health from the first frame.

package ui

import (
	"runwatch/ui/app"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// A watcher that starts broken (a missing root, an inotify limit) says why in the footer from the very
// first frame, before any change batch arrives.
func TestFooterGivesWatcherErrorFromFirstFrame(t *testing.T) {
	t.Parallel()
	opts := app.Options{Now: func() time.Time { return testNow }, Theme: "mono"}
	m := New(opts)
	m = send(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
	m = send(t, m, app.SnapshotMsg{Runs: sampleRuns(), Health: app.Health{Mode: "polling 2s", Err: "inotify watch limit reached (ENOSPC)"}, At: testNow})
	if out := plain(m); !strings.Contains(out, "inotify watch limit reached") {
		t.Fatalf("first frame does not give the watcher error's reason:\n%s", out)
	}
}
