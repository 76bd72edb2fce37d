package ui

import (
	"regexp"
	"strings"
	"testing"
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
