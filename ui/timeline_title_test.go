package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// What the tests know of the timeline they read from its title, as a person does: the position (`5/86`),
// follow or paused, the pattern searched for, `only matches` and wrap.

// tlTitleStart is where the title starts on the pane's top border, focused (━▌) or not (─ ).
var tlTitleStart = regexp.MustCompile(`[╭┏][─━](▌| )Timeline`)

// tlTitleParts are the words of the timeline's title as drawn, split at its ` · `.
func tlTitleParts(t testing.TB, m Model) []string {
	t.Helper()
	frame := plain(m)
	for _, l := range strings.Split(frame, "\n") {
		loc := tlTitleStart.FindStringIndex(l)
		if loc == nil {
			continue
		}
		title := l[loc[1]-len("Timeline"):]
		if j := strings.IndexAny(title, "─━"); j >= 0 {
			title = strings.TrimSuffix(title[:j], " ")
		}
		return strings.Split(title, " · ")
	}
	t.Fatalf("no Timeline pane on screen:\n%s", frame)
	return nil
}

// tlCursor is the line the timeline's cursor is on, from 0, as its title's position says.
func tlCursor(t testing.TB, m Model) int {
	t.Helper()
	parts := tlTitleParts(t, m)
	for _, p := range parts {
		var n, of int
		if c, _ := fmt.Sscanf(p, "%d/%d", &n, &of); c == 2 && p == fmt.Sprintf("%d/%d", n, of) {
			return n - 1
		}
	}
	t.Fatalf("the timeline's title says no position: %q", parts)
	return -1
}

// tlSays is whether the timeline's title has the part word, or a part that begins with it when prefix.
func tlSays(t testing.TB, m Model, word string, prefix bool) (string, bool) {
	t.Helper()
	for _, p := range tlTitleParts(t, m) {
		if p == word || prefix && strings.HasPrefix(p, word) {
			return p, true
		}
	}
	return "", false
}

// tlFollows is whether the timeline follows the log's end (`▶ follow`, not `‖ paused`).
func tlFollows(t testing.TB, m Model) bool {
	t.Helper()
	_, ok := tlSays(t, m, "▶ follow", false)
	return ok
}

// tlWraps is whether long lines wrap.
func tlWraps(t testing.TB, m Model) bool {
	t.Helper()
	_, ok := tlSays(t, m, "wrap", false)
	return ok
}

// tlFiltered is whether only the matching lines are listed.
func tlFiltered(t testing.TB, m Model) bool {
	t.Helper()
	_, ok := tlSays(t, m, "only matches:", true)
	return ok
}

// tlPattern is the pattern searched for, "" when none.
func tlPattern(t testing.TB, m Model) string {
	t.Helper()
	p, _ := tlSays(t, m, "/", true)
	return strings.TrimSuffix(strings.TrimPrefix(p, "/"), " (regex)")
}

// tlWalk reads n lines of the timeline from its cursor's, moving the cursor a line at a time with key (j
// down, k up): the lines in the order met.
func tlWalk(t *testing.T, m Model, n int, key string) (Model, []string) {
	t.Helper()
	var lines []string
	for i := range n {
		if i > 0 {
			m = send(t, m, press(key))
		}
		cur, ok := m.tl.CursorLine()
		if !ok {
			t.Fatalf("the timeline's cursor is on no line read (after %d presses of %s)", i, key)
		}
		lines = append(lines, cur)
	}
	return m, lines
}

// tlTitle is the timeline's title as drawn.
func tlTitle(t testing.TB, m Model) string {
	t.Helper()
	return strings.Join(tlTitleParts(t, m), " · ")
}
