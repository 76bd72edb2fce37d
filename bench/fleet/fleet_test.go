// Package fleet measures one dashboard over a fleet of hosts (issue 35): N real sshd servers on this machine
// (remote/sshtest), each with its own runs, and the dashboard over all of them in tmux: the time to the first
// frame that lists every run (and the CPU each part of the fleet spent by then), its idle CPU and RSS, what
// a host whose logs flood costs the dashboard, and what a host that drops does to the others: the
// dashboard's cost in the half minute after the drop and once the host's retries have backed off. (A host
// that lags is not measured yet.) A test so it can use sshtest's servers; it runs only when asked:
//
//	RUNWATCH_FLEET=8 RUNWATCH_FLEET_RUNS=1000 go test ./bench/fleet -run TestFleet -v -timeout 30m
package fleet

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"runwatch/remote/sshtest"
	"runwatch/sim"
)

func TestFleet(t *testing.T) {
	hosts, _ := strconv.Atoi(os.Getenv("RUNWATCH_FLEET"))
	if hosts <= 0 {
		t.Skip("set RUNWATCH_FLEET=N (and RUNWATCH_FLEET_RUNS, default 1000) to measure a dashboard over N hosts")
	}
	runs := 1000
	if n, err := strconv.Atoi(os.Getenv("RUNWATCH_FLEET_RUNS")); err == nil && n > 0 {
		runs = n
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	binDir := t.TempDir()
	bin := filepath.Join(binDir, "runwatch")
	if from := os.Getenv("RUNWATCH_FLEET_BIN"); from != "" {
		if out, err := exec.Command("cp", from, bin).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", from, err, out)
		}
	} else if out, err := exec.Command("go", "build", "-o", bin, "../..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	phases := map[string]bool{"idle": true, "flood": true, "lag": true, "drop": true}
	if p := os.Getenv("RUNWATCH_FLEET_PHASES"); p != "" {
		phases = map[string]bool{}
		for _, w := range strings.Split(p, ",") {
			phases[strings.TrimSpace(w)] = true
		}
	}
	var aliases []string
	for i := range hosts {
		aliases = append(aliases, fmt.Sprintf("h%d", i+1))
	}
	fleet := sshtest.New(t, binDir, aliases...)
	args := []string{bin, "--read-only"}
	var dirs []string
	for _, a := range aliases {
		dir := t.TempDir()
		dirs = append(dirs, dir)
		if _, err := sim.GenerateRuns(dir, runs); err != nil {
			t.Fatal(err)
		}
		args = append(args, "ssh://"+a+dir)
	}
	total := hosts * runs
	t.Logf("%d hosts × %d runs; %s", hosts, runs, loadavg())

	socket := fmt.Sprintf("runwatch-fleet-%d", os.Getpid())
	tmux := func(a ...string) string {
		out, _ := exec.Command("tmux", append([]string{"-L", socket}, a...)...).CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	t.Cleanup(func() { tmux("kill-server") })
	cmd := "exec env RUNWATCH_SSH_COMMAND='" + strings.Join(fleet.SSHCommand(), " ") + "' " + strings.Join(args, " ")
	t0 := time.Now()
	tmux("new-session", "-d", "-s", "fleet", "-x", "160", "-y", "45", cmd)
	pid, err := strconv.Atoi(tmux("display-message", "-p", "-t", "fleet", "#{pane_pid}"))
	if err != nil {
		t.Fatal("no dashboard pane")
	}
	// The title counts the runs listed ("runwatch: 8000 runs …"); every one listed is the first full frame.
	count := regexp.MustCompile(`runwatch: (\d+) runs`)
	listed := func() int {
		m := count.FindStringSubmatch(tmux("display-message", "-p", "-t", "fleet", "#{pane_title}"))
		if m == nil {
			return 0
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	deadline := time.Now().Add(10 * time.Minute)
	for listed() < total {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 minutes the dashboard lists %d of %d runs; screen:\n%s", listed(), total, tmux("capture-pane", "-p", "-t", "fleet"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("first frame listing all %d runs: %s; %s", total, time.Since(t0).Round(10*time.Millisecond), loadavg())
	t.Log("by then, " + cpuLine(cpuOfFleet(pid, bin)))

	if phases["idle"] {
		time.Sleep(65 * time.Second) // past the first minute: every age in minutes
		cpu, wakes := window(t, pid, 30*time.Second)
		t.Logf("idle, 30 s from 65 s after: %.3f%% of a core, %.1f wake-ups/s, RSS %.1f MiB; %s", cpu, wakes, rssMiB(pid), loadavg())
	}
	if phases["flood"] {
		floodPhase(t, pid, bin, dirs[hosts-1], aliases[hosts-1], listed)
	}
	if phases["lag"] {
		lagPhase(t, fleet, bin, aliases, dirs, total, listed, func() string { return tmux("capture-pane", "-p", "-t", "fleet") })
	}
	if phases["drop"] {
		dropPhase(t, pid, fleet, aliases[0], total, runs, listed)
	}
}

// floodPhase: a host floods, 2,000 lines a second appended to 50 of its runs' logs for 20 s. The others'
// runs stay listed; what the flood costs the dashboard, and each part of the fleet.
func floodPhase(t *testing.T, pid int, bin, dir, alias string, listed func() int) {

	logs, _ := filepath.Glob(filepath.Join(dir, "reports", "*", "run.log"))
	logs = logs[:min(50, len(logs))]
	stop := make(chan struct{})
	flooded := make(chan int)
	go func() { flooded <- flood(logs, 2000, stop) }()
	time.Sleep(2 * time.Second)
	before := cpuOfFleet(pid, bin)
	cpu, wakes := window(t, pid, 20*time.Second)
	after := cpuOfFleet(pid, bin)
	close(stop)
	lines := <-flooded
	t.Logf("%s floods (%d lines into %d logs): %d runs listed, %.3f%% of a core, %.1f wake-ups/s, RSS %.1f MiB; %s",
		alias, lines, len(logs), listed(), cpu, wakes, rssMiB(pid), loadavg())
	for k := range after {
		after[k] -= before[k]
	}
	t.Logf("the flood's 20 s: %s", cpuLine(after))
	time.Sleep(10 * time.Second)
}

// dropPhase: a host drops, its sshd killed. The others' runs stay listed; the dashboard's cost while it
// retries, and once its retries have backed off to their longest (30 s).
func dropPhase(t *testing.T, pid int, fleet *sshtest.Fleet, alias string, total, runs int, listed func() int) {
	fleet.Kill(alias)
	time.Sleep(5 * time.Second)
	cpu, wakes := window(t, pid, 30*time.Second)
	t.Logf("%s dropped: %d runs listed, %.3f%% of a core, %.1f wake-ups/s, RSS %.1f MiB; %s", alias, listed(), cpu, wakes,
		rssMiB(pid), loadavg())
	if n := listed(); n < total-runs {
		t.Errorf("with %s down the dashboard lists %d runs, fewer than the other hosts' %d", alias, n, total-runs)
	}
	time.Sleep(30 * time.Second)
	cpu, wakes = window(t, pid, 60*time.Second)
	t.Logf("%s down, 65 s on, over 60 s: %.3f%% of a core, %.1f wake-ups/s, RSS %.1f MiB; %s", alias, cpu, wakes, rssMiB(pid), loadavg())
}

// window is pid's CPU share (percent of a core) and context switches a second over the next d.
func window(t *testing.T, pid int, d time.Duration) (float64, float64) {
	t.Helper()
	c0, s0 := sample(t, pid)
	t0 := time.Now()
	time.Sleep(d)
	c1, s1 := sample(t, pid)
	el := time.Since(t0)
	return 100 * float64(c1-c0) / float64(el), float64(s1-s0) / el.Seconds()
}

// sample is pid's CPU time (utime+stime, in USER_HZ ticks of 10 ms) and its threads' context switches.
func sample(t *testing.T, pid int) (time.Duration, int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	rest := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ut, _ := strconv.ParseInt(rest[11], 10, 64)
	st, _ := strconv.ParseInt(rest[12], 10, 64)
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	var sw int64
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				sw += n
			}
		}
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, sw
}

func rssMiB(pid int) float64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == "VmRSS" {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return float64(n) / 1024
		}
	}
	return 0
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load unknown"
	}
	return "load " + strings.Join(f[:3], " ")
}

