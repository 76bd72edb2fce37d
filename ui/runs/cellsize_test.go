package runs

import (
	"testing"
	"unsafe"
)

// A run's cached row is kept for every run shown, 10,000 and more: it points at the run (app.Runs' value,
// never changed in place) rather than keep a copy of its attention, or of the whole run for its ETA, and its
// widths are 16 bits (issue 35). A field added to it is counted here and in docs/BENCHMARKS.md.
func TestRunCellsStaySmall(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(runCells{}); n > 512 {
		t.Errorf("a run's cached row is %d bytes; at most 512", n)
	}
}
