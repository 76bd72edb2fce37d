//go:build linux

package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/watch"
)

// kmsgDeadline bounds one command. Each returns in well under a second; a read of /proc/kmsg never returns
// while the kernel logs nothing, so passing the deadline means it hangs.
const kmsgDeadline = 45 * time.Second

// kmsgRun copies the resumable-c1 run whose stage order the files leave open (so PLAN_PATH is consulted),
// its paths pointed at the copy, into a fresh root.
func kmsgRun(t *testing.T, root, name string) string {
	t.Helper()
	const fixture = "iso26262-mining-20260301T101500Z"
	dir := filepath.Join(root, name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "testdata", "resumable-c1", "reports", fixture))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.env")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.ReplaceAll(string(data), "/home/u/.config/opencode/reports/"+fixture, dir))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// binaryWithin runs the real binary and fails the test if it has not ended by kmsgDeadline (it is killed).
func binaryWithin(t *testing.T, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kmsgDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "runwatch"), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("runwatch %s did not end within %s: it hangs on /proc/kmsg", strings.Join(args, " "), kmsgDeadline)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// Every reader refuses /proc/kmsg, whichever run file or config leads to it, and says so naming the file:
// as root it is readable, says it is a regular file, answers poll (so Go's netpoller parks a read of it
// even with O_NONBLOCK) and a read waits for the kernel's next log line, then consumes it. Each entry point
// a person or a shell reaches runs as the real binary under a deadline, and the dashboard's watcher gives
// its first snapshot.
func TestProcKmsgIsNeverRead(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root may open /proc/kmsg, and only there would a read block: run as root (CI does)")
	}
	if _, err := os.Stat("/proc/kmsg"); err != nil {
		t.Skipf("no /proc/kmsg here: %v", err)
	}
	t.Parallel()
	env := []string{"XDG_CONFIG_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + t.TempDir(), "XDG_CACHE_HOME=" + t.TempDir()}
	bin := runwatchOnPath(t)
	root := filepath.Join(t.TempDir(), "reports")
	link := func(path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(path)
		if err := os.Symlink("/proc/kmsg", path); err != nil {
			t.Fatal(err)
		}
	}
	state := kmsgRun(t, root, "state")
	link(filepath.Join(state, "state.env"))
	checklist := kmsgRun(t, root, "checklist")
	link(filepath.Join(checklist, "checklist.state.env"))
	lock := kmsgRun(t, root, "lock")
	link(filepath.Join(lock, "lock", "active.lock"))
	log := kmsgRun(t, root, "log")
	link(filepath.Join(log, "run.log"))
	set := func(dir, line string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(dir, "state.env"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	plan := kmsgRun(t, root, "plan")
	set(plan, `PLAN_PATH="/proc/kmsg"`)
	lockFile := kmsgRun(t, root, "lockfile")
	set(lockFile, `LOCK_FILE="/proc/kmsg"`)

	code, out := binaryWithin(t, bin, env, "status", root)
	for _, p := range []string{filepath.Join(state, "state.env"), filepath.Join(checklist, "checklist.state.env")} {
		if !strings.Contains(out, p+" is not a regular file on disk (a file of the kernel's procfs (/proc)") {
			t.Errorf("status (exit %d) does not say %s is refused:\n%s", code, p, out)
		}
	}
	_, out = binaryWithin(t, bin, env, "status", "--json", root)
	for _, p := range []string{filepath.Join(lock, "lock", "active.lock"), filepath.Join(log, "run.log"), "/proc/kmsg"} {
		if !strings.Contains(out, p+" is not a regular file on disk") {
			t.Errorf("status --json does not say %s is refused:\n%s", p, out)
		}
	}
	if code, out := binaryWithin(t, bin, env, "events", "--timeout", "2s", root); code != exitEventsTimeout || !strings.Contains(out, "timed out after 2s") {
		t.Errorf("events --timeout 2s: exit %d, want %d (its timeout fires):\n%s", code, exitEventsTimeout, out)
	}
	for _, dir := range []string{state, checklist, lock, log, plan, lockFile} {
		binaryWithin(t, bin, env, "brief", dir)
		binaryWithin(t, bin, env, "step", "--dry-run", dir)
		binaryWithin(t, bin, env, "__complete0", "check", dir, "")
	}
	if _, out := binaryWithin(t, bin, env, "brief", log); !strings.Contains(out, filepath.Join(log, "run.log")+" is not a regular file on disk") {
		t.Errorf("brief does not say the log is refused:\n%s", out)
	}
	if _, out := binaryWithin(t, bin, env, "step", "--dry-run", plan); !strings.Contains(out, "the plan /proc/kmsg is a file of the kernel's procfs") {
		t.Errorf("step --dry-run does not say the plan is refused:\n%s", out)
	}
	if code, out := binaryWithin(t, bin, env, "status", "--config", "/proc/kmsg", root); code != exitUsage || !strings.Contains(out, "config /proc/kmsg: not a regular file on disk") {
		t.Errorf("--config /proc/kmsg: exit %d:\n%s", code, out)
	}
	binaryWithin(t, bin, env, "__complete0", "--config", "/proc/kmsg", "status", "")

	// The dashboard: its watcher's first snapshot holds every run (it showed "0 runs (16 more loading)").
	var runs []model.Run
	within(t, "the watcher's first snapshot", func() {
		w, err := watch.New(watch.Options{Paths: []string{root}})
		if err != nil {
			t.Error(err)
			return
		}
		runs = w.Snapshot()
		w.Close()
	})
	if len(runs) != 6 {
		t.Errorf("the watcher's first snapshot holds %d runs, want 6", len(runs))
	}
}
