package notify

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHookTimeoutKillsItsGrandchildren: a hook that starts a sleeping child and waits for it is killed at its
// timeout with the child: the whole process group goes.
func TestHookTimeoutKillsItsGrandchildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild")
	n := sampleNotification()
	// The timeout only has to outlast the shell's start; a machine too loaded for that gets a longer one.
	for timeout := 500 * time.Millisecond; ; timeout *= 2 {
		h := Hook{Template: `sh -c 'sleep 300 & echo $! > "$0"; wait' ` + pidFile, Timeout: timeout}
		err := h.Run(context.Background(), n)
		if err == nil || !strings.Contains(err.Error(), "killed after") {
			t.Fatalf("the hook was not killed at its timeout: %v", err)
		}
		if _, err := os.Stat(pidFile); err == nil || timeout > time.Minute {
			break
		}
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	// SIGKILL is delivered at once, but the kernel ends the process a moment later: wait for it (the deadline
	// only bounds a process that was never signalled).
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the hook's child %d outlived the hook's timeout", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive is false once pid is gone or a zombie (dead, not yet reaped by whoever adopted it).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}
