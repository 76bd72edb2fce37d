// What can be read of the timeline from outside the package (the dashboard's tests, which drive it through
// keys and look at where it stands): getters only, so nothing outside changes its state but its messages.

package timeline

import (
	"charm.land/bubbles/v2/textinput"

	"runwatch/state/runlog"
	"runwatch/ui/app"
)

// Editing is whether the search prompt is open.
func (p *Pane) Editing() bool { return p.editing }

// Input is the search prompt.
func (p *Pane) Input() textinput.Model { return p.input }

// Err is why the search ended without a line (context.Canceled when esc stopped it).
func (m *SearchDoneMsg) Err() error { return m.err }

// Right is whether this window of a long line has more of it to its right.
func (lp *longPart) Right() bool { return lp.right }

// Text is the window of the long line as read.
func (lp *longPart) Text() string { return lp.text }

// Absolute is whether times are drawn as clock times rather than ages.
func (tl *timeline) Absolute() bool { return tl.absolute }

// Cursor is the line the cursor is on (of the lines listed: the matching ones when filtered).
func (tl *timeline) Cursor() int { return tl.cursor }

// Filtered is whether only the matching lines are listed (&).
func (tl *timeline) Filtered() bool { return tl.filtered }

// Follow is whether the view keeps to the end of the log as it grows.
func (tl *timeline) Follow() bool { return tl.follow }

// Long is the windows read of lines too long to hold, by line.
func (tl *timeline) Long() map[int]longPart { return tl.long }

// Src is the log source of the run shown, nil before one is open.
func (tl *timeline) Src() app.LogSource { return tl.src }

// Srch is the search state: pattern, the find in flight, its progress.
func (tl *timeline) Srch() *tlSearch { return &tl.srch }

// Width is the pane's inner width the lines were last laid out for.
func (tl *timeline) Width() int { return tl.width }

// Window is the lines read for the screen, from WindowFrom.
func (tl *timeline) Window() []string { return tl.window }

// WindowFrom is the first line Window holds.
func (tl *timeline) WindowFrom() int { return tl.windowFrom }

// Wrap is whether long lines wrap (else they scroll sideways by Xoff).
func (tl *timeline) Wrap() bool { return tl.wrap }

// Xoff is the sideways scroll, in cells, with wrap off.
func (tl *timeline) Xoff() int { return tl.xoff }

// Pattern is the pattern searched for, "" when none.
func (s *tlSearch) Pattern() string { return s.pattern }

// Prog is the progress of the find in flight.
func (s *tlSearch) Prog() *runlog.Progress { return s.prog }

// Running is whether a find is in flight.
func (s *tlSearch) Running() bool { return s.running }
