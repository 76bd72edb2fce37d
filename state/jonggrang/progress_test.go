package jonggrang

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"runwatch/heaptest"
	"runwatch/model"
)

// A run keeps the last lines of its progress.txt, not the 64 KiB window they were read from: the dashboard
// holds every run it shows (issue 35).
func TestProgressTailKeepsOnlyItsLines(t *testing.T) {
	p, dir := lockProject(t)
	progress := filepath.Join(dir, "progress.txt")
	// The live heap holding a score of runs read from each file, so that what else the heap holds at one
	// moment or the next washes out.
	const n = 20
	held := func(content string) (int64, []model.Run) {
		p.write(progress, content)
		quickLoader.load(dir, realEnv()) // the caches of a first read are not the runs'
		runs := make([]model.Run, 0, n)
		before := heaptest.Now()
		for range n {
			runs = append(runs, quickLoader.load(dir, realEnv()))
		}
		after := heaptest.Now()
		return (int64(after.Live) - int64(before.Live)) / n, runs
	}
	var big strings.Builder
	for big.Len() < 2*maxProgressWindow {
		big.WriteString("a line of progress that nobody will read again\n")
	}
	big.WriteString("last words\n")
	small, few := held(strings.Repeat("a line of progress that nobody will read again\n", 30) + "last words\n")
	large, runs := held(big.String())
	tail := runs[0].Jonggrang.ProgressTail
	if len(tail) != progressTailLines || tail[len(tail)-1] != "last words" {
		t.Fatalf("progress tail: %d lines, last %q", len(tail), tail[len(tail)-1])
	}
	if large-small > 8<<10 {
		t.Errorf("a run with a long progress.txt holds %d bytes more than one with 31 lines; its tail is ~1 KiB", large-small)
	}
	runtime.KeepAlive(few)
	runtime.KeepAlive(runs)
}
