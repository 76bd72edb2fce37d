// Command idle measures what an idle dashboard costs (issue 26): CPU (utime+stime from /proc/PID/stat) and
// wake-ups (voluntary and involuntary context switches of every thread, /proc/PID/task/*/status) over an
// interval in which nothing changes, with RSS, for the real binary in tmux, at several workspace sizes: over
// the first minute after it has loaded (its "updated … ago" under a minute old) and in the steady state after
// it (issue 35). Beside it, as peers in the same run: `top` (its own idle cost, refreshing every 3 s) and a
// Bubble Tea program that does nothing (./bench/idle/bare: the library's floor).
//
//	go run ./bench/idle                                   # 6, 1200 and 10000 runs, the first minute and 30 s after
//	go run ./bench/idle -old /tmp/runwatch-old -rounds 2  # before and after, alternating
//
// The machine is shared: each size measures every binary back to back, the rounds alternate them, and the
// load average is printed beside every number.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"runwatch/shellword"
	"runwatch/sim"
)

func main() {
	newBin := flag.String("new", "", "runwatch binary to measure (default: go build the module in the current directory)")
	oldBin := flag.String("old", "", "a second runwatch binary to measure beside it (before)")
	sizes := flag.String("runs", "6,1200,10000", "comma-separated workspace sizes (5 resumable runs to 1 jonggrang feature)")
	dur := flag.Duration("for", 30*time.Second, "idle interval measured")
	settle := flag.Duration("settle", 5*time.Second, "wait after every run is loaded before measuring")
	rounds := flag.Int("rounds", 1, "rounds (every binary once per round per size)")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "runwatch-idle"), "workspaces (generated once, reused)")
	peers := flag.Bool("peers", true, "also measure top and a bare Bubble Tea program")
	flag.Parse()
	if err := run(*newBin, *oldBin, *sizes, *dir, *dur, *settle, *rounds, *peers); err != nil {
		fmt.Fprintln(os.Stderr, "idle:", err)
		os.Exit(1)
	}
}

type target struct {
	name string
	argv func(ws string) []string
	// loaded says from the pane's title and content whether the dashboard has read every run.
	loaded func(title, screen string) bool
}

func run(newBin, oldBin, sizes, dir string, dur, settle time.Duration, rounds int, peers bool) error {
	work, err := os.MkdirTemp("", "idle-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if newBin == "" {
		newBin = filepath.Join(work, "runwatch")
		if err := build(newBin, "."); err != nil {
			return err
		}
	}
	dashboard := func(name, bin string) target {
		return target{name: name, argv: func(ws string) []string { return []string{bin, "--read-only", ws} },
			loaded: func(title, screen string) bool {
				return strings.HasPrefix(title, "runwatch: ") && !strings.HasPrefix(title, "runwatch: 0 runs") &&
					!strings.Contains(screen, "loading") && !strings.Contains(screen, "scanning")
			}}
	}
	targets := []target{dashboard("runwatch", newBin)}
	if oldBin != "" {
		targets = append([]target{dashboard("runwatch (old)", oldBin)}, targets...)
	}
	if peers {
		bare := filepath.Join(work, "bare")
		if err := build(bare, "./bench/idle/bare"); err != nil {
			return err
		}
		always := func(string, string) bool { return true }
		targets = append(targets,
			target{name: "top", argv: func(string) []string { return []string{"top"} }, loaded: always},
			target{name: "bare Bubble Tea", argv: func(string) []string { return []string{bare} }, loaded: always})
	}
	fmt.Printf("first minute: from %s after loading to 60 s; steady: %s from 65 s after loading; %s\n", settle, dur, loadavg())
	fmt.Printf("| runs | what | first minute: CPU (share of a core) | wake-ups/s | steady: CPU | wake-ups/s (ctx switches, all threads) | RSS | load |\n|---:|---|---:|---:|---:|---:|---:|---|\n")
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("-runs: %w", err)
		}
		ws, err := workspace(dir, n)
		if err != nil {
			return err
		}
		for r := 0; r < rounds; r++ {
			for _, t := range targets {
				if n != firstSize(sizes) && (t.name == "top" || t.name == "bare Bubble Tea") && r > 0 {
					continue
				}
				first, m, err := measure(t, ws, dur, settle)
				if err != nil {
					fmt.Printf("| %d | %s | %v | | | | | |\n", n, t.name, err)
					continue
				}
				fmt.Printf("| %d | %s | %.3f%% | %.1f | %.3f%% | %.1f | %.1f MiB | %s |\n", n, t.name, first.cpu, first.wakes, m.cpu, m.wakes, m.rssMiB, loadavg())
			}
		}
	}
	return nil
}