// cpuOfFleet is the CPU time (utime+stime, and that of their reaped children) spent so far by what makes the
// fleet on this machine, by part: the dashboard itself; its ssh clients (its descendants), those that carry
// the hosts' streams apart from the rest (masters, one-off commands); the hosts' runwatch (the binary bin under the sshd servers this test started, which are its descendants); and
// everything else under those servers (sshd, the login shells). Every part shares the same cores, so the
// time to the first frame is at least their sum over the cores.
func cpuOfFleet(dashboard int, bin string) map[string]time.Duration {
	type proc struct {
		ppid   int
		cpu    time.Duration
		exe    string
		stream bool // an ssh that carries a host's stream (remote.SSH.StreamCmd), not a master or a one-off
	}
	procs := map[int]proc{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		rest := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(rest) < 15 {
			continue
		}
		ppid, _ := strconv.Atoi(rest[1])
		var ticks int64
		for _, f := range rest[11:15] { // utime, stime, cutime, cstime
			n, _ := strconv.ParseInt(f, 10, 64)
			ticks += n
		}
		exe, _ := os.Readlink(d + "/exe")
		args, _ := os.ReadFile(d + "/cmdline")
		procs[pid] = proc{ppid: ppid, cpu: time.Duration(ticks) * 10 * time.Millisecond, exe: exe,
			stream: strings.Contains(string(args), "ControlPath=none")}
	}
	under := func(pid, ancestor int) bool {
		for i := 0; pid > 1 && i < 64; i++ {
			if pid == ancestor {
				return true
			}
			pid = procs[pid].ppid
		}
		return false
	}
	out := map[string]time.Duration{}
	for pid, p := range procs {
		switch {
		case pid == dashboard:
			out["dashboard"] += p.cpu
		case under(pid, dashboard) && p.stream:
			out["its ssh streams"] += p.cpu
		case under(pid, dashboard):
			out["its other ssh"] += p.cpu
		case under(pid, os.Getpid()) && p.exe == bin:
			out["hosts' runwatch"] += p.cpu
		case under(pid, os.Getpid()) && pid != os.Getpid() && !strings.HasSuffix(p.exe, "/go"):
			out["sshd and shells"] += p.cpu
		}
	}
	return out
}

