package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/remote/sshtest"
	"runwatch/state/resumable/resumabletest"
)

// The log's history, fetched from the host, and the entries its stream appends afterwards name the same
// file offsets: a timeline merges the two by offset without a line twice or a gap.
func TestLogTailAndTheStreamAgreeOnOffsets(t *testing.T) {
	fleet := sshtest.New(t, binDir, "alpha")
	root := t.TempDir()
	dir := resumabletest.MinimalRun(t, root, "irm-tail-20261201T080000Z")
	logPath := filepath.Join(dir, "run.log")
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "[2026-12-01T08:00:30Z] stage_start stage=S1\n  with a continuation line")
	f.Close()

	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	r := Root{Host: "alpha", Path: root}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tail, err := s.FetchLogTail(ctx, r, logPath, 100)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(logPath)
	if len(tail.Entries) != 2 || tail.Entries[0].Offset != 0 || tail.Entries[0].Message != "run_bootstrap mode=kickoff-new" ||
		tail.Entries[1].Event != "stage_start" || len(tail.Entries[1].Continuation) != 1 || tail.Size != fi.Size() {
		t.Fatalf("tail: %+v (file size %d)", tail, fi.Size())
	}
	if _, err := s.FetchLogTail(ctx, r, filepath.Join(dir, "absent.log"), 100); err == nil {
		t.Error("a log that does not exist gave a tail")
	}

	w := Watch(s, []Root{r}, Options{Backoff: 100 * time.Millisecond})
	defer w.Close()
	c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}, entries: map[string][]model.LogEntry{}}
	c.until(t, "alpha live", func() bool { return c.host("alpha").State == StateLive && len(c.runs) == 1 })
	f, _ = os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintln(f, "[2026-12-01T08:01:00Z] stage_start stage=S2")
	f.Close()
	key := "ssh://alpha" + logPath
	c.until(t, "the appended entry", func() bool { return len(c.entries[key]) >= 1 })
	if got := c.entries[key][0]; got.Offset != tail.Size || got.Message != "stage_start stage=S2" {
		t.Fatalf("streamed entry %+v, want offset %d (where the tail ended)", got, tail.Size)
	}
}

// A run on alpha whose lock names beta is judged here on beta, and judged again on a timer: the holder
// exiting on beta changes nothing alpha would send, yet the run turns from running to stalled here.
func TestWatchJudgesAThirdMachinesLockAgainOnATimer(t *testing.T) {
	alphaName, betaName := "alpha", "beta" // each calls itself by the name it is reached as
	fleet := sshtest.NewNamed(t, binDir, map[string]string{"alpha": alphaName, "beta": betaName}, "alpha", "beta")
	rootA, rootB := t.TempDir(), t.TempDir()
	dir := resumabletest.MinimalRun(t, rootA, "irm-shared-20261201T080000Z")

	pid := fleet.Holder("beta")
	resumabletest.WriteEnvLock(t, filepath.Join(dir, "run.lock"), pid, betaName, time.Now())

	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	roots := []Root{{Host: "alpha", Path: rootA}, {Host: "beta", Path: rootB}}
	w := Watch(s, roots, Options{Backoff: 100 * time.Millisecond, Elsewhere: NewElsewhere(s, roots), JudgeEvery: 200 * time.Millisecond})
	defer w.Close()
	c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}}
	key := "ssh://alpha" + filepath.Join(dir, "state.env")
	lockOf := func() model.Lock {
		if r := c.runs[key]; len(r.Locks) == 1 {
			return r.Locks[0]
		}
		return model.Lock{}
	}
	c.until(t, "the lock judged live on beta", func() bool {
		l := lockOf()
		return l.Verdict == model.VerdictLive && l.JudgedOn == "beta" && c.runs[key].Status == model.StatusRunning
	})
	fleet.On("beta", fmt.Sprintf("kill %d", pid))
	c.until(t, "the lock judged stale on beta", func() bool {
		l := lockOf()
		return l.Verdict == model.VerdictStale && l.JudgedOn == "beta" && c.runs[key].Status == model.StatusStalled
	})
}

// A run on alpha whose lock names the machine runwatch runs on is judged by this machine's own process
// table: alpha's runwatch can only call it unknown.
func TestWatchJudgesALockNamingThisMachineHere(t *testing.T) {
	here, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	fleet := sshtest.NewNamed(t, binDir, map[string]string{"alpha": fmt.Sprintf("alpha-box-%d", os.Getpid())}, "alpha")
	root := t.TempDir()
	liveDir := resumabletest.MinimalRun(t, root, "irm-held-here-20261201T080000Z")
	deadDir := resumabletest.MinimalRun(t, root, "irm-dead-here-20261201T080000Z")
	resumabletest.WriteEnvLock(t, filepath.Join(liveDir, "run.lock"), os.Getpid(), here, time.Now())
	resumabletest.WriteEnvLock(t, filepath.Join(deadDir, "run.lock"), resumabletest.DeadPID(t), here, time.Now())

	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	roots := []Root{{Host: "alpha", Path: root}}
	w := Watch(s, roots, Options{Backoff: 100 * time.Millisecond, Elsewhere: NewElsewhere(s, roots), JudgeEvery: 200 * time.Millisecond})
	defer w.Close()
	c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}}
	lockOf := func(dir string) model.Lock {
		if r := c.runs["ssh://alpha"+filepath.Join(dir, "state.env")]; len(r.Locks) == 1 {
			return r.Locks[0]
		}
		return model.Lock{}
	}
	c.until(t, "both locks judged on this machine", func() bool {
		live, dead := lockOf(liveDir), lockOf(deadDir)
		return live.Verdict == model.VerdictLive && live.JudgedOn == ThisMachine &&
			dead.Verdict == model.VerdictStale && dead.JudgedOn == ThisMachine &&
			strings.HasPrefix(dead.Reasons[0], "judged on this machine: ")
	})
}
