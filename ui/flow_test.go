// The live flow: a real watcher over copied fixtures, the dashboard following its batches.

package ui

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/app"
	"runwatch/watch"
)

// TestLiveFlow runs the real program over a copy of the fixtures with the real watcher, changes the files
// while it runs, and waits for the screen to show each change.
func TestLiveFlow(t *testing.T) {
	t.Parallel()
	root := resumabletest.Copy(t)
	w, err := watch.New(watch.Options{Paths: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	m := New(app.Options{Theme: "mono", OpenLog: OpenIndexedLog})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(140, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	go Relay(tm.GetProgram(), w)

	waitScreen(t, tm, "iso26262-mining")
	before := len(w.Snapshot())

	// A new run folder appears: it must show up in the list.
	src := resumabletest.Run(root, resumabletest.Sphinx)
	dst := filepath.Join(root, "reports", "live-new-run-20260301T000000Z")
	copyDir(t, src, dst)
	waitScreen(t, tm, "live-new-run")

	// It disappears again. Cell-diff rendering repaints only changed cells, so the check reads the window
	// title, which the terminal always receives whole.
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, tm, fmt.Sprintf("runwatch: %d runs", before))

	// A line appended to the selected run's log shows up in the following timeline.
	logPath := filepath.Join(resumabletest.Run(root, resumabletest.Mining), "run.log")
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("[2026-02-16T06:00:00Z] stage_start stage=flowcheck\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	waitScreen(t, tm, "stage=flowcheck")

	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	for p := range final.app.Runs {
		if strings.Contains(p, "live-new-run") {
			t.Errorf("removed run still in the model: %s", p)
		}
	}
}

func waitScreen(t *testing.T, tm *teatest.TestModel, want string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(want)) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}
