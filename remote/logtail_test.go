package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
