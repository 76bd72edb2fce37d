package ui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"runwatch/model"
)

// Layout thresholds (SPEC "Dashboard conventions").
const (
	wideMin      = 120
	stackedMin   = 60
	minWidth     = 40
	minHeight    = 10
	headerLines  = 1
	footerLines  = 2
	borderCells  = 2
	stackedRunsH = 3 // runs get 1/3 of the body when stacked
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
	case m.width < wideMin:
		return layoutStacked
	}
	return layoutWide
}

// paneRects gives each pane's outer size (borders included); a zero rect means the pane is hidden.
func (m Model) paneRects() [paneCount]rect {
	var r [paneCount]rect
	body := m.height - headerLines - footerLines
	switch m.layoutKind() {
	case layoutWide:
		// Runs down the left; detail over timeline on the right, so both get the width long log lines and
		// error messages need (lazygit's arrangement).
		runsW := m.width * 42 / 100
		detailH := body * 55 / 100
		r[PaneRuns] = rect{runsW, body}
		r[PaneDetail] = rect{m.width - runsW, detailH}
		r[PaneTimeline] = rect{m.width - runsW, body - detailH}
	case layoutStacked:
		runsH := max(4, body/stackedRunsH)
		rest := body - runsH
		small := rest / 2
		r[PaneRuns] = rect{m.width, runsH}
		r[PaneDetail] = rect{m.width, small}
		r[PaneTimeline] = rect{m.width, small}
		// The focused lower pane gets the odd line.
		if m.focus == PaneTimeline {
			r[PaneTimeline].h = rest - small
		} else {
			r[PaneDetail].h = rest - small
		}
	case layoutSingle:
		r[m.focus] = rect{m.width, body}
	}
	return r
}

// paneHeight is the inner (content) height of a pane; for a hidden pane it is what it would get if shown,
// so scrolling stays sensible after a resize.
func (m Model) paneHeight(p Pane) int {
	rs := m.paneRects()
	if rs[p].h > 0 {
		return max(1, rs[p].h-borderCells)
	}
	return max(1, m.height-headerLines-footerLines-borderCells)
}

func (m Model) paneWidth(p Pane) int {
	rs := m.paneRects()
	if rs[p].w > 0 {
		return max(1, rs[p].w-borderCells)
	}
	return max(1, m.width-borderCells)
}

func (m Model) timelineHeight() int { return m.paneHeight(PaneTimeline) }

func (m Model) selectStyle(p Pane) lipgloss.Style {
	if m.focus == p {
		return m.theme.Selected
	}
	return m.theme.SelectedDim
}

// View draws the frame. It does no I/O: everything it shows was prepared by Update.
func (m Model) View() tea.View {
	start := time.Now()
	content := ""
	if m.sized {
		content = m.render()
	}
	v := tea.NewView(content)
	v.AltScreen = true
	// Mouse stays off so people can select text with the terminal's own selection.
	v.MouseMode = tea.MouseModeNone
	// The title carries the counts, so a tmux status line or a window list shows when a run needs a person.
	v.WindowTitle = m.windowTitle()
	if m.opts.Debug != nil {
		fmt.Fprintf(m.opts.Debug, "%s view %s %d bytes\n", start.UTC().Format("15:04:05.000000"), time.Since(start), len(v.Content))
	}
	return v
}

func (m Model) windowTitle() string {
	attention := 0
	for _, r := range m.runs {
		if needsAttention(r) {
			attention++
		}
	}
	title := fmt.Sprintf("runwatch: %d runs", len(m.runs))
	if attention > 0 {
		title += fmt.Sprintf(", %d need attention", attention)
	}
	return title
}

func (m Model) render() string {
	if m.layoutKind() == layoutTooSmall {
		msg := fmt.Sprintf("terminal too small: %dx%d, need at least %dx%d", m.width, m.height, minWidth, minHeight)
		return lipgloss.Place(max(1, m.width), max(1, m.height), lipgloss.Center, lipgloss.Center,
			lipgloss.NewStyle().Width(max(1, m.width)).Align(lipgloss.Center).Render(msg))
	}
	body := m.height - headerLines - footerLines
	var center string
	switch {
	case m.showHelp:
		center = m.renderHelp(m.width, body)
	case m.brief != nil:
		center = m.renderBrief(m.width, body)
	default:
		center = m.renderPanes()
	}
	if m.confirm != nil {
		dialog := m.renderConfirm(max(20, m.width-4), body)
		center = lipgloss.Place(m.width, body, lipgloss.Center, lipgloss.Center, dialog)
	}
	return lipgloss.JoinVertical(lipgloss.Left, m.renderHeader(), center, m.renderFooter())
}

func (m Model) renderPanes() string {
	rs := m.paneRects()
	boxes := make([]string, 0, paneCount)
	for p := Pane(0); p < paneCount; p++ {
		r := rs[p]
		if r.w == 0 || r.h == 0 {
			continue
		}
		iw, ih := r.w-borderCells, r.h-borderCells
		var content []string
		switch p {
		case PaneRuns:
			content = m.renderRuns(iw, ih)
		case PaneDetail:
			content = m.renderDetail(iw, ih)
		case PaneTimeline:
			content = m.renderTimeline(iw, ih)
		}
		boxes = append(boxes, box(m.theme, m.paneTitle(p), content, r.w, r.h, m.focus == p))
	}
	if m.layoutKind() == layoutWide && len(boxes) == 3 {
		return lipgloss.JoinHorizontal(lipgloss.Top, boxes[0], lipgloss.JoinVertical(lipgloss.Left, boxes[1], boxes[2]))
	}
	return lipgloss.JoinVertical(lipgloss.Left, boxes...)
}

