// What can be read of the timeline from outside the package (the dashboard's tests, which drive it through
// keys and look at where it stands): getters only, so nothing outside changes its state but its messages.

package timeline

import (
	"charm.land/bubbles/v2/textinput"

	"runwatch/state/runlog"
	"runwatch/ui/app"
)

// Editing is whether the search prompt is open.
func (x *Pane) Editing() bool { return x.editing }

// Input is the search prompt.
func (x *Pane) Input() textinput.Model { return x.input }

// Err is why the search ended without a line (context.Canceled when esc stopped it).
func (x *SearchDoneMsg) Err() error { return x.err }

// Right is whether this window of a long line has more of it to its right.
func (x *longPart) Right() bool { return x.right }

// Text is the window of the long line as read.
func (x *longPart) Text() string { return x.text }

// Absolute is whether times are drawn as clock times rather than ages.
func (x *timeline) Absolute() bool { return x.absolute }

// Cursor is the line the cursor is on (of the lines listed: the matching ones when filtered).
func (x *timeline) Cursor() int { return x.cursor }

// Filtered is whether only the matching lines are listed (&).
func (x *timeline) Filtered() bool { return x.filtered }

// Follow is whether the view keeps to the end of the log as it grows.
func (x *timeline) Follow() bool { return x.follow }

// Long is the windows read of lines too long to hold, by line.
func (x *timeline) Long() map[int]longPart { return x.long }

// Src is the log source of the run shown, nil before one is open.
func (x *timeline) Src() app.LogSource { return x.src }

// Srch is the search state: pattern, the find in flight, its progress.
func (x *timeline) Srch() *tlSearch { return &x.srch }

// Width is the pane's inner width the lines were last laid out for.
func (x *timeline) Width() int { return x.width }

// Window is the lines read for the screen, from WindowFrom.
func (x *timeline) Window() []string { return x.window }

// WindowFrom is the first line Window holds.
func (x *timeline) WindowFrom() int { return x.windowFrom }

// Wrap is whether long lines wrap (else they scroll sideways by Xoff).
func (x *timeline) Wrap() bool { return x.wrap }

// Xoff is the sideways scroll, in cells, with wrap off.
func (x *timeline) Xoff() int { return x.xoff }

// Pattern is the pattern searched for, "" when none.
func (x *tlSearch) Pattern() string { return x.pattern }

// Prog is the progress of the find in flight.
func (x *tlSearch) Prog() *runlog.Progress { return x.prog }

// Running is whether a find is in flight.
func (x *tlSearch) Running() bool { return x.running }
