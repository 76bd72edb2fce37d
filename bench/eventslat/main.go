// Command eventslat measures what docs/BENCHMARKS.md sets a goal for in `runwatch events`: the time from a
// file change on disk to the JSON line on the events process's stdout (p50/p99), and the CPU the process uses
// while nothing changes. It builds runwatch (or takes -bin), makes a workspace of resumable runs in a temp
// dir, starts `runwatch events` on it and reads its stdout through a pipe, exactly as a script would.
//
//	go run ./bench/eventslat -runs 100 -n 300 -idle 10s
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "", "runwatch binary (default: go build the module in the current directory)")
	runs := flag.Int("runs", 100, "resumable runs in the workspace")
	n := flag.Int("n", 300, "changes measured per kind")
	gap := flag.Duration("gap", 20*time.Millisecond, "pause between changes, so each one is measured alone")
	idle := flag.Duration("idle", 10*time.Second, "quiet interval for the idle CPU measurement")
	poll := flag.String("poll", "", "pass --poll to runwatch events (e.g. 2s)")
	storm := flag.Duration("storm", 0, "then append to one run.log at -rate lines/s for this long")
	rate := flag.Int("rate", 100_000, "lines per second during -storm")
	flag.Parse()
	if err := run(*bin, *runs, *n, *gap, *idle, *poll, *storm, *rate); err != nil {
		fmt.Fprintln(os.Stderr, "eventslat:", err)
		os.Exit(1)
	}
}

type line struct {
	at  time.Time
	msg event
}

type event struct {
	Type string `json:"type"`
	Run  struct {
		StatePath    string `json:"state_path"`
		CurrentStage string `json:"current_stage"`
	} `json:"run"`
	Path    string `json:"path"`
	Entries []struct {
		Message string `json:"message"`
	} `json:"entries"`
}

func run(bin string, runs, n int, gap, idle time.Duration, poll string, storm time.Duration, rate int) error {
	work, err := os.MkdirTemp("", "eventslat-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if bin == "" {
		bin = filepath.Join(work, "runwatch")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}
	root := filepath.Join(work, "reports")
	var dirs []string
	for i := range runs {
		dir := filepath.Join(root, fmt.Sprintf("run-%04d-20260301T000000Z", i))
		if err := writeRun(dir, "S1"); err != nil {
			return err
		}
		dirs = append(dirs, dir)
	}

	args := []string{"events", root}
	if poll != "" {
		args = append(args, "--poll", poll)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(work, "config")) // no user config
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan line, 4096)
	go read(stdout, lines)

	ready, err := waitFor(lines, 30*time.Second, func(e event) bool { return e.Type == "watch-health" })
	if err != nil {
		return fmt.Errorf("startup: %w", err)
	}
	fmt.Printf("startup: %d runs read, watched and printed in %s (process start → watch-health line)\n",
		runs, ms(ready.Sub(started)))

	if err := measureIdle(cmd.Process.Pid, runs, idle); err != nil {
		return err
	}
	replace, appendLat, err := measureChanges(dirs, n, gap, lines)
	if err != nil {
		return err
	}
	report("state.env atomic replace → run-changed line", replace)
	report("run.log append → log-appended line", appendLat)
	if storm > 0 {
		return logStorm(cmd.Process.Pid, filepath.Join(dirs[0], "run.log"), storm, rate, lines)
	}
	return nil
}

// measureIdle prints the CPU the events process spends over idle with nothing written, before any change
// has warmed anything up.
func measureIdle(pid, runs int, idle time.Duration) error {
	time.Sleep(time.Second)
	before, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	start := time.Now()
	time.Sleep(idle)
	after, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	hz := clockTicks()
	cpu := float64(after-before) / hz
	fmt.Printf("idle: %d runs, %s quiet: %.3f s CPU (%.3f%% of one core), utime+stime %d ticks at %.0f Hz\n",
		runs, elapsed.Round(time.Millisecond), cpu, 100*cpu/elapsed.Seconds(), after-before, hz)

	return nil
}

// measureChanges makes n changes, alternating a state.env replace and a run.log append over dirs, and
// returns how long each took to come out as its events line.
func measureChanges(dirs []string, n int, gap time.Duration, lines <-chan line) (replace, appendLat []time.Duration, err error) {
	stage := map[string]string{}
	for i := range n {
		dir := dirs[i%len(dirs)]
		next := "S2"
		if stage[dir] == "S2" {
			next = "S1"
		}
		stage[dir] = next
		sp := filepath.Join(dir, "state.env")
		tmp := filepath.Join(dir, ".state.env.tmp-bench")
		if err := os.WriteFile(tmp, []byte(stateEnv(dir, next)), 0o644); err != nil {
			return nil, nil, err
		}
		t0 := time.Now()
		if err := os.Rename(tmp, sp); err != nil {
			return nil, nil, err
		}
		t1, err := waitFor(lines, 10*time.Second, func(e event) bool {
			return e.Type == "run-changed" && e.Run.StatePath == sp && e.Run.CurrentStage == next
		})
		if err != nil {
			return nil, nil, fmt.Errorf("replace %d: %w", i, err)
		}
		replace = append(replace, t1.Sub(t0))
		time.Sleep(gap)

		marker := fmt.Sprintf("bench_tick n=%d", i)
		logPath := filepath.Join(dir, "run.log")
		f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, nil, err
		}
		t0 = time.Now()
		_, err = fmt.Fprintf(f, "[2026-03-01T00:00:00Z] %s\n", marker)
		f.Close()
		if err != nil {
			return nil, nil, err
		}
		t1, err = waitFor(lines, 10*time.Second, func(e event) bool {
			if e.Type != "log-appended" || e.Path != logPath {
				return false
			}
			for _, en := range e.Entries {
				if en.Message == marker {
					return true
				}
			}
			return false
		})
		if err != nil {
			return nil, nil, fmt.Errorf("append %d: %w", i, err)
		}
		appendLat = append(appendLat, t1.Sub(t0))
		time.Sleep(gap)
	}
	return replace, appendLat, nil
}

