package remote

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"runwatch/model"
)

// A host's lines are read into one buffer, not a new one each: the decoder copies what it keeps, and a new
// buffer a line was a third of what a dashboard allocated while a fleet's first runs came in (issue 35).
func TestStreamReadsItsLinesIntoOneBuffer(t *testing.T) { // not parallel: it counts the process's allocations
	const lines, pad = 200, 64 << 10
	var in strings.Builder
	for i := range lines {
		// The pad is a key the decoder reads past without keeping anything of it.
		fmt.Fprintf(&in, `{"protocol":%d,"type":"run-added","pad":"%s","run":{"id":"r%d","state_path":"/r/%d/state.env"}}`+"\n",
			ProtocolVersion, strings.Repeat("x", pad), i, i)
	}
	w := &Watcher{updates: make(chan Update, lines+8), health: map[string]HostHealth{}}
	c := connection{label: "h", root: Root{Host: "h", Path: "/r"}, paths: []string{"/r"}, roots: []Root{{Host: "h", Path: "/r"}}}
	lag := newLagWatch(time.Hour, func() {})
	defer lag.stop()
	known := map[string]model.Run{}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := w.read(context.Background(), c, strings.NewReader(in.String()), known, true, lag); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if len(known) != lines {
		t.Fatalf("%d runs read, want %d", len(known), lines)
	}
	// A buffer a line is at least lines × pad bytes (12.8 MB); the decoded runs and the reader's own buffer
	// are far less.
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d KiB allocated", got>>10)
	if got > lines*pad/4 {
		t.Errorf("reading %d lines of %d KiB allocated %d KiB, want at most %d KiB", lines, pad>>10, got>>10, lines*pad/4>>10)
	}
}
