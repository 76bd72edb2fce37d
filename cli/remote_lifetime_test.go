package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"runwatch/config"
	"runwatch/model"
	"runwatch/remote"
	"runwatch/remote/sshtest"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/keys"
)

// procArgs is every process's command line, by pid (zombies, whose command line is empty, are left out).
func procArgs() map[int][]string {
	out := map[int][]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		// A remote runwatch gets its words encoded (remote.ArgvCommand): the test reads them decoded.
		if len(args) == 3 && args[1] == remote.ArgvCommand {
			if words, err := remote.DecodeArgv(args[2]); err == nil {
				args = append(args[:1], words...)
			}
		}
		out[pid] = args
	}
	return out
}

// leftovers lists what runwatch started for fleet that still runs: ssh processes of this fleet (streams,
// masters, one-off commands: they all name its ssh_config) and the remote `runwatch events` over roots.
func leftovers(fleet *sshtest.Fleet, roots ...string) []string {
	var left []string
	for pid, args := range procArgs() {
		line := strings.Join(args, " ")
		switch {
		case filepath.Base(args[0]) == "ssh" && strings.Contains(line, fleet.Config):
			left = append(left, fmt.Sprintf("%d %s", pid, line))
		case filepath.Base(args[0]) == "runwatch" && len(args) > 1 && args[1] == "events":
			for _, r := range roots {
				if args[len(args)-1] == r && !strings.Contains(line, "ssh://") {
					left = append(left, fmt.Sprintf("%d %s", pid, line))
				}
			}
		}
	}
	return left
}

