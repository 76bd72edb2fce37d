// Package journaltest holds the journal's lock from another process, for the tests of what waits on it.
package journaltest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// HoldWithFlock makes a real `flock PATH sleep 600` hold path's lock, returns once /proc/locks lists it,
// and returns its pid (the one a refusal must name) and the way to let go (the whole group: sleep inherits
// the lock). The test is skipped where flock(1) (util-linux) is not installed.
func HoldWithFlock(t testing.TB, path string) (pid int, release func()) {
	t.Helper()
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1) here (util-linux)")
	}
	holder := exec.Command("flock", path, "sleep", "600")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	release = func() {
		syscall.Kill(-holder.Process.Pid, syscall.SIGKILL)
		holder.Wait()
	}
	t.Cleanup(release)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if locks, _ := os.ReadFile("/proc/locks"); strings.Contains(string(locks), fmt.Sprintf(" %d ", holder.Process.Pid)) {
			return holder.Process.Pid, release
		}
		if time.Now().After(deadline) {
			t.Fatal("flock(1) never took the lock")
		}
	}
}