func firstSize(sizes string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(strings.Split(sizes, ",")[0]))
	return n
}

func build(out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", pkg, err)
	}
	return nil
}

// workspace generates n runs once (5 resumable to 1 jonggrang, as the 1,200-run bench: 1,000 + 200).
func workspace(dir string, n int) (string, error) {
	j := n / 6
	r := n - j
	ws := filepath.Join(dir, fmt.Sprintf("runs-%d", n))
	marker := filepath.Join(dir, fmt.Sprintf(".generated-%d-%d", j, r))
	if _, err := os.Stat(marker); err == nil {
		return ws, nil
	}
	if err := os.RemoveAll(ws); err != nil {
		return "", err
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return "", err
	}
	t0 := time.Now()
	if _, err := sim.GenerateMix(ws, j, r); err != nil {
		return "", err
	}
	fmt.Printf("generated %d runs (%d resumable, %d jonggrang) in %s\n", n, r, j, time.Since(t0).Round(time.Millisecond))
	return ws, os.WriteFile(marker, nil, 0o644)
}

type result struct {
	cpu, wakes, rssMiB float64
}

const socket = "runwatch-bench-idle"

func tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", socket}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// measure runs t in tmux and measures it twice once it has loaded: over the first minute (from settle on),
// when the dashboard's "updated … ago" is under a minute old, and over dur from 65 s on, when every age it
// shows reads in minutes or more.
func measure(t target, ws string, dur, settle time.Duration) (first, steady result, err error) {
	argv := t.argv(ws)
	session := "idle"
	_, _ = tmux("kill-session", "-t", session)
	if out, err := tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", "exec "+shellword.Line(argv)); err != nil {
		return result{}, result{}, fmt.Errorf("tmux: %v: %s", err, out)
	}
	defer func() { _, _ = tmux("kill-server") }()
	pidText, err := tmux("display-message", "-p", "-t", session, "#{pane_pid}")
	if err != nil {
		return result{}, result{}, err
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		return result{}, result{}, fmt.Errorf("pane pid %q: %w", pidText, err)
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		title, _ := tmux("display-message", "-p", "-t", session, "#{pane_title}")
		screen, _ := tmux("capture-pane", "-p", "-t", session)
		if t.loaded(title, screen) {
			break
		}
		if time.Now().After(deadline) {
			return result{}, result{}, fmt.Errorf("not loaded after 10 minutes (title %q)", title)
		}
		time.Sleep(200 * time.Millisecond)
	}
	loaded := time.Now()
	time.Sleep(settle)
	first, err = window(pid, time.Until(loaded.Add(time.Minute)))
	if err != nil {
		return result{}, result{}, err
	}
	time.Sleep(time.Until(loaded.Add(65 * time.Second)))
	steady, err = window(pid, dur)
	return first, steady, err
}

// window measures pid's CPU share, wake-ups and RSS over the next d.
func window(pid int, d time.Duration) (result, error) {
	cpu0, sw0, err := sample(pid)
	if err != nil {
		return result{}, err
	}
	t0 := time.Now()
	time.Sleep(d)
	cpu1, sw1, err := sample(pid)
	if err != nil {
		return result{}, err
	}
	el := time.Since(t0)
	rss := rssKiB(pid)
	return result{
		cpu:    100 * float64(cpu1-cpu0) / float64(el),
		wakes:  float64(sw1-sw0) / el.Seconds(),
		rssMiB: float64(rss) / 1024,
	}, nil
}

// clockTick is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100 on Linux.
const clockTick = 10 * time.Millisecond

// sample is the process's CPU time and its threads' context switches so far.
func sample(pid int) (time.Duration, int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
	rest := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ut, _ := strconv.ParseInt(rest[11], 10, 64) // field 14
	st, _ := strconv.ParseInt(rest[12], 10, 64) // field 15
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil {
		return 0, 0, err
	}
	var sw int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && (k == "voluntary_ctxt_switches" || k == "nonvoluntary_ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				sw += n
			}
		}
	}
	return time.Duration(ut+st) * clockTick, sw, nil
}

func rssKiB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == "VmRSS" {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load unknown"
	}
	return "load " + strings.Join(strings.Fields(string(b))[:3], " ")
}