// running waits until runwatch follows both hosts: a master and a remote events per host.
func running(t *testing.T, fleet *sshtest.Fleet, rootA, rootB string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		masters, events := 0, map[string]bool{}
		for _, args := range procArgs() {
			line := strings.Join(args, " ")
			if filepath.Base(args[0]) == "ssh" && strings.Contains(line, fleet.Config) && strings.Contains(line, "ControlMaster=yes") {
				masters++
			}
			if filepath.Base(args[0]) == "runwatch" && len(args) > 1 && args[1] == "events" && !strings.Contains(line, "ssh://") {
				events[args[len(args)-1]] = true
			}
		}
		if masters >= 2 && events[rootA] && events[rootB] {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("runwatch never followed both hosts: %d masters, events over %v", masters, events)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// noneLeft polls until nothing runwatch started over ssh is left, failing after a few seconds.
func noneLeft(t *testing.T, fleet *sshtest.Fleet, how string, roots ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := leftovers(fleet, roots...)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, still running 10 s later:\n  %s", how, strings.Join(left, "\n  "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Issue 25.1: nothing runwatch starts over ssh outlives it, however `events` over two hosts ends.
func TestEventsOverSSHLeavesNothingBehind(t *testing.T) {
	fleet, e := sshFleet(t, "alpha", "beta")
	bin := filepath.Join(fleet.BinDir, "runwatch")
	for _, end := range []syscall.Signal{syscall.SIGHUP, syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(end.String(), func(t *testing.T) {
			rootA, rootB := t.TempDir(), t.TempDir()
			resumabletest.MinimalRun(t, rootA, "irm-a-20261201T080000Z")
			resumabletest.MinimalRun(t, rootB, "irm-b-20261201T080000Z")
			c := exec.Command(bin, "events", "ssh://alpha"+rootA, "beta:"+rootB)
			c.Env = e.environ()
			c.Stdout, c.Stderr = io.Discard, io.Discard
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
			running(t, fleet, rootA, rootB)
			if err := c.Process.Signal(end); err != nil {
				t.Fatal(err)
			}
			_ = c.Wait()
			noneLeft(t, fleet, end.String()+" of runwatch events", rootA, rootB)
		})
	}
}

// Issue 25.1: the same for the dashboard, ended by SIGHUP (its terminal closed), SIGKILL and q.
func TestDashboardOverSSHLeavesNothingBehind(t *testing.T) {
	fleet, _ := sshFleet(t, "alpha", "beta")
	bin := filepath.Join(fleet.BinDir, "runwatch")
	for _, end := range []string{"SIGHUP", "SIGKILL", "q"} {
		t.Run(end, func(t *testing.T) {
			rootA, rootB := t.TempDir(), t.TempDir()
			resumabletest.MinimalRun(t, rootA, "irm-a-20261201T080000Z")
			resumabletest.MinimalRun(t, rootB, "irm-b-20261201T080000Z")
			d := newTmuxDemo(t)
			d.env = append(d.env, "RUNWATCH_SSH_COMMAND="+strings.Join(fleet.SSHCommand(), " "),
				"XDG_RUNTIME_DIR="+filepath.Join(fleet.Dir, "rt"))
			exitFile := d.start(t, fmt.Sprintf("%s ssh://alpha%s beta:%s", bin, rootA, rootB))
			d.waitScreen("both hosts live", func(s string) bool { return strings.Contains(s, "● alpha") && strings.Contains(s, "● beta") })
			running(t, fleet, rootA, rootB)
			pid := 0
			for p, args := range procArgs() {
				if args[0] == bin && strings.Contains(strings.Join(args, " "), "ssh://alpha"+rootA) {
					pid = p
				}
			}
			if pid == 0 {
				t.Fatal("the dashboard's process is not found")
			}
			switch end {
			case "q":
				d.press(keys.ActQuit)
				d.waitExit(exitFile)
			case "SIGHUP":
				_ = syscall.Kill(pid, syscall.SIGHUP)
			case "SIGKILL":
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			noneLeft(t, fleet, end+" of the dashboard", rootA, rootB)
		})
	}
}

// Issue 25.1: a master left by a runwatch that was killed (here: one still connected to beta, at alpha's
// control path, its recorded owner dead) is never used by the next runwatch: it is stopped, its socket
// removed, and the next command reaches alpha itself.
func TestAStaleMasterIsNotUsed(t *testing.T) {
	name := "alpha"
	bin := buildRunwatch(t)
	fleet := sshtest.NewNamed(t, filepath.Dir(bin), map[string]string{"alpha": name, "beta": "beta"}, "alpha", "beta")
	_, e := useFleet(t, fleet)
	// Which machine answers shows in a lock naming alpha held by a live process: alpha judges it live by
	// its own processes, beta can only call it unknown.
	root := t.TempDir()
	dir := resumabletest.MinimalRun(t, root, "irm-stale-master-20261201T080000Z")
	resumabletest.WriteEnvLock(t, filepath.Join(dir, "run.lock"), os.Getpid(), name, time.Now())
	s := sshFor(e.getenv, config.Config{})
	if err := os.MkdirAll(s.ControlDir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := s.ControlPath(remote.Root{Host: "alpha", Path: root})
	argv := append(fleet.SSHCommand(), "-o", "BatchMode=yes", "-o", "ControlMaster=yes", "-o", "ControlPersist=no",
		"-o", "ControlPath="+sock, "-N", "beta")
	stale := exec.Command(argv[0], argv[1:]...)
	stale.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := stale.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = stale.Wait(); close(exited) }()
	defer func() { _ = syscall.Kill(-stale.Process.Pid, syscall.SIGKILL); <-exited }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stale master never bound its socket")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.WriteFile(sock+".owner", []byte(fmt.Sprintf("%d 1\n", resumabletest.DeadPID(t))), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runCmd(e, "status", "--json", "ssh://alpha"+root)
	if code != 0 && code != 1 {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}
	var snap model.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil || len(snap.Runs) != 1 || len(snap.Runs[0].Locks) != 1 {
		t.Fatalf("status --json: %v\n%s%s", err, out, errOut)
	}
	if l := snap.Runs[0].Locks[0]; l.Verdict != model.VerdictLive {
		t.Fatalf("the lock on alpha judged %s (%q): the command went to another machine", l.Verdict, l.Reasons)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the stale master still runs")
	}
	if _, err := os.Stat(sock); err == nil {
		t.Error("the stale master's socket is still there")
	}
}
