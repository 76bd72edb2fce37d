package cli

import (
	"bytes"
	"io"
	"regexp"
	"testing"

	"runwatch/heaptest"
	"runwatch/sim"
)

// status lets the heap grow by what its workload needs between collections, not by what little is live: on
// issue 35's workload (1,000 resumable runs with 400-line logs and 200 jonggrang features) GOGC 100 beside a
// live heap of a few MiB collected 36 to 215 times, a fifth of status's time. Counted, not timed: at most a
// few dozen (7 or 8 seen). The bytes this lets the heap hold are bounded by status.TestStatusHoldsFewBytesPerRun and
// bench/scale's RSS.
func TestStatusCollectsAHandfulOfTimes(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and reads 1,200 runs")
	}
	heaptest.SkipUnderRace(t) // the detector's own allocations are collections too
	ws := t.TempDir()
	if _, err := sim.GenerateShaped(ws, 200, 1000, sim.Shape{LogLines: 400}); err != nil {
		t.Fatal(err)
	}
	// In a process of its own, counted by the runtime's own trace: in this one, whatever else the test
	// binary still runs (a leftover goroutine of an earlier test) collected too, and was counted as status's
	// (41 once in a full run of the package).
	var stderr bytes.Buffer
	cmd := helperProcess(t, "status", "--json", ws)
	cmd.Env = append(cmd.Env, "GODEBUG=gctrace=1", "GOGC=", "GOMEMLIMIT=")
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if code := exitCodeOf(t, cmd.Run()); code > 1 {
		t.Fatalf("status exited %d:\n%s", code, stderr.String())
	}
	n := len(regexp.MustCompile(`(?m)^gc \d+ @`).FindAllIndex(stderr.Bytes(), -1))
	if n > 30 {
		t.Errorf("status over 1,200 runs collected %d times; a handful is enough (at most 30)", n)
	} else {
		t.Logf("status over 1,200 runs: %d collections", n)
	}
}
