package remote

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/remote/sshtest"
	"runwatch/state/resumable/resumabletest"
)

// A host that comes back after an action went through its ControlMaster is shown live again, even when it
// has nothing new to say (its health reached no one when the batch had no runs in it).
func TestHostShownLiveAgainAfterAnActionAndARestart(t *testing.T) {
	fleet := sshtest.New(t, binDir, "alpha", "beta")
	rootA, rootB := t.TempDir(), t.TempDir()
	resumabletest.MinimalRun(t, rootA, "a-20261201T080000Z")
	resumabletest.MinimalRun(t, rootB, "b-20261201T080000Z")
	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	w := Watch(s, []Root{{Host: "alpha", Path: rootA}, {Host: "beta", Path: rootB}}, Options{})
	defer w.Close()
	c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}}
	c.until(t, "both", func() bool { return c.host("alpha").State == StateLive && c.host("beta").State == StateLive })
	if _, _, code, err := s.Run(context.Background(), Root{Host: "alpha", Path: rootA}, "status", "--json", rootA); err != nil || code != 0 {
		t.Fatal(code, err)
	}
	fleet.Kill("beta")
	c.until(t, "beta down", func() bool { return c.host("beta").State == StateReconnecting })
	time.Sleep(3 * time.Second)
	fleet.Start("beta")
	start := time.Now()
	c.until(t, "beta back", func() bool { return c.host("beta").State == StateLive })
	t.Logf("back after %s", time.Since(start))
}

// A host that stays down sends its runs once, marked stale, not again with each try to reconnect: every try
// sent every run the host had shown, and a dashboard over 4 hosts of 1,000 runs, one down, took each of them
// in again (what that cost, measured by bench/fleet, is in docs/BENCHMARKS.md's fleet section).
func TestADownHostSendsItsStaleRunsOnce(t *testing.T) {
	fleet := sshtest.New(t, binDir, "alpha")
	root := t.TempDir()
	resumabletest.MinimalRun(t, root, "a-20261201T080000Z")
	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	w := Watch(s, []Root{{Host: "alpha", Path: root}}, Options{Backoff: 50 * time.Millisecond})
	defer w.Close()
	c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}}
	c.until(t, "alpha live", func() bool { return len(c.runs) == 1 && c.host("alpha").State == StateLive })
	fleet.Kill("alpha")
	sent, tries := 0, map[time.Time]bool{}
	deadline := time.After(4 * time.Minute)
	for len(tries) < 4 {
		select {
		case u := <-w.Updates():
			sent += len(u.Changed)
			for _, h := range u.Hosts {
				if h.Host == "alpha" && h.State == StateReconnecting && h.RetryAt != nil {
					tries[*h.RetryAt] = true
				}
			}
		case <-deadline:
			t.Fatalf("alpha tried %d times in 4 minutes", len(tries))
		}
	}
	if sent != 1 {
		t.Errorf("over %d tries to reconnect the down host's one run was sent %d times, want once (marked stale)", len(tries), sent)
	}
}
