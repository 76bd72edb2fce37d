package ui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Layout thresholds (SPEC "Dashboard conventions"). Where the runs pane goes beside Detail is not a fixed
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
	borderCells = 2
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
	case m.width-m.wideRunsWidth() < sideMin:
		// Beside Detail the table would have to give up what it shows at full width a column narrower:
		// stacked, it keeps the whole width (a wider terminal never shows less).
		return layoutStacked
	}
	return layoutWide
}

// wideRunsWidth is the runs pane's width beside Detail: what its table needs to show everything.
func (m Model) wideRunsWidth() int {
	return max(runsMinWide, m.list.naturalWidth()+borderCells)
}

func (m Model) bodyHeight() int { return max(1, m.height-headerLines-footerLines) }

// paneRects gives each pane's outer size (borders included); a zero rect means the pane is hidden.
func (m Model) paneRects() [paneCount]rect {
	var r [paneCount]rect
	body := m.bodyHeight()
	focus := m.app.focus
	switch m.layoutKind() {
	case layoutWide:
		// Runs down the left; detail over timeline on the right, so both get the width long log lines and
		// error messages need (lazygit's arrangement).
		// The runs pane is exactly as wide as its table with everything shown; the rest is Detail's.
		runsW := m.wideRunsWidth()
		detailH := body * 55 / 100
		r[PaneRuns] = rect{runsW, body}
		r[PaneDetail] = rect{m.width - runsW, detailH}
		r[PaneTimeline] = rect{m.width - runsW, body - detailH}
	case layoutStacked:
		// The runs list takes what its rows need up to a third; of the rest Detail gets the larger share,
		// because its first lines say what the run needs and where it stands.
		// Counted over every run, not the listed ones, so the panes do not change size with the filter.
		runsH := clamp(len(m.app.runs)+3, 5, max(5, body/3))
		rest := body - runsH
		small := rest * 2 / 5
		r[PaneRuns] = rect{m.width, runsH}
		r[PaneDetail] = rect{m.width, rest - small}
		r[PaneTimeline] = rect{m.width, small}
		if focus == PaneTimeline {
			// The focused timeline swaps shares with Detail, so its search results have room.
			r[PaneDetail].h, r[PaneTimeline].h = small, rest-small
		}
	case layoutSingle:
		r[focus] = rect{m.width, body}
	}
	return r
}

// outer is a pane's size with its border; a hidden pane gets what it would have if shown alone, so
// scrolling stays sensible when it reappears.
func (m Model) outer(p Pane) (w, h int) {
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
	for p := Pane(0); p < paneCount; p++ {
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
	m.app.beginFrame()
	v := tea.NewView(m.render())
	v.AltScreen = true
	// The wheel scrolls the pane under the pointer; the terminal's own selection is then shift-drag (most
	// terminals; option-drag in iTerm2), or --no-mouse leaves the mouse to the terminal.
	v.MouseMode = tea.MouseModeCellMotion
	if m.app.opts.NoMouse {
		v.MouseMode = tea.MouseModeNone
	}
	// The title carries the counts, so a tmux status line or a window list shows when a run needs a person.
	v.WindowTitle = m.windowTitle()
	m.app.endFrame()
	if m.app.opts.Debug != nil {
		fmt.Fprintf(m.app.opts.Debug, "%s view %s %d bytes\n", start.UTC().Format("15:04:05.000000"), time.Since(start), len(v.Content))
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
		if d, ok := o.(*confirmDialog); ok {
			center = lipgloss.Place(m.width, body, lipgloss.Center, lipgloss.Center, d.View())
		} else {
			center = o.View()
		}
	}
	return lipgloss.JoinVertical(lipgloss.Left, m.renderHeader(), center, m.footer.view(m.focused()))
}

func (m Model) renderPanes() string {
	rs := m.paneRects()
	boxes := make([]string, 0, paneCount)
	for p := Pane(0); p < paneCount; p++ {
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

// scroll says how many lines a pane has above and below what it shows; box prints it in the border.
type scroll struct{ above, below int }

// box draws a bordered pane with the title set into the top border and "↑ N more" / "↓ N more" at the
// right of the top and bottom borders. The focused pane gets a heavy border and a ▌ marker so focus is
// visible without colour.
func box(t Theme, title string, content []string, w, h int, focused bool, sc scroll) string {
	if w < 4 || h < 2 {
		return ""
	}
	b := lipgloss.RoundedBorder()
	style := t.BorderBlurred
	mark := " "
	if focused {
		b = lipgloss.ThickBorder()
		style = t.BorderFocused
		mark = "▌"
	}
	iw := w - borderCells
	up, down := "", ""
	if sc.above > 0 {
		up = fmt.Sprintf(" ↑ %d more ", sc.above)
	}
	if sc.below > 0 {
		down = fmt.Sprintf(" ↓ %d more ", sc.below)
	}
	if visibleWidth(up) > iw/3 {
		up = ""
	}
	if visibleWidth(down) > iw-2 {
		down = ""
	}
	title = truncate(mark+title+" ", max(0, iw-1-visibleWidth(up)))
	top := style.Render(b.TopLeft+b.Top) + t.Bold.Render(title) +
		style.Render(strings.Repeat(b.Top, max(0, iw-1-visibleWidth(title)-visibleWidth(up)))) + t.Dim.Render(up) + style.Render(b.TopRight)
	lines := make([]string, 0, h)
	lines = append(lines, top)
	left, right := style.Render(b.Left), style.Render(b.Right)
	blank := left + strings.Repeat(" ", iw) + right
	for i := 0; i < h-borderCells; i++ {
		if i >= len(content) || content[i] == "" {
			lines = append(lines, blank)
			continue
		}
		lines = append(lines, left+padRight(truncate(content[i], iw), iw)+right)
	}
	lines = append(lines, style.Render(b.BottomLeft+strings.Repeat(b.Bottom, max(0, iw-1-visibleWidth(down))))+
		t.Dim.Render(down)+style.Render(strings.Repeat(b.Bottom, min(1, iw))+b.BottomRight))
	return strings.Join(lines, "\n")
}

func visibleWidth(s string) int { return ansi.StringWidth(s) }

func stripped(s string) string { return ansi.Strip(s) }

// truncate cuts styled text to w cells, marking the cut with an ellipsis.
func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

func padRight(s string, w int) string {
	if n := w - ansi.StringWidth(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// wrapText wraps plain text to w cells, breaking long words.
func wrapText(s string, w int) []string {
	if w <= 0 {
		return []string{s}
	}
	return strings.Split(ansi.Wrap(s, w, ""), "\n")
}
