// The bordered box every pane and overlay is drawn in, with its title and scroll marks.

package theme

import (
	"fmt"
	"runwatch/ui/text"
	"strings"

	"charm.land/lipgloss/v2"
)

// Scroll says how many lines a pane has above and below what it shows; box prints it in the border.
type Scroll struct{ Above, Below int }

// Box draws a bordered pane with the title set into the top border and "↑ N more" / "↓ N more" at the
// right of the top and bottom borders. The focused pane gets a heavy border and a ▌ marker so focus is
// visible without colour.
func Box(t Theme, title string, content []string, w, h int, focused bool, sc Scroll) string {
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
	iw := w - BorderCells
	up, down := "", ""
	if sc.Above > 0 {
		up = fmt.Sprintf(" ↑ %d more ", sc.Above)
	}
	if sc.Below > 0 {
		down = fmt.Sprintf(" ↓ %d more ", sc.Below)
	}
	if text.VisibleWidth(up) > iw/3 {
		up = ""
	}
	if text.VisibleWidth(down) > iw-2 {
		down = ""
	}
	title = text.Truncate(mark+title+" ", max(0, iw-1-text.VisibleWidth(up)))
	top := style.Render(b.TopLeft+b.Top) + t.Bold.Render(title) +
		style.Render(strings.Repeat(b.Top, max(0, iw-1-text.VisibleWidth(title)-text.VisibleWidth(up)))) + t.Dim.Render(up) + style.Render(b.TopRight)
	lines := make([]string, 0, h)
	lines = append(lines, top)
	left, right := style.Render(b.Left), style.Render(b.Right)
	blank := left + strings.Repeat(" ", iw) + right
	for i := 0; i < h-BorderCells; i++ {
		if i >= len(content) || content[i] == "" {
			lines = append(lines, blank)
			continue
		}
		lines = append(lines, left+text.PadRight(text.Truncate(content[i], iw), iw)+right)
	}
	lines = append(lines, style.Render(b.BottomLeft+strings.Repeat(b.Bottom, max(0, iw-1-text.VisibleWidth(down))))+
		t.Dim.Render(down)+style.Render(strings.Repeat(b.Bottom, min(1, iw))+b.BottomRight))
	return strings.Join(lines, "\n")
}

// borderCells is what a box's border takes of its width (and of its height): one cell each side.
const BorderCells = 2
