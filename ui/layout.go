// Layout: which arrangement the terminal allows (single, stacked, wide), the size each pane gets, and the
// frame drawn from the panes, the top overlay, the header and the footer.

package ui

import (
	"fmt"
	"runwatch/ui/app"
	"runwatch/ui/overlay"
	"runwatch/ui/theme"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Layout thresholds (docs/DASHBOARD.md says what each arrangement shows). Where the runs pane goes beside Detail is not a fixed
// width: it is where the table can take every step of its rule (runstable.go) and Detail still gets sideMin.
const (
	stackedMin = 60
	// sideMin is the narrowest Detail beside the runs: its first line ("Needs you: lock held by dead pid
	// 14010 (24m) → press U (clear lock)") takes two lines at most, the current stage's row one.
	sideMin = 64
	// runsMinWide keeps the empty state's sentences whole in a runs pane beside Detail.
	runsMinWide = 44
	minWidth    = 40
	minHeight   = 10
	headerLines = 1
	footerLines = 2
)

type layoutKind int

const (
	layoutTooSmall layoutKind = iota
	layoutSingle
	layoutStacked
	layoutWide
)

type rect struct{ w, h int }

func (m Model) layoutKind() layoutKind {
	switch {
	case m.width < minWidth || m.height < minHeight:
		return layoutTooSmall
	case m.width < stackedMin:
		return layoutSingle
	case m.width-m.wideRunsWidth() < max(sideMin, m.width*2/5):
		// Beside Detail the table would have to give up what it shows at full width a column narrower:
		// stacked, it keeps the whole width (a wider terminal never shows less). Detail and the timeline
		// get two fifths of the width at least: at 280 columns the runs took 210, mostly blank cells beside
		// a few long reasons, while Detail and the timeline cut their lines at 64.
		return layoutStacked
	}
	return layoutWide
}

// wideRunsWidth is the runs pane's width beside Detail: what its table needs to show everything.
func (m Model) wideRunsWidth() int {
	return max(runsMinWide, m.list.NaturalWidth()+theme.BorderCells)
}

func (m Model) bodyHeight() int { return max(1, m.height-headerLines-footerLines) }

// paneRects gives each pane's outer size (borders included); a zero rect means the pane is hidden.
func (m Model) paneRects() [app.PaneCount]rect {
	var r [app.PaneCount]rect
	body := m.bodyHeight()
	focus := m.app.Focus
	switch m.layoutKind() {
	case layoutWide:
		// Runs down the left; detail over timeline on the right, so both get the width long log lines and
		// error messages need (lazygit's arrangement).
		// The runs pane is exactly as wide as its table with everything shown; the rest is Detail's.
		runsW := m.wideRunsWidth()
		detailH := body * 55 / 100
		r[app.PaneRuns] = rect{runsW, body}
		r[app.PaneDetail] = rect{m.width - runsW, detailH}
		r[app.PaneTimeline] = rect{m.width - runsW, body - detailH}
	case layoutStacked:
		// The runs list takes what its rows need up to a third; of the rest Detail gets the larger share,
		// because its first lines say what the run needs and where it stands.
		// Counted over every run, not the listed ones, so the panes do not change size with the filter.
		runsH := app.Clamp(len(m.app.Runs)+3, 5, max(5, body/3))
		rest := body - runsH
		small := rest * 2 / 5
		r[app.PaneRuns] = rect{m.width, runsH}
		r[app.PaneDetail] = rect{m.width, rest - small}
		r[app.PaneTimeline] = rect{m.width, small}
		if focus == app.PaneTimeline {
			// The focused timeline swaps shares with Detail, so its search results have room.
			r[app.PaneDetail].h, r[app.PaneTimeline].h = small, rest-small
		}
	case layoutSingle:
		r[focus] = rect{m.width, body}
	}
	return r
}

// outer is a pane's size with its border; a hidden pane gets what it would have if shown alone, so
// scrolling stays sensible when it reappears.
func (m Model) outer(p app.Pane) (w, h int) {
	rs := m.paneRects()
	r := rs[p]
	if r.w == 0 || r.h == 0 {
		r = rect{m.width, m.bodyHeight()}
	}
	return r.w, r.h
}

// layout hands every component its size; the root calls it on resize, focus change and when the number of
// runs changes (the stacked runs pane is as tall as its rows).
func (m *Model) layout() {
	m.laidOut = m.paneRects()
	for p := app.Pane(0); p < app.PaneCount; p++ {
		w, h := m.outer(p)
		m.pane(p).SetSize(w, h)
	}
	m.footer.SetSize(m.width, footerLines)
	for _, o := range m.overlays {
		o.SetSize(m.width, m.bodyHeight())
	}
}

// View draws the frame. It does no I/O: everything it shows was prepared by Update.
func (m Model) View() tea.View {
	start := time.Now()
	m.app.BeginFrame()
	v := tea.NewView(m.render())
	v.AltScreen = true
	// The wheel scrolls the pane under the pointer; the terminal's own selection is then shift-drag (most
	// terminals; option-drag in iTerm2), or --no-mouse leaves the mouse to the terminal.
	v.MouseMode = tea.MouseModeCellMotion
	if m.app.Opts.NoMouse {
		v.MouseMode = tea.MouseModeNone
	}
	// The title carries the counts, so a tmux status line or a window list shows when a run needs a person.
	v.WindowTitle = m.windowTitle()
	m.app.EndFrame()
	if m.app.Opts.Debug != nil {
		fmt.Fprintf(m.app.Opts.Debug, "%s view %s %d bytes\n", start.UTC().Format("15:04:05.000000"), time.Since(start), len(v.Content))
	}
	return v
}

func (m Model) render() string {
	if !m.sized {
		// Until the terminal has said its size, any frame would be drawn for a guessed one and wrap.
		return ""
	}
	if m.layoutKind() == layoutTooSmall {
		msg := fmt.Sprintf("terminal too small: %dx%d, need at least %dx%d", m.width, m.height, minWidth, minHeight)
		return lipgloss.Place(max(1, m.width), max(1, m.height), lipgloss.Center, lipgloss.Center,
			lipgloss.NewStyle().Width(max(1, m.width)).Align(lipgloss.Center).Render(msg))
	}
	body := m.bodyHeight()
	center := m.renderPanes()
	if o := m.top(); o != nil {
		if d, ok := o.(*overlay.Confirm); ok {
			center = lipgloss.Place(m.width, body, lipgloss.Center, lipgloss.Center, d.View())
		} else {
			center = o.View()
		}
	}
	return lipgloss.JoinVertical(lipgloss.Left, m.renderHeader(), center, m.footer.view(m.focused()))
}

func (m Model) renderPanes() string {
	rs := m.paneRects()
	boxes := make([]string, 0, app.PaneCount)
	for p := app.Pane(0); p < app.PaneCount; p++ {
		r := rs[p]
		if r.w == 0 || r.h == 0 {
			continue
		}
		boxes = append(boxes, m.pane(p).View())
	}
	if m.layoutKind() == layoutWide && len(boxes) == 3 {
		return lipgloss.JoinHorizontal(lipgloss.Top, boxes[0], lipgloss.JoinVertical(lipgloss.Left, boxes[1], boxes[2]))
	}
	return lipgloss.JoinVertical(lipgloss.Left, boxes...)
}
