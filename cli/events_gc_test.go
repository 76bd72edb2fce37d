package cli

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
	"testing"

	"runwatch/heaptest"
	"runwatch/sim"
)

// A host's events for a dashboard collects a handful of times over its first runs, not once every few MiB
// of the ~20 MiB it holds: under GOGC 100 its first 1,000 runs took 25 collections, an eighth of its CPU
// (gcpolicy.Events; issue 35). Counted, not timed: 9 seen.
func TestEventsCollectsAHandfulOfTimes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("generates and reads 1,000 runs")
	}
	heaptest.SkipUnderRace(t) // the detector's own allocations are collections too
	ws := t.TempDir()
	if _, err := sim.GenerateRuns(ws, 1000); err != nil {
		t.Fatal(err)
	}
	// As a dashboard runs it over ssh: linked to its stdin, it says a heartbeat once its first runs are out.
	var stderr bytes.Buffer
	cmd, stdin, stdout := startLinkedEvents(t, []string{"GODEBUG=gctrace=1", "GOGC=", "GOMEMLIMIT="}, &stderr, "--", ws)
	lines := bufio.NewReaderSize(stdout, 1<<20)
	runs := 0
	for {
		line, err := lines.ReadString('\n')
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("events ended before its heartbeat (%d runs): %v\n%s", runs, err, stderr.String())
		}
		if strings.Contains(line, `"type":"heartbeat"`) {
			break
		}
		if strings.Contains(line, `"type":"run-added"`) {
			runs++
		}
	}
	stdin.Close()
	if code := exitCodeOf(t, cmd.Wait()); code != 0 {
		t.Fatalf("events exited %d:\n%s", code, stderr.String())
	}
	if runs != 1000 {
		t.Fatalf("events wrote %d runs before its heartbeat, want 1000", runs)
	}
	n := len(regexp.MustCompile(`(?m)^gc \d+ @`).FindAllIndex(stderr.Bytes(), -1))
	if n > 15 {
		t.Errorf("events over 1,000 runs collected %d times; a handful is enough (at most 15)", n)
	} else {
		t.Logf("events over 1,000 runs: %d collections", n)
	}
}
