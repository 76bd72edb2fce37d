package ui

import (
	"fmt"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"strings"
)

// needYou counts the runs whose attention says a person is needed (model.Judge decides; this only counts).
// needYou counts the runs that need a person; the runs pane counts them whenever the runs change, so a
// frame does not walk every run twice for it.
func (m Model) needYou() int { return m.list.needYou }

func (m Model) windowTitle() string {
	title := "runwatch: " + runsCount(len(m.app.runs))
	if n := m.needYou(); n > 0 {
		title += fmt.Sprintf(", %d need you", n)
	}
	return title
}

func (m Model) renderHeader() string {
	t := m.app.theme
	left := t.Title.Render("runwatch") + " " + runsCount(len(m.app.runs))
	if m.app.health.Loading > 0 {
		left += t.Dim.Render(fmt.Sprintf(" (%d more loading)", m.app.health.Loading))
	}
	if n := m.needYou(); n > 0 {
		left += " · " + t.Warn.Render(fmt.Sprintf("⚠ %d need you", n))
	}
	var tags []string
	if m.list.hideDone {
		tags = append(tags, fmt.Sprintf("hiding %d done (%s shows)", m.list.hidden, m.app.keys.First(keys.ActHideDone)))
	}
	if m.list.sortBy != sortAttention {
		tags = append(tags, "sort: "+m.list.sortBy.String())
	}
	if len(tags) > 0 {
		left += t.Dim.Render(" · " + strings.Join(tags, " · "))
	}
	right := ""
	if m.app.keys.ReadOnly {
		right = t.ReadOnly.Render(" READ-ONLY ") + " "
	}
	right += t.Dim.Render(m.app.keys.First(keys.ActHelp) + " help")
	gap := m.width - text.VisibleWidth(left) - text.VisibleWidth(right)
	if gap < 1 {
		return text.Truncate(left, m.width)
	}
	return left + strings.Repeat(" ", gap) + right
}

// runsCount is "1 run", "6 runs".
func runsCount(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}
