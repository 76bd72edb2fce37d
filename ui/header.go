// The header line: the runs counted by attention, the sort and filter in force, read-only, and the window
// title.

package ui

import (
	"fmt"
	"runwatch/ui/keys"
	"runwatch/ui/runs"
	"runwatch/ui/text"
	"strings"
)

// needYou counts the runs whose attention says a person is needed (model.Judge decides; this only counts).
// needYou counts the runs that need a person; the runs pane counts them whenever the runs change, so a
// frame does not walk every run twice for it.
func (m Model) needYou() int { return m.list.NeedYou() }

func (m Model) windowTitle() string {
	title := "runwatch: " + text.RunsCount(len(m.app.Runs))
	if n := m.needYou(); n > 0 {
		title += fmt.Sprintf(", %d need you", n)
	}
	return title
}

func (m Model) renderHeader() string {
	t := m.app.Theme
	left := t.Title.Render("runwatch") + " " + text.RunsCount(len(m.app.Runs))
	if m.app.Health.Loading > 0 {
		left += t.Dim.Render(fmt.Sprintf(" (%d more loading)", m.app.Health.Loading))
	}
	if n := m.needYou(); n > 0 {
		left += " · " + t.Warn.Render(fmt.Sprintf("⚠ %d need you", n))
	}
	var tags []string
	if m.list.HideDone() {
		tags = append(tags, fmt.Sprintf("hiding %d done (%s shows)", m.list.Hidden(), m.app.Keys.First(keys.ActHideDone)))
	}
	if m.list.SortBy() != runs.SortAttention {
		tags = append(tags, "sort: "+m.list.SortBy().String())
	}
	if len(tags) > 0 {
		left += t.Dim.Render(" · " + strings.Join(tags, " · "))
	}
	right := ""
	if m.app.Keys.ReadOnly {
		right = t.ReadOnly.Render(" READ-ONLY ") + " "
	}
	right += t.Dim.Render(m.app.Keys.First(keys.ActHelp) + " help")
	gap := m.width - text.VisibleWidth(left) - text.VisibleWidth(right)
	if gap < 1 {
		return text.Truncate(left, m.width)
	}
	return left + strings.Repeat(" ", gap) + right
}
