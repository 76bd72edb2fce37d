// A scrolled list of lines for the overlays, moved by the keymap's own scroll keys.

package overlay

import (
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
	"strings"

	"charm.land/bubbles/v2/viewport"
)

// scrollView is a bubbles viewport over bounded text (a brief, a message, a diff, the help), moved by the
// dashboard's own keymap so remapped keys scroll it too. Lines are wrapped here rather than with the
// viewport's soft wrap, so the "↑ N more / ↓ N more" counts are exact.
type scrollView struct {
	vp    viewport.Model
	src   []string
	wrap  bool
	width int
}

func newScrollView(lines []string, wrap bool) scrollView {
	vp := viewport.New()
	vp.FillHeight = false
	return scrollView{vp: vp, src: lines, wrap: wrap}
}

func (s *scrollView) SetSize(w, h int) {
	s.width = w
	s.vp.SetWidth(max(1, w))
	s.vp.SetHeight(max(1, h))
	s.setLines(s.src)
}

func (s *scrollView) setLines(lines []string) {
	s.src = lines
	if !s.wrap {
		s.vp.SetContentLines(append([]string(nil), lines...))
		return
	}
	var out []string
	for _, l := range lines {
		out = append(out, text.WrapText(l, max(1, s.width))...)
	}
	s.vp.SetContentLines(out)
}

// key moves the view for one of the keymap's movement actions and reports whether it was one.
func (s *scrollView) key(act string) bool {
	switch act {
	case keys.ActUp:
		s.vp.ScrollUp(1)
	case keys.ActDown:
		s.vp.ScrollDown(1)
	case keys.ActPageUp:
		s.vp.HalfPageUp()
	case keys.ActPageDown:
		s.vp.HalfPageDown()
	case keys.ActTop:
		s.vp.GotoTop()
	case keys.ActBottom:
		s.vp.GotoBottom()
	default:
		return false
	}
	return true
}

func (s *scrollView) lines() []string {
	v := s.vp.View()
	if v == "" {
		return nil
	}
	return strings.Split(v, "\n")
}

func (s *scrollView) scroll() theme.Scroll {
	top := s.vp.YOffset()
	return theme.Scroll{Above: top, Below: max(0, s.vp.TotalLineCount()-top-s.vp.Height())}
}

func (s *scrollView) total() int { return s.vp.TotalLineCount() }

// scrolls reports whether there is more than the view shows.
func (s *scrollView) scrolls() bool { return s.vp.TotalLineCount() > s.vp.Height() }
