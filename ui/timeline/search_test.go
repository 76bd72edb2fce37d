// Tests of a find in flight: its progress and its cancelling, on the timeline pane driven as the root
// drives it (keys to the focused pane, esc to CancelSearch, every command's message fed back).

package timeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"runwatch/model"
	"runwatch/state/runlog"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/theme"
)

// indexedPane is the focused timeline of a resumable run whose log is path, read with the real index,
// w×h, with the log opened.
func indexedPane(t *testing.T, path string, w, h int) *Pane {
	t.Helper()
	return indexedPaneOf(t, path, w, h, func(ix *runlog.Index) app.LogSource { return ix })
}

// indexedPaneOf is indexedPane with the index seen through source.
func indexedPaneOf(t *testing.T, path string, w, h int, source func(*runlog.Index) app.LogSource) *Pane {
	t.Helper()
	open := func(string) (app.LogSource, error) {
		ix, err := runlog.OpenIndex(path)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { ix.Close() })
		return source(ix), nil
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	run := model.Run{ID: "irm-backfill-20261103T120000Z", Kind: model.KindResumable, Status: model.StatusRunning,
		StatePath: "/r/irm-backfill-20261103T120000Z/state.env", Dir: "/r/irm-backfill-20261103T120000Z",
		Log: &model.LogRef{Path: "/r/irm-backfill-20261103T120000Z/run.log"}}
	a := &app.App{Opts: app.Options{Theme: "mono", OpenLog: open, Now: func() time.Time { return now }},
		Keys: keys.DefaultKeyMap(false), Theme: theme.NewTheme("mono", true),
		Runs: map[string]*model.Run{run.Key(): &run}, Selected: run.Key(), Focus: app.PaneTimeline, Loaded: true}
	p := New(a)
	p.SetSize(w, h)
	send(t, p, p.Sync())
	return p
}

// send runs cmd and delivers its messages (and those of the commands they return) to p, synchronously, as
// the program would, until the chain settles.
func send(t *testing.T, p *Pane, cmd tea.Cmd) {
	t.Helper()
	queue := []tea.Cmd{cmd}
	for steps := 0; len(queue) > 0; steps++ {
		if steps > 100 {
			t.Fatalf("command chain did not settle")
		}
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case LogOpenedMsg, LogIndexedMsg, SearchDoneMsg, CountDoneMsg, FilterDoneMsg:
			queue = append(queue, p.Update(msg))
		}
	}
}

func press(t *testing.T, p *Pane, s string) {
	t.Helper()
	k := tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
	switch s {
	case "enter":
		k = tea.KeyPressMsg{Code: tea.KeyEnter}
	case "tab":
		k = tea.KeyPressMsg{Code: tea.KeyTab}
	}
	send(t, p, p.Update(k))
}

// TestSearchProgressAndCancel: a long search shows a spinner and the bytes read, esc cancels it, and the
// cursor stays where it was. The search is a regexp without literals over a 48 MiB log, so it runs long
// enough to watch whatever the machine; the test waits for conditions, it times nothing.
func TestSearchProgressAndCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 48 MiB log")
	}
	path := filepath.Join(t.TempDir(), "run.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	line := "[2026-11-30T11:00:00Z] stage_start stage=S1 run_id=20260215T014733Z host=oss-work pid=12345\n"
	chunk := strings.Repeat(line, (1<<20)/len(line))
	for i := 0; i < 48; i++ {
		f.WriteString(chunk)
	}
	f.Close()
	p := indexedPane(t, path, 140, 20)
	press(t, p, "k")
	press(t, p, "k")
	before := p.cursor
	press(t, p, "/")
	press(t, p, "tab") // the prompt reads a regexp
	for _, r := range "[0-9]{9}[g-z]" {
		press(t, p, string(r))
	}
	// Enter without running the command chain: the search runs in its command, as in the program.
	cmd := p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd == nil || !p.srch.running {
		t.Fatal("the search did not start in a command")
	}
	done := make(chan tea.Msg, 1)
	go runFor(cmd, done)
	// Wait until bytes were read, then pretend the search started progressAfter ago.
	for {
		if d, _ := p.srch.prog.Bytes(); d > 0 && !p.srch.prog.Indexing() {
			break
		}
		select {
		case msg := <-done:
			t.Fatalf("the search ended before it could be watched: %+v", msg)
		case <-time.After(10 * time.Millisecond):
		}
	}
	p.srch.started = time.Now().Add(-progressAfter)
	if s := p.LineInput(); !regexp.MustCompile(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] searching \d+ (B|KiB|MiB) of 4\d MiB · esc cancels`).MatchString(s) {
		t.Fatalf("no progress shown:\n%s", s)
	}
	p.CancelSearch() // what the root does with esc while a find runs
	if p.srch.running || p.cursor != before || !strings.Contains(p.LineInput(), "search cancelled") {
		t.Fatalf("esc: running %v cursor %d (was %d)\n%s", p.srch.running, p.cursor, before, p.LineInput())
	}
	msg := (<-done).(SearchDoneMsg)
	if !errors.Is(msg.err, context.Canceled) {
		t.Fatalf("the search command did not stop: %+v", msg)
	}
	send(t, p, func() tea.Msg { return msg })
	if p.cursor != before {
		t.Fatalf("the cancelled search's answer moved the cursor to %d", p.cursor)
	}
}

// runFor runs cmd and the commands of its batches, each in its own goroutine as the program would, and
// delivers the search's answer.
func runFor(cmd tea.Cmd, done chan<- tea.Msg) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			go runFor(c, done)
		}
	case SearchDoneMsg:
		done <- msg
	}
}

// TestHScrollReachesEndOfHugeLine: with wrap off, $ shows the end of a 50 MiB line, read from the file
// without the rest of it being read or drawn, and ‹ says the line goes on to the left.
func TestHScrollReachesEndOfHugeLine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes a 50 MiB line")
	}
	path := filepath.Join(t.TempDir(), "run.log")
	var b strings.Builder
	b.WriteString("[2026-11-30T11:00:00Z] run_start\n[2026-11-30T11:00:01Z] dump payload=")
	b.WriteString(strings.Repeat("0123456789abcdef", (50<<20)/16))
	b.WriteString("THE-END\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p := indexedPane(t, path, 120, 12)
	if err := p.src.(Waiter).Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	send(t, p, p.Update(app.TickMsg(time.Now()))) // the count is done: lines get their final numbers
	if p.cursor != 1 {
		t.Fatalf("cursor %d", p.cursor)
	}
	view := func() string { return ansi.Strip(p.View()) }
	press(t, p, "l")
	if p.xoff == 0 || !strings.Contains(view(), "‹") {
		t.Fatal("l did not scroll right")
	}
	press(t, p, "$")
	if s := view(); !strings.Contains(s, "THE-END") || !strings.Contains(s, "‹") {
		t.Fatalf("$ did not reach the end of the line:\n%s", s)
	}
	if p.xoff < 50<<20-200 {
		t.Fatalf("xoff %d: not at the end", p.xoff)
	}
	lp, ok := p.long[1]
	if !ok || len(lp.text) > 4*p.width+8 || lp.right {
		t.Fatalf("the window read %d bytes (right %v), want at most a screen's worth and the end", len(lp.text), lp.right)
	}
	if n := len(p.View()); n > 64<<10 {
		t.Fatalf("the pane is %d bytes", n)
	}
	press(t, p, "0")
	if p.xoff != 0 || strings.Contains(view(), "THE-END") {
		t.Fatal("0 did not scroll back to the start")
	}
}
