package procinfo

import (
	"os"
	"strings"
	"testing"
)

func TestStartTicksHandlesParensInCommandName(t *testing.T) {
	stat := []byte("123 (my (odd) cmd) S 1 123 123 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 98765 1000 10")
	got, ok := startTicks(stat)
	if !ok || got != 98765 {
		t.Fatalf("startTicks = %d, %v; want 98765", got, ok)
	}
	if _, ok := startTicks([]byte("garbage")); ok {
		t.Fatal("garbage parsed")
	}
}

func TestKernelThreadDetected(t *testing.T) {
	// kthreadd is pid 2 on every Linux with a normal pid namespace; inside a container it may not exist.
	data, err := os.ReadFile("/proc/2/stat")
	if err != nil || !strings.Contains(string(data), "(kthreadd)") {
		t.Skip("no kthreadd at pid 2 in this pid namespace")
	}
	if !(System{}).KernelThread(2) {
		t.Fatal("kthreadd not detected as a kernel thread")
	}
	if (System{}).KernelThread(os.Getpid()) {
		t.Fatal("this test process detected as a kernel thread")
	}
}
