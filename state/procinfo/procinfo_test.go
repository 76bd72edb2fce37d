package procinfo

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestAliveOwnProcess(t *testing.T) {
	if !(System{}).Alive(os.Getpid()) {
		t.Fatal("own pid reported dead")
	}
}

func TestDeadChildIsNotAlive(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if (System{}).Alive(cmd.Process.Pid) {
		t.Fatalf("pid %d of an exited, reaped child reported alive", cmd.Process.Pid)
	}
}

func TestNonPositivePidsAreNeverAlive(t *testing.T) {
	for _, pid := range []int{0, -1, -4242} {
		if (System{}).Alive(pid) {
			t.Errorf("pid %d reported alive; kill(%d,0) would address a process group", pid, pid)
		}
	}
}

func TestStartTimeOfLiveChild(t *testing.T) {
	before := time.Now().Add(-2 * time.Second)
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	started, ok := (System{}).StartTime(cmd.Process.Pid)
	if !ok {
		t.Fatal("no start time for a live child")
	}
	if started.Before(before) || started.After(time.Now().Add(2*time.Second)) {
		t.Fatalf("start time %v not near now", started)
	}
	if !(System{}).Alive(cmd.Process.Pid) {
		t.Fatal("live child reported dead")
	}
}
