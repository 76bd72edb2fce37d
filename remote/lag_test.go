package remote

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/remote/sshtest"
	"runwatch/state/resumable/resumabletest"
)

// A host whose runwatch stops (SIGSTOP: it lags, its connection stays up and no error ever comes) is taken
// as lagging once it has said no heartbeat for LagAfter: its runs are marked stale and it says why, while a
// run removed on another host leaves at once. Before, its runs stayed on screen as if current for as long
// as it lagged (bench/fleet, issue 35).
func TestALaggingHostsRunsAreMarkedStale(t *testing.T) {
	fleet := sshtest.New(t, binDir, "alpha", "beta")
	rootA, rootB := t.TempDir(), t.TempDir()
	resumabletest.MinimalRun(t, rootA, "a-20261201T080000Z")
	resumabletest.MinimalRun(t, rootB, "b-20261201T080000Z")
	gone := resumabletest.MinimalRun(t, rootB, "c-20261201T080000Z")
	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	w := Watch(s, []Root{{Host: "alpha", Path: rootA}, {Host: "beta", Path: rootB}}, Options{})
	defer w.Close()
	c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}}
	c.until(t, "both live", func() bool {
		return len(c.runs) == 3 && c.host("alpha").State == StateLive && c.host("beta").State == StateLive
	})
	bin := filepath.Join(binDir, "runwatch")
	stopped := fleet.Running("alpha", bin)
	if len(stopped) == 0 {
		t.Fatal("no runwatch runs on alpha")
	}
	for _, p := range stopped {
		if err := syscall.Kill(p, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, p := range stopped {
			_ = syscall.Kill(p, syscall.SIGCONT)
		}
	}()
	start := time.Now()
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	c.until(t, "the run removed on beta to leave", func() bool { return len(c.runs) == 2 })
	if c.host("alpha").State != StateLive {
		t.Errorf("alpha was taken as lagging %s after it stopped, before LagAfter (%s)", time.Since(start), LagAfter)
	}
	var stale model.Run
	c.until(t, "alpha's run marked stale", func() bool {
		for _, r := range c.runs {
			if r.Remote.Host == "alpha" && r.Remote.StaleSince != nil {
				stale = r
				return true
			}
		}
		return false
	})
	if took := time.Since(start); took < LagAfter-HeartbeatEvery {
		t.Errorf("alpha marked stale %s after it stopped, well before LagAfter (%s)", took, LagAfter)
	}
	h := c.host("alpha")
	if h.State == StateLive || !strings.Contains(h.Error, "alpha: its runwatch said nothing for 30s") || !strings.Contains(h.Error, "it lags") {
		t.Errorf("alpha's health: %+v", h)
	}
	if b := c.host("beta"); b.State != StateLive {
		t.Errorf("beta's health: %+v", b)
	}
	t.Logf("alpha marked stale after %s: %s", time.Since(start).Round(time.Second), stale.ID)
}