// logStorm appends rate lines per second (in writes of 1,000 lines, as a busy writer flushes) to one log for
// d, then checks that every line arrived once and in order, how far behind the last one arrived, and what
// the events process spent in CPU and peak memory.
func logStorm(pid int, logPath string, d time.Duration, rate int, lines <-chan line) error {
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	before, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	const chunk = 1000
	written := 0
	var lastWrite time.Time
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		var buf []byte
		for time.Since(start) < d {
			buf = buf[:0]
			for range chunk {
				buf = fmt.Appendf(buf, "[2026-03-01T00:00:00Z] storm n=%d\n", written)
				written++
			}
			if _, err := f.Write(buf); err != nil {
				done <- err
				return
			}
			lastWrite = time.Now()
			if ahead := time.Duration(float64(written)/float64(rate)*float64(time.Second)) - time.Since(start); ahead > 0 {
				time.Sleep(ahead)
			}
		}
		done <- nil
	}()
	got, outOfOrder := 0, 0
	var lastArrival time.Time
	writerDone := false
	deadline := time.After(d + 60*time.Second)
	for !writerDone || got < written {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			writerDone = true
		case l, ok := <-lines:
			if !ok {
				return fmt.Errorf("events exited during the storm")
			}
			if l.msg.Type != "log-appended" || l.msg.Path != logPath {
				continue
			}
			for _, e := range l.msg.Entries {
				k, ok := strings.CutPrefix(e.Message, "storm n=")
				if !ok {
					continue
				}
				if v, _ := strconv.Atoi(k); v != got {
					outOfOrder++
				}
				got++
			}
			lastArrival = l.at
		case <-deadline:
			return fmt.Errorf("storm: %d of %d lines arrived", got, written)
		}
	}
	after, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	cpu := float64(after-before) / clockTicks()
	fmt.Printf("storm: %d lines in %s (%.0f lines/s) to one run.log: %d arrived, %d out of order; last line %s after its write; "+
		"events process %.2f s CPU (%.0f%% of one core), peak RSS %s\n",
		written, d, float64(written)/d.Seconds(), got, outOfOrder, ms(lastArrival.Sub(lastWrite)),
		cpu, 100*cpu/elapsed.Seconds(), peakRSS(pid))
	return nil
}

// peakRSS is VmHWM from /proc/PID/status.
func peakRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func read(r io.Reader, out chan<- line) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		at := time.Now()
		var e event
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out <- line{at: at, msg: e}
		}
	}
	close(out)
}

func waitFor(lines <-chan line, limit time.Duration, want func(event) bool) (time.Time, error) {
	deadline := time.After(limit)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return time.Time{}, fmt.Errorf("events exited")
			}
			if want(l.msg) {
				return l.at, nil
			}
		case <-deadline:
			return time.Time{}, fmt.Errorf("no matching line within %s", limit)
		}
	}
}

func report(what string, d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	pct := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))] }
	fmt.Printf("%s: n=%d p50 %s p90 %s p99 %s max %s\n", what, len(d),
		ms(pct(0.50)), ms(pct(0.90)), ms(pct(0.99)), ms(d[len(d)-1]))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// cpuTicks is utime+stime of a process (fields 14 and 15 of /proc/PID/stat), in clock ticks.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields are counted after its closing parenthesis.
	rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
	f := strings.Fields(rest)
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cannot parse /proc/%d/stat", pid)
	}
	return utime + stime, nil
}

func clockTicks() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64); err == nil && v > 0 {
			return v
		}
	}
	return 100 // USER_HZ on every Linux this runs on
}

func writeRun(dir, stage string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]string{
		"state.env":           stateEnv(dir, stage),
		"checklist.state.env": "CB_S1_GREEN=\"1\"\nCB_S2_GREEN=\"0\"\nCHECKLIST_SCHEMA_VERSION=\"1\"\n",
		"run.log":             "[2026-03-01T00:00:00Z] run bootstrapped\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func stateEnv(dir, stage string) string {
	return fmt.Sprintf("CURRENT_STAGE=%q\nLOCK_FILE=%q\nRUN_ID=\"bench\"\nS1_DONE=\"0\"\nS2_DONE=\"0\"\nTASK_NAME=\"bench\"\n",
		stage, filepath.Join(dir, "run.lock"))
}
