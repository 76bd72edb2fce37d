package timeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"runwatch/state/runlog"
	"runwatch/ui/app"
)

// readCounter is the real index, counting the reads of lines.
type readCounter struct {
	*runlog.Index
	reads *atomic.Int64
}

func (r readCounter) Lines(from, n int) []string {
	r.reads.Add(1)
	return r.Index.Lines(from, n)
}

// An idle dashboard's tick (an age turning a minute) reads the log only while its index still counts the
// lines: once their numbers are final and shown, the visible lines are the ones drawn, and ticks read none.
func TestTickReadsTheLogOnlyWhileItsLinesAreCounted(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.log")
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "[2026-11-30T11:%02d:%02dZ] step n=%d\n", i/60, i%60, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var reads atomic.Int64
	var ix *runlog.Index
	p := indexedPaneOf(t, path, 120, 12, func(i *runlog.Index) app.LogSource {
		ix = i
		return readCounter{Index: i, reads: &reads}
	})
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if err := ix.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	send(t, p, p.Update(app.TickMsg(now))) // the count is done: the lines get their final numbers
	if p.cursor != 199 || !strings.Contains(p.View(), "n=199") {
		t.Fatalf("cursor %d after the count; the view:\n%s", p.cursor, p.View())
	}
	before := reads.Load()
	for i := range 3 {
		send(t, p, p.Update(app.TickMsg(now.Add(time.Duration(i+1)*time.Minute))))
	}
	if n := reads.Load() - before; n != 0 {
		t.Errorf("3 ticks after the count read the log %d times, want none", n)
	}
	if !strings.Contains(p.View(), "n=199") {
		t.Errorf("the last line is no longer shown:\n%s", p.View())
	}
}
