//go:build linux

package notify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pidsIn waits for a hook to write its pids (space-separated) to path.
func pidsIn(t *testing.T, path string) []int {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(data), "\n") {
			var pids []int
			for _, f := range strings.Fields(string(data)) {
				pid, err := strconv.Atoi(f)
				if err != nil {
					t.Fatal(err)
				}
				pids = append(pids, pid)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatal("the hook never wrote its pids")
		}
	}
}

// gone waits for each pid to end (the deadline only bounds a process that was never killed).
func gone(t *testing.T, what string, pids []int) {
	t.Helper()
	for _, pid := range pids {
		for deadline := time.Now().Add(30 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("%s: pid %d outlived it", what, pid)
				break
			}
		}
	}
}

// A hook that exits at once leaving a child in the background, or a child that left its process group
// (setsid), has that child ended with it and reported plainly (it was "exec: WaitDelay expired before I/O
// complete", and the child lived on).
func TestAHooksLeftoversAreEndedAndSaid(t *testing.T) {
	// The hook exits only once its child is sleep: the report names each leftover as it is when the hook
	// ends, and a child just forked is still sh (or setsid, before it execs sleep). The hook's Timeout bounds
	// the wait.
	const isSleep = ` until [ "$(cat /proc/$!/comm)" = sleep ]; do sleep 0.01; done`
	for _, c := range []struct{ name, script string }{
		{"background child", `sleep 600 &` + isSleep + `; echo $! > "$0.tmp"; mv "$0.tmp" "$0"`},
		{"setsid child", `setsid sleep 600 &` + isSleep + `; echo $! > "$0.tmp"; mv "$0.tmp" "$0"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pids")
			h := Hook{Template: `sh -c '` + c.script + `' ` + pidFile, Timeout: time.Minute}
			err := h.Run(context.Background(), sampleNotification())
			pids := pidsIn(t, pidFile)
			if err == nil || !strings.Contains(err.Error(), "exited leaving 1 process(es) running ("+strconv.Itoa(pids[0])+" (sleep))") {
				t.Errorf("the hook's leftover is not said plainly: %v", err)
			}
			gone(t, c.name, pids)
		})
	}
}

const hookChildEnv = "RUNWATCH_NOTIFY_HOOK_CHILD"

// TestHookChild is the runwatch of TestAHookEndsWithRunwatch: it runs a hook that never ends.
func TestHookChild(t *testing.T) {
	pidFile := os.Getenv(hookChildEnv)
	if pidFile == "" {
		t.Skip("helper process of TestAHookEndsWithRunwatch")
	}
	h := Hook{Template: `sh -c 'setsid sleep 600 & echo $! $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 600' ` + pidFile, Timeout: time.Hour}
	h.Run(context.Background(), sampleNotification())
}

// A hook, and what it started (a setsid child too), end with runwatch however it ends: SIGHUP (a closed
// terminal) and SIGKILL run none of its code.
func TestAHookEndsWithRunwatch(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pids")
			cmd := exec.Command(os.Args[0], "-test.run=^TestHookChild$")
			cmd.Env = append(os.Environ(), hookChildEnv+"="+pidFile)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pids := pidsIn(t, pidFile)
			cmd.Process.Signal(sig)
			cmd.Wait()
			gone(t, "runwatch's "+sig.String(), pids)
		})
	}
}
