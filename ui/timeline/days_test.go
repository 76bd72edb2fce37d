package timeline

import (
	"fmt"
	"testing"
)

// The time column's width with `t` is decided over the whole log (issue 36): a log whose entries span two
// days dates every time, at its top, where the lines in view are all of the first day, as at its end; a
// log of one day never does. It was decided per window, so the column widened and narrowed while scrolling.
func TestTimeColumnIsDecidedOverTheWholeLog(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf("[2026-02-15T22:%02d:00Z] step %d", i, i))
	}
	lines = append(lines, "[2026-02-16T00:05:00Z] stage_start stage=S2", "  a continuation line")
	tl := &timeline{src: NewMemSource(lines), absolute: true}
	for _, top := range []int{0, 20, len(lines) - 5} {
		tl.top = top
		tl.readWindow(5)
		if got := tl.TimeWidth(); got != len(absoluteDayStamp) {
			t.Errorf("window at line %d: time column %d cells, want %d (dated)", top, got, len(absoluteDayStamp))
		}
	}
	one := &timeline{src: NewMemSource(lines[:40]), absolute: true}
	one.readWindow(5)
	if got := one.TimeWidth(); got != 8 {
		t.Errorf("a log of one day: time column %d cells, want 8", got)
	}
	// The log grows into a second day: decided again.
	src := NewMemSource(lines[:40])
	grow := &timeline{src: src, absolute: true}
	grow.readWindow(5)
	src.Add(lines[40:]...)
	grow.readWindow(5)
	if got := grow.TimeWidth(); got != len(absoluteDayStamp) {
		t.Errorf("after a second day was appended: time column %d cells", got)
	}
}
