// Tests of small points: filter words, the help legend, the empty state, NO_COLOR, the wheel, help overlay.

package ui

import (
	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/overlay"
	"runwatch/ui/text"
	"runwatch/ui/theme"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// TestUnknownFilterWordIsRejected (issue 24 point 7): is:bogus is left out of the filter with a message
// naming the words is: takes, the rest of the filter kept; a word that starts a known one is fine.
func TestUnknownFilterWordIsRejected(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 120, 40, sampleRuns(), app.Options{})
	m = typeText(t, send(t, m, press("/")), "irm is:bogus")
	m = send(t, m, press("enter"))
	if got := m.app.Msgs.ErrText(); !strings.Contains(got, "unknown filter word is:bogus left out: is: takes needs-you") {
		t.Errorf("the message is %q", got)
	}
	if runsFilter(t, m) != "irm" || len(listed(t, m)) == 0 {
		t.Errorf("the filter is %q listing %v", runsFilter(t, m), listed(t, m))
	}
	m = newTestModel(t, 120, 40, sampleRuns(), app.Options{})
	m = typeText(t, send(t, m, press("/")), "is:stall has:lo kind:res")
	m = send(t, m, press("enter"))
	if got := m.app.Msgs.ErrText(); got != "" || runsFilter(t, m) != "is:stall has:lo kind:res" {
		t.Errorf("known words: message %q, filter %q", got, runsFilter(t, m))
	}
}

// TestEmptyStateNamesTheFolders: with no run found the list names the folders it scanned and suggests
// runwatch demo; the header counts "1 run", not "1 runs".
func TestEmptyStateNamesTheFolders(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 80, 24, nil, app.Options{Scanned: []string{"/home/me/work", "gpu1:/runs"}})
	frame := plain(m)
	if !strings.Contains(frame, "no runs found in /home/me/work, gpu1:/runs") || !strings.Contains(frame, "runwatch demo") {
		t.Errorf("the empty state:\n%s", frame)
	}
	one := newTestModel(t, 80, 24, sampleRuns()[:1], app.Options{})
	if h := strings.Split(plain(one), "\n")[0]; !strings.Contains(h, "runwatch 1 run ") || !strings.HasPrefix(one.windowTitle(), "runwatch: 1 run") ||
		strings.Contains(one.windowTitle(), "runs") {
		t.Errorf("one run: header %q, title %q", h, one.windowTitle())
	}
}

// TestNoColorMarksTheSelectedRunBesideDetail: under NO_COLOR, with Detail focused, the selected run's row
// is underlined, and no other row is: bold alone was no mark where the rows of runs that need you are bold.
func TestNoColorMarksTheSelectedRunBesideDetail(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 120, 40, loadFixtures(t), app.Options{Theme: "auto", Now: fixtureClock(), OpenLog: OpenIndexedLog, Getenv: envOf("NO_COLOR", "1")})
	m = send(t, m, press("tab"))
	run, _ := m.app.SelectedRun()
	marked := 0
	for _, l := range strings.Split(render(t, m, colorprofile.Ascii), "\n") {
		if len(sgrWith(l, "4")) == 0 {
			continue
		}
		marked++
		if !strings.Contains(text.Stripped(l), run.ID) {
			t.Errorf("a row other than the selected %s is underlined:\n%q", run.ID, l)
		}
	}
	if marked != 1 {
		t.Errorf("%d lines underlined, want the selected run's row", marked)
	}
}