func cpuLine(m map[string]time.Duration) string {
	var parts []string
	var sum time.Duration
	for _, k := range []string{"dashboard", "its ssh streams", "its other ssh", "hosts' runwatch", "sshd and shells"} {
		parts = append(parts, fmt.Sprintf("%s %.2f s", k, m[k].Seconds()))
		sum += m[k]
	}
	return fmt.Sprintf("CPU: %s; sum %.2f s", strings.Join(parts, ", "), sum.Seconds())
}

// flood appends perSecond lines a second, spread over logs, until stop is closed, and says how many.
func flood(logs []string, perSecond int, stop <-chan struct{}) int {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	n := 0
	for {
		select {
		case <-stop:
			return n
		case now := <-tick.C:
			for range perSecond / 100 {
				f, err := os.OpenFile(logs[n%len(logs)], os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					continue
				}
				fmt.Fprintf(f, "[%s] progress_note step=%d detail=flood\n", now.UTC().Format(time.RFC3339), n)
				f.Close()
				n++
			}
		}
	}
}

// lagPhase: a host lags, every runwatch its server runs stopped (SIGSTOP, again for each new one) while its
// sshd and the connection stay up, so no error ever comes. A run removed on another host must still leave
// the list, and the lagging host's rows must come to say they are stale (⚠ before its name in the footer).
func lagPhase(t *testing.T, fleet *sshtest.Fleet, bin string, aliases, dirs []string, total int, listed func() int, screen func() string) {
	if len(aliases) < 2 {
		t.Log("lag: needs 2 hosts")
		return
	}
	lagger, other := aliases[0], aliases[len(aliases)-1]
	stopped := map[int]bool{}
	stop := func() {
		for _, p := range fleet.Running(lagger, bin) {
			if !stopped[p] && syscall.Kill(p, syscall.SIGSTOP) == nil {
				stopped[p] = true
			}
		}
	}
	defer func() {
		for p := range stopped {
			_ = syscall.Kill(p, syscall.SIGCONT)
		}
	}()
	stop()
	t0 := time.Now()
	runDirs, _ := filepath.Glob(filepath.Join(dirs[len(dirs)-1], "reports", "*"))
	if len(runDirs) == 0 {
		t.Fatal("lag: no run folder to remove on", other)
	}
	if err := os.RemoveAll(runDirs[0]); err != nil {
		t.Fatal(err)
	}
	gone, marked := time.Duration(0), time.Duration(0)
	for deadline := time.Now().Add(120 * time.Second); time.Now().Before(deadline) && (gone == 0 || marked == 0); {
		stop()
		if gone == 0 && listed() == total-1 {
			gone = time.Since(t0)
		}
		if marked == 0 && strings.Contains(screen(), "⚠ "+lagger) {
			marked = time.Since(t0)
		}
		time.Sleep(200 * time.Millisecond)
	}
	say := func(d time.Duration) string {
		if d == 0 {
			return "not within 120 s"
		}
		return d.Round(100 * time.Millisecond).String()
	}
	t.Logf("%s lags (its runwatch stopped): a run removed on %s left the list in %s; %s marked stale in %s; %s",
		lagger, other, say(gone), lagger, say(marked), loadavg())
	if gone == 0 {
		t.Errorf("with %s lagging, a run removed on %s never left the list", lagger, other)
	}
}
