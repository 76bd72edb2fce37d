package watch

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

func TestOverflowRescansEverything(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	var lose atomicBool
	v := newView(t, Options{Paths: []string{root}, loseEvent: func(fsnotify.Event) bool { return lose.get() }})
	lose.set(true)
	// These changes happen while the kernel queue "overflows": no event for any of them arrives.
	replaceAtomically(t, sp, resumableState(runDir, "S3"))
	other := makeResumableRun(t, filepath.Join(root, "during-overflow-20260301T000000Z"), "S2")
	appendLine(t, filepath.Join(runDir, "run.log"), "[2026-02-15T02:00:00Z] written during overflow\n")
	lose.set(false)
	v.w.injected <- fsnotify.ErrEventOverflow
	v.until("the rescan to find both changes and the new run", func() bool {
		r, _ := v.run(sp)
		n, ok := v.run(other)
		logs := v.logs[filepath.Join(runDir, "run.log")]
		return r.CurrentStage == "S3" && ok && n.CurrentStage == "S2" && len(logs) == 1 &&
			strings.Contains(v.health.Err, "overflow")
	})
}

func TestForcedPollingSeesEveryKindOfChange(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}, Poll: 20 * time.Millisecond})
	if v.w.Health().Mode != "polling 20ms" || v.w.Health().Watches != 0 {
		t.Fatalf("health %+v, want polling 20ms with no inotify watches", v.w.Health())
	}
	replaceAtomically(t, sp, resumableState(runDir, "S2"))
	v.until("the replace, by polling", func() bool { r, _ := v.run(sp); return r.CurrentStage == "S2" })

	lock := filepath.Join(runDir, "lock", "active.lock")
	writeFile(t, lock, lockPayload())
	v.until("the lock, by polling", func() bool { r, _ := v.run(sp); return len(r.Locks) == 1 })

	logPath := filepath.Join(runDir, "run.log")
	appendLine(t, logPath, "[2026-02-15T02:00:00Z] polled line\n")
	v.until("the log line, by polling", func() bool { return len(v.logs[logPath]) == 1 })

	other := makeResumableRun(t, filepath.Join(root, "polled-20260301T000000Z"), "S3")
	v.until("a new run, by polling", func() bool { r, ok := v.run(other); return ok && r.CurrentStage == "S3" })

	if err := os.RemoveAll(runDir); err != nil {
		t.Fatal(err)
	}
	v.until("the removal, by polling", func() bool { _, ok := v.run(sp); return !ok })
}

func TestWatchLimitFallsBackToPolling(t *testing.T) {
	base := t.TempDir()
	var sps []string
	for _, name := range []string{"a-20260301T000000Z", "b-20260301T000000Z", "c-20260301T000000Z"} {
		sps = append(sps, makeResumableRun(t, filepath.Join(base, "reports", name), "S1"))
	}
	v := newView(t, Options{Paths: []string{base}, watchLimit: 2, fallbackPoll: 20 * time.Millisecond})
	h := v.w.Health()
	if h.Mode != "mixed" || h.Watches != 2 || !strings.Contains(h.Err, "watch limit") {
		t.Fatalf("health %+v, want mixed with 2 watches and the limit named", h)
	}
	// Every run is still followed, whether its folder got a watch or not.
	for _, sp := range sps {
		replaceAtomically(t, sp, resumableState(filepath.Dir(sp), "S2"))
	}
	v.until("every run at S2", func() bool {
		for _, sp := range sps {
			if r, _ := v.run(sp); r.CurrentStage != "S2" {
				return false
			}
		}
		return true
	})
}

func TestNetworkFilesystemIsPolled(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	nfs := func(dir string) (string, bool) { return "nfs", strings.HasPrefix(dir, runDir) }
	v := newView(t, Options{Paths: []string{root}, remote: nfs, fallbackPoll: 20 * time.Millisecond})
	if h := v.w.Health(); h.Mode != "mixed" || !strings.Contains(h.Err, "nfs") {
		t.Fatalf("health %+v, want mixed naming nfs", h)
	}
	replaceAtomically(t, sp, resumableState(runDir, "S2"))
	v.until("the change on the network folder", func() bool { r, _ := v.run(sp); return r.CurrentStage == "S2" })
}

func TestReconcileScanFindsWhatInotifyMissed(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	var lose atomicBool
	lose.set(true)
	v := newView(t, Options{Paths: []string{root}, reconcile: 30 * time.Millisecond,
		loseEvent: func(fsnotify.Event) bool { return lose.get() }})
	// Every inotify event is lost from the start: only the stat comparison can see these.
	replaceAtomically(t, sp, resumableState(runDir, "S2"))
	v.until("the reconcile scan to find the replace", func() bool {
		r, _ := v.run(sp)
		return r.CurrentStage == "S2"
	})
	writeFile(t, filepath.Join(runDir, "lock", "active.lock"), lockPayload())
	v.until("the reconcile scan to find the lock", func() bool {
		r, _ := v.run(sp)
		return len(r.Locks) == 1
	})
	// An in-place rewrite (same inode) after the baseline was taken.
	if err := os.WriteFile(sp, []byte(resumableState(runDir, "S3")), 0o644); err != nil {
		t.Fatal(err)
	}
	v.until("the reconcile scan to find the rewrite", func() bool {
		r, _ := v.run(sp)
		return r.CurrentStage == "S3"
	})
}

