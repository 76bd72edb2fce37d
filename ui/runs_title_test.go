package ui

import (
	"regexp"
	"strings"
	"testing"

	"runwatch/ui/text"
)

// runsTitleStart is where the runs pane's title starts on its top border, focused (━▌) or not (─ ).
var runsTitleStart = regexp.MustCompile(`[╭┏][─━](▌| )Runs `)

// runsFilter is the filter in force as the runs pane's title shows it (`Runs 2 of 7 /pay`), "" for none.
func runsFilter(t testing.TB, m Model) string {
	t.Helper()
	frame := plain(m)
	for _, l := range strings.Split(frame, "\n") {
		loc := runsTitleStart.FindStringIndex(l)
		if loc == nil {
			continue
		}
		title := l[loc[1]:]
		if j := strings.IndexAny(title, "─━"); j >= 0 {
			title = strings.TrimSuffix(title[:j], " ")
		}
		_, filter, _ := strings.Cut(title, " /")
		return filter
	}
	t.Fatalf("no Runs pane on screen:\n%s", frame)
	return ""
}

// listed is the names of the runs the runs pane lists, top to bottom, as it draws them; the test fails
// where the pane does not show every one of them whole.
func listed(t testing.TB, m Model) []string {
	t.Helper()
	pane := text.Stripped(m.list.View())
	lines := strings.Split(pane, "\n")
	if len(lines) < 3 || strings.Contains(lines[len(lines)-1], " more ") || !strings.Contains(lines[1], "NAME") {
		t.Fatalf("the runs pane does not list every run:\n%s", pane)
	}
	var names []string
	for _, l := range lines[2 : len(lines)-1] {
		// A row is the status glyph, a space and the name, inside the pane's border.
		_, row, _ := strings.Cut(strings.Trim(l, "┃│"), " ")
		f := strings.Fields(row)
		if len(f) == 0 {
			continue
		}
		if strings.HasSuffix(f[0], "…") {
			t.Fatalf("the name %s is cut:\n%s", f[0], pane)
		}
		names = append(names, f[0])
	}
	return names
}

// idOf is the name of the selected run.
func idOf(m Model) string {
	if r, ok := m.app.SelectedRun(); ok {
		return r.ID
	}
	return ""
}