func (m Model) paneTitle(p Pane) string {
	switch p {
	case PaneRuns:
		title := fmt.Sprintf("Runs %d", len(m.order))
		if len(m.order) != len(m.runs) {
			title = fmt.Sprintf("Runs %d of %d", len(m.order), len(m.runs))
		}
		if m.filter != "" {
			title += " /" + Sanitize(m.filter)
		}
		return title
	case PaneDetail:
		if run, ok := m.selectedRun(); ok {
			return "Detail " + Sanitize(run.ID)
		}
		return "Detail"
	}
	kind := model.KindResumable
	if run, ok := m.selectedRun(); ok {
		kind = run.Kind
	}
	return m.tl.title(kind)
}

func (m Model) renderHeader() string {
	t := m.theme
	attention := 0
	for _, r := range m.runs {
		if needsAttention(r) {
			attention++
		}
	}
	left := t.Title.Render("runwatch") + fmt.Sprintf(" %d runs", len(m.runs))
	if attention > 0 {
		left += " · " + t.Warn.Render(fmt.Sprintf("⚠ %d need attention", attention))
	}
	right := ""
	if m.keys.ReadOnly {
		right = t.ReadOnly.Render(" READ-ONLY ") + " "
	}
	right += t.Dim.Render("? help")
	gap := m.width - visibleWidth(left) - visibleWidth(right)
	if gap < 1 {
		return truncate(left, m.width)
	}
	return left + strings.Repeat(" ", gap) + right
}

func (m Model) renderFooter() string {
	t := m.theme
	now := m.opts.Now()
	mode := m.health.Mode
	if mode == "" {
		mode = "static"
	}
	var health string
	if m.health.Err != "" {
		health = t.Bad.Render("✗ " + mode + " error")
	} else {
		health = t.Good.Render("● ") + mode
	}
	fresh := "no data yet"
	if !m.lastChange.IsZero() {
		fresh = "updated " + model.HumanDuration(now.Sub(m.lastChange)) + " ago"
	}
	hints := fmt.Sprintf("%s pane · / %s · %s quit", m.keys.First(ActNextPane), filterWord(m.focus), m.keys.First(ActQuit))
	line1 := health + t.Dim.Render(" · ") + fresh + t.Dim.Render(" · focus "+m.focus.String())
	if gap := m.width - visibleWidth(line1) - visibleWidth(hints); gap >= 2 {
		line1 += strings.Repeat(" ", gap) + t.Dim.Render(hints)
	}
	var line2 string
	switch {
	case m.inputMode == inputFilter:
		line2 = "filter runs: " + Sanitize(m.input) + "█"
	case m.inputMode == inputSearch:
		line2 = "search timeline: " + Sanitize(m.input) + "█"
	case m.errLine != "":
		line2 = t.Bad.Render("✗ " + m.errLine)
	case m.note != "":
		line2 = t.Dim.Render(m.note)
	}
	return truncate(line1, m.width) + "\n" + truncate(line2, m.width)
}

func filterWord(p Pane) string {
	if p == PaneTimeline {
		return "search"
	}
	return "filter"
}

func (m Model) renderHelp(w, h int) string {
	lines := m.keys.HelpLines()
	inner := h - borderCells
	// On a wide terminal the help goes in two columns, split at a blank line between groups, so it fits
	// without scrolling.
	if len(lines) > inner && w >= 100 {
		split := -1
		for i := len(lines) / 2; i < len(lines); i++ {
			if lines[i] == "" {
				split = i
				break
			}
		}
		if split > 0 && split <= inner && len(lines)-split-1 <= inner {
			colW := (w - borderCells) / 2
			left, right := lines[:split], lines[split+1:]
			merged := make([]string, 0, max(len(left), len(right)))
			for i := 0; i < len(left) || i < len(right); i++ {
				l, r := "", ""
				if i < len(left) {
					l = left[i]
				}
				if i < len(right) {
					r = right[i]
				}
				merged = append(merged, padRight(truncate(l, colW-1), colW)+r)
			}
			lines = merged
		}
	}
	top := clamp(m.helpTop, 0, max(0, len(lines)-inner))
	title := "Help · ? or esc to close"
	if len(lines) > inner {
		title += " · j/k scroll"
	}
	return box(m.theme, title, lines[top:], w, h, true)
}

// box draws a bordered pane with the title set into the top border. The focused pane gets a heavy border
// and a ▌ marker so focus is visible without colour.
func box(t Theme, title string, content []string, w, h int, focused bool) string {
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
	title = truncate(mark+title+" ", max(0, iw-1))
	top := style.Render(b.TopLeft+b.Top) + t.Bold.Render(title) +
		style.Render(strings.Repeat(b.Top, max(0, iw-1-visibleWidth(title)))+b.TopRight)
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
	lines = append(lines, style.Render(b.BottomLeft+strings.Repeat(b.Bottom, iw)+b.BottomRight))
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