func TestInotifyInstanceLimitPollsEverything(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}, inotifyErr: syscall.EMFILE, fallbackPoll: 20 * time.Millisecond})
	if h := v.w.Health(); h.Mode != "polling 20ms" || !strings.Contains(h.Err, "inotify unavailable") {
		t.Fatalf("health %+v, want polling with the reason", h)
	}
	replaceAtomically(t, sp, resumableState(runDir, "S2"))
	v.until("the change, by polling", func() bool { r, _ := v.run(sp); return r.CurrentStage == "S2" })
}

// TestRealQueueOverflow makes the kernel drop events: while the watcher is not reading, more events are
// queued than fs.inotify.max_queued_events allows. The change made in that flood must still arrive.
func TestRealQueueOverflow(t *testing.T) {
	if testing.Short() {
		t.Skip("creates more files than the inotify queue holds (~10 s here)")
	}
	limit := readIntFile(t, "/proc/sys/fs/inotify/max_queued_events")
	if limit <= 0 || limit > 100_000 {
		t.Skipf("max_queued_events is %d: too many files to create for an overflow", limit)
	}
	root, runDir, sp := reportsRoot(t)
	flood := filepath.Join(root, "flood")
	if err := os.Mkdir(flood, 0o755); err != nil {
		t.Fatal(err)
	}
	v := newView(t, Options{Paths: []string{root}})
	resume := make(chan struct{})
	v.w.pause <- resume
	for i := range limit + 1000 {
		f, err := os.Create(filepath.Join(flood, strconv.Itoa(i)))
		if err != nil {
			close(resume)
			t.Fatal(err)
		}
		f.Close()
	}
	replaceAtomically(t, sp, resumableState(runDir, "S3"))
	close(resume)
	v.until("the overflow reported and the change found by the rescan", func() bool {
		r, _ := v.run(sp)
		return r.CurrentStage == "S3" && strings.Contains(v.health.Err, "overflow")
	})
}

func readIntFile(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// TestReconcileBacksOffWhileItFindsNothing: the reconcile interval doubles after each scan that found
// nothing, up to reconcileStretch times the base, and is back at the base after a scan that finds what
// inotify lost, and after an overflow. At a fixed interval the scan was a third of an idle dashboard's CPU.
func TestReconcileBacksOffWhileItFindsNothing(t *testing.T) {
	const base = 10 * time.Millisecond
	root, runDir, sp := reportsRoot(t)
	// Written before watching began: the first scan has nothing to report (it reports a file modified since).
	hourAgo := time.Now().Add(-time.Hour)
	if err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, hourAgo, hourAgo)
	}); err != nil {
		t.Fatal(err)
	}
	var lose atomicBool
	armed, stop := make(chan time.Duration), make(chan struct{})
	v := newView(t, Options{Paths: []string{root}, reconcile: base,
		loseEvent: func(fsnotify.Event) bool { return lose.get() },
		reconcileArmed: func(d time.Duration) {
			select {
			case armed <- d:
			case <-stop:
			}
		}})
	t.Cleanup(func() { close(stop) }) // before the watcher's Close, which waits for the loop
	next := func() time.Duration {
		t.Helper()
		select {
		case d := <-armed:
			return d
		case <-time.After(waitLimit):
			t.Fatal("the reconcile scan was not armed again")
			return 0
		}
	}
	// The interval each scan is armed for, until it has reached its cap twice (cap ≥ base: the first arm).
	backOff := func() {
		t.Helper()
		want, capped := base, 0
		for capped < 2 {
			d := next()
			if d != want {
				t.Fatalf("the reconcile scan was armed for %s, want %s (base %s, doubling to at most %d×)",
					d, want, base, reconcileStretch)
			}
			if d == reconcileStretch*base {
				capped++
			}
			want = min(2*d, reconcileStretch*base)
		}
	}
	backOff()
	// An event lost: the next scan finds the change, and the one after is armed for the base again.
	lose.set(true)
	replaceAtomically(t, sp, resumableState(runDir, "S2"))
	deadline := time.Now().Add(waitLimit)
	for d := next(); d != base; d = next() {
		if d != reconcileStretch*base || time.Now().After(deadline) {
			t.Fatalf("armed for %s, not %s, since the lost change", d, base)
		}
	}
	lose.set(false)
	v.until("the reconcile scan to find the replace", func() bool { r, _ := v.run(sp); return r.CurrentStage == "S2" })
	// Nothing found since (the base arm above may have been the temporary file's scan: find the cap again).
	for d := next(); d != reconcileStretch*base; d = next() {
		if time.Now().After(deadline) {
			t.Fatalf("armed for %s, never %s again", d, reconcileStretch*base)
		}
	}
	// An overflow puts it back at the base at once, and it backs off again from there.
	for sent := false; !sent; {
		select {
		case v.w.injected <- fsnotify.ErrEventOverflow:
			sent = true
		case d := <-armed: // the loop arms the next scan before it reads the overflow
			if d != reconcileStretch*base {
				t.Fatalf("armed for %s before the overflow, want %s", d, reconcileStretch*base)
			}
		}
	}
	backOff()
}