// TestWheelScrollsThePaneUnderIt (issue 24 point 7): the mouse wheel over the timeline scrolls the
// timeline, over Detail scrolls Detail, over the runs moves the selection, and none takes the focus; the
// frame asks for mouse reports unless NoMouse leaves the mouse to the terminal.
func TestWheelScrollsThePaneUnderIt(t *testing.T) {
	t.Parallel()
	demo, now, env := loadDemoWorkspace(t)
	m := newTestModel(t, 120, 40, demo, app.Options{Theme: "mono", Now: now, Env: env, OpenLog: OpenIndexedLog})
	if m.layoutKind() != layoutStacked {
		t.Fatal("not stacked: the rows below assume Runs over Detail over Timeline")
	}
	rs := m.paneRects()
	yDetail := headerLines + rs[app.PaneRuns].h + 2
	yTimeline := headerLines + rs[app.PaneRuns].h + rs[app.PaneDetail].h + 2
	if m.View().MouseMode != tea.MouseModeCellMotion {
		t.Error("the dashboard does not ask for mouse reports")
	}
	wheel := func(m Model, y int, b tea.MouseButton) Model {
		return send(t, m, tea.MouseWheelMsg{X: 10, Y: y, Button: b})
	}
	fresh := func() Model {
		return newTestModel(t, 120, 40, demo, app.Options{Theme: "mono", Now: now, Env: env, OpenLog: OpenIndexedLog})
	}
	m = fresh()
	before := text.Stripped(m.tl.View())
	m = wheel(m, yTimeline, tea.MouseWheelUp)
	if text.Stripped(m.tl.View()) == before || m.app.Focus != app.PaneRuns {
		t.Errorf("the wheel over the timeline: moved %v, focus %s", text.Stripped(m.tl.View()) != before, m.app.Focus)
	}
	m = fresh()
	sel := m.detail.Selection()
	m = wheel(m, yDetail, tea.MouseWheelDown)
	if m.detail.Selection() == sel || m.app.Focus != app.PaneRuns {
		t.Errorf("the wheel over Detail: focused row %+v, focus %s", m.detail.Selection(), m.app.Focus)
	}
	m = fresh()
	was := m.app.Selected
	m = wheel(m, headerLines+3, tea.MouseWheelDown)
	if m.list.Cursor() != 1 || m.app.Selected == was {
		t.Errorf("the wheel over the runs: cursor %d", m.list.Cursor())
	}
	off := newTestModel(t, 120, 40, demo, app.Options{Theme: "mono", Now: now, Env: env, NoMouse: true})
	if off.View().MouseMode != tea.MouseModeNone {
		t.Error("NoMouse still asks for mouse reports")
	}
}

// TestHelpOverlayCutsNothing (issue 24 point 7): at 120x40 (and 100x30, 200x60) the help overlay's two
// columns show every key's sentence whole, wrapped where needed; at 120x40 the left one was cut with "…"
// beside a half-empty right one.
func TestHelpOverlayCutsNothing(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{120, 40}, {100, 30}, {200, 60}} {
		m := newTestModel(t, sz[0], sz[1], sampleRuns(), app.Options{})
		m = send(t, m, press("?"))
		lines := m.top().(*overlay.Help).Content(max(1, m.width-theme.BorderCells), max(1, m.bodyHeight()-theme.BorderCells))
		txt := strings.Join(lines, "\n")
		if strings.Contains(txt, "…") {
			t.Errorf("%dx%d: the help cuts a line:\n%s", sz[0], sz[1], txt)
		}
		squeeze := func(s string) string { return strings.Join(strings.Fields(s), " ") }
		flat := squeeze(txt)
		for _, want := range []string{"install runwatch on a host that lacks it (or has an older one)",
			"open run / timeline: read the entry whole", "search timeline backward (tab in the prompt: regex)"} {
			if !strings.Contains(flat, want) && !strings.Contains(strings.ReplaceAll(txt, "\n", ""), want) {
				// A wrapped sentence reads whole once the column beside it is taken away: check its words in order.
				if !wordsInOrder(flat, want) {
					t.Errorf("%dx%d: %q is not in the help", sz[0], sz[1], want)
				}
			}
		}
	}
}

// wordsInOrder says whether every word of want appears in s in order.
func wordsInOrder(s, want string) bool {
	at := 0
	for _, w := range strings.Fields(want) {
		i := strings.Index(s[at:], w)
		if i < 0 {
			return false
		}
		at += i + len(w)
	}
	return true
}

// TestEmptyListNamesAHostThatCannotBeReached (issue 36, a trial): with no run, a root whose host did not
// answer is named by the host's error, as status names it, and not as looked in ("no runs found in
// nohost:/x" said its folder was read and empty); the roots that were looked in are still named.
func TestEmptyListNamesAHostThatCannotBeReached(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 80, 24, nil, app.Options{Scanned: []string{"/home/me/work", "nohost:/x"}, ScannedHosts: []string{"", "nohost"}})
	m = send(t, m, app.BatchMsg{Hosts: []model.HostHealth{{Host: "nohost", State: model.HostReconnecting,
		Error: "nohost cannot be reached: ssh: Could not resolve hostname nohost: Name or service not known\x1b[2J"}}, At: testNow})
	frame := strings.Join(strings.Fields(strings.NewReplacer("┃", " ", "│", " ").Replace(plain(m))), " ")
	if !strings.Contains(frame, "✗ nohost cannot be reached: ssh: Could not resolve hostname nohost: Name or service not known") ||
		strings.Contains(frame, "nohost:/x") || !strings.Contains(frame, "no runs found in /home/me/work") {
		t.Errorf("the empty list with an unreachable host:\n%s", plain(m))
	}
	if strings.Contains(plain(m), "\x1b[2J") {
		t.Error("the host's error reached the screen unsanitized")
	}
}
