package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/sim"
	"runwatch/state"
	"runwatch/state/runlog"
)

// TestSimulatedWritersLoseNothing runs both conventions' simulated writers (non-atomic js-yaml manifests,
// agent locks, env files via tmp+rename, run locks, run.log appends, runs created and deleted) against a
// watcher, then checks that the watcher's model equals a fresh read of every run on disk.
func TestSimulatedWritersLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the simulator for a few seconds")
	}
	ws, err := sim.NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v := newView(t, Options{Paths: ws.Paths()})
	logStart := map[string]int64{} // where the watcher starts following each log of the snapshot
	for _, r := range v.w.Snapshot() {
		if r.Log != nil {
			logStart[r.Log.Path] = r.Log.SizeBytes
		}
	}
	s := sim.NewSimulator(ws, 200)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitLimit)
	for s.Steps() < 150 && time.Now().Before(deadline) {
		select {
		case u := <-v.w.Updates():
			v.apply(u)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if s.Steps() < 20 {
		t.Fatalf("the simulator made only %d writes", s.Steps())
	}

	// Disk is still now: the watcher must converge on exactly what a fresh scan and read gives.
	want := map[string]string{}
	locs, err := state.Discover(ws.Paths(), 0)
	if err != nil {
		t.Fatal(err)
	}
	env := state.NewEnv(0)
	for _, loc := range locs {
		want[loc.StatePath] = digest(state.Load(loc, env))
	}
	v.until("the watcher's runs to equal a fresh read of the disk", func() bool {
		if len(v.runs) != len(want) {
			return false
		}
		for sp, d := range want {
			r, ok := v.runs[sp]
			if !ok || digest(r) != d {
				return false
			}
		}
		return true
	})
	// Every log line written while watching arrives once, in order, with its continuation lines. The last
	// appends may still be on their way when the runs already agree (a run's digest holds the log size, not
	// the entries): wait for the followed logs to converge too, and report the last difference if they never do.
	checked := 0
	lastDiff := ""
	logsMatch := func() bool {
		checked = 0
		for path, got := range v.logs {
			data, err := os.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				continue // a finished generation the simulator deleted
			}
			if err != nil {
				t.Fatal(err)
			}
			start := logStart[path]
			wantEntries, rest := runlog.ParseEntries(data[start:], start)
			if len(rest) > 0 {
				t.Fatalf("%s ends in a partial line", path)
			}
			if len(got) > len(wantEntries) {
				t.Fatalf("%s: watcher saw %d entries, the file has only %d after offset %d", path, len(got), len(wantEntries), start)
			}
			for i := range got {
				if got[i].Message != wantEntries[i].Message {
					t.Fatalf("%s entry %d: got %q, want %q", path, i, got[i].Message, wantEntries[i].Message)
				}
				if len(got[i].Continuation) != len(wantEntries[i].Continuation) {
					// Continuation lines of the last entry may still be arriving.
					lastDiff = fmt.Sprintf("%s entry %d: %d continuation lines, the file has %d", path, i, len(got[i].Continuation), len(wantEntries[i].Continuation))
					return false
				}
			}
			if len(got) != len(wantEntries) {
				lastDiff = fmt.Sprintf("%s: watcher saw %d entries, the file has %d after offset %d", path, len(got), len(wantEntries), start)
				return false
			}
			checked += len(got)
		}
		return true
	}
	v.untilExplained("the followed logs to equal the files", logsMatch, func() string { return "last difference: " + lastDiff })
	if checked == 0 {
		t.Fatal("no log entry was followed: the simulator's resumable run wrote none?")
	}
	t.Logf("%d simulated writes, %d updates, %d runs, %d log entries checked", s.Steps(), v.updates, len(want), checked)
}

// digest is what a person sees of a run; time-dependent judgements (lock age) are left out.
func digest(r model.Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %q %d/%d", r.Status, r.RawStatus, r.CurrentStage, r.Progress.Done, r.Progress.Total)
	for _, s := range r.Stages {
		fmt.Fprintf(&b, " %s=%s", s.Key, s.Status)
	}
	var locks []string
	for _, l := range r.Locks {
		locks = append(locks, l.Path+":"+string(l.Verdict))
	}
	sort.Strings(locks)
	fmt.Fprintf(&b, " locks=%v", locks)
	var probs []string
	for _, p := range r.Problems {
		probs = append(probs, p.Code)
	}
	sort.Strings(probs)
	fmt.Fprintf(&b, " problems=%v", probs)
	if r.Log != nil {
		fmt.Fprintf(&b, " log=%d", r.Log.SizeBytes)
	}
	return b.String()
}
