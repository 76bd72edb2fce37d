// Command scale measures runwatch over a workspace of many runs, each figure beside its floor in the same run
// (issue 16): `status --json` against `find … | xargs cat` of the state files it reads (and issue 35's read
// floor: the state files, locks, manifests and run.logs, found once and read whole), warm and cold cache;
// the dashboard's first frame and its memory; `brief` of a run whose run.log is 2 GiB.
//
//	go run ./bench/scale                      # 1,000 resumable + 200 jonggrang runs, 3 rounds
//	go run ./bench/scale -soak 10m            # also: RSS of `runwatch demo --speed 4` over 10 minutes
//	go run ./bench/scale -runs 10000 -skip frame,brief                           # the 10,000-run point
//	go run ./bench/scale -runs 100000 -rounds 1 -cold=false -skip frame,brief    # 100,000
//	go run ./bench/scale -log-lines 100       # every resumable run.log at least 100 lines
//	go run ./bench/scale -log-lines 400 -skip frame,brief -old /tmp/rw-old   # issue 35's workload, before and after
//	go run ./bench/scale -stages 40 -phases 200   # 40 stages a resumable run, 200 phases a manifest
//
// The floor of status is what it reads: when strace is installed, the files and folders one `status --json`
// opens (strace -f -e openat), read with cat and listed with ls -f; otherwise a find of the state files.
//
// The workspace is generated once into -dir by the simulator's writers (sim.GenerateShaped) and reused while
// its marker file matches the counts and the shape. The machine these numbers come from is shared, so every round takes the
// floor and the runwatch figure back to back, and the load average is printed with them.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"runwatch/shellword"
	"runwatch/sim"
)

type config struct {
	bin                  string
	old                  []string
	dir                  string
	resumable, jonggrang int
	rounds               int
	cold                 bool
	logSize              int64
	shape                sim.Shape
	soak                 time.Duration
	speed                float64
	skip                 map[string]bool
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "", "runwatch binary (default: go build the module in the current directory)")
	old := flag.String("old", "", "comma-separated older runwatch binaries whose status is timed in each round beside -bin's (before and after, alternating)")
	flag.StringVar(&c.dir, "dir", filepath.Join(os.TempDir(), "runwatch-scale"), "workspace folder (generated once, reused)")
	flag.IntVar(&c.resumable, "resumable", 1000, "resumable run folders in the workspace")
	flag.IntVar(&c.jonggrang, "jonggrang", 200, "jonggrang features in the workspace (25 to a project)")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds of each measurement (floor and runwatch back to back in each)")
	flag.BoolVar(&c.cold, "cold", true, "also measure with a cold cache (echo 3 > /proc/sys/vm/drop_caches before each read)")
	logGiB := flag.Float64("log-gib", 2, "size of the big run.log for the brief measurement, in GiB")
	runs := flag.Int("runs", 0, "runs in the workspace, 5 resumable to 1 jonggrang (10000, 100000: the points of issue 26); sets -resumable and -jonggrang")
	flag.IntVar(&c.shape.LogLines, "log-lines", 0, "pad every resumable run.log to at least this many lines (0: as generated, 21–117)")
	flag.IntVar(&c.shape.Stages, "stages", 0, "stages of every resumable run (0: its plan's own, 4 to 7)")
	flag.IntVar(&c.shape.Phases, "phases", 0, "phases of every jonggrang manifest (0: its work type's own, 13 to 19)")
	flag.DurationVar(&c.soak, "soak", 0, "run `runwatch demo` this long, sampling its RSS (0: skip)")
	flag.Float64Var(&c.speed, "speed", 4, "demo speed during -soak")
	skip := flag.String("skip", "", "comma-separated parts to leave out: status,frame,brief")
	flag.Parse()
	if *runs > 0 {
		c.resumable = *runs * 5 / 6
		c.jonggrang = *runs - c.resumable
	}
	c.logSize = int64(*logGiB * (1 << 30))
	for _, b := range strings.Split(*old, ",") {
		if b != "" {
			c.old = append(c.old, b)
		}
	}
	c.skip = map[string]bool{}
	for _, s := range strings.Split(*skip, ",") {
		if s != "" {
			c.skip[s] = true
		}
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	work, err := os.MkdirTemp("", "scale-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if c.bin == "" {
		c.bin = filepath.Join(work, "runwatch")
		build := exec.Command("go", "build", "-o", c.bin, ".")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}
	ws := filepath.Join(c.dir, "runs")
	if err := ensureWorkspace(ws, c.jonggrang, c.resumable, c.shape); err != nil {
		return err
	}
	fmt.Printf("workspace %s: %d resumable + %d jonggrang runs (shape %+v); %s\n", ws, c.resumable, c.jonggrang, c.shape, loadavg())
	if !c.skip["status"] {
		if err := measureStatus(c, ws); err != nil {
			return err
		}
	}
	if !c.skip["frame"] {
		if err := measureFrame(c, ws, c.resumable+c.jonggrang); err != nil {
			return err
		}
	}
	if !c.skip["brief"] {
		if err := measureBrief(c, ws); err != nil {
			return err
		}
	}
	if c.soak > 0 {
		if err := measureSoak(c, work); err != nil {
			return err
		}
	}
	fmt.Printf("done; %s\n", loadavg())
	return nil
}

// ensureWorkspace generates the runs unless a previous run of this command left the same ones.
func ensureWorkspace(ws string, jonggrang, resumable int, shape sim.Shape) error {
	marker := filepath.Join(filepath.Dir(ws), fmt.Sprintf(".generated-%d-jonggrang-%d-resumable-%d-lines-%d-stages-%d-phases",
		jonggrang, resumable, shape.LogLines, shape.Stages, shape.Phases))
	if _, err := os.Stat(marker); err == nil {
		return nil
	}
	if err := os.RemoveAll(filepath.Dir(ws)); err != nil {
		return err
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := sim.GenerateShaped(ws, jonggrang, resumable, shape); err != nil {
		return err
	}
	fmt.Printf("generated the workspace in %s\n", time.Since(t0).Round(time.Millisecond))
	return os.WriteFile(marker, nil, 0o644)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	f := strings.Fields(string(b))
	return "load average " + strings.Join(f[:3], " ")
}

// timing is one process's wall time, CPU time and peak RSS (KiB).
type timing struct {
	wall, cpu time.Duration
	maxRSS    int64
}

func timeCmd(name string, args ...string) (timing, error) { return timeEnv(nil, name, args...) }

// timeEnv runs name with env (nil: this process's environment) and times it.
func timeEnv(env []string, name string, args ...string) (timing, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return timing{}, fmt.Errorf("%s: %w", name, err)
	}
	if err != nil && name != "sh" && exit.ExitCode() > 1 {
		// status exits 1 when some run has a stop condition, which the generated workspace has on purpose.
		return timing{}, fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	t := timing{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.maxRSS = ru.Maxrss
	}
	return t, nil
}

// floorFind is the shell pipeline that reads the files `status` reads: state and checklist files, locks,
// manifests, phase outputs, tasks, progress and ephemeral gates, checkpoints and the commit ledger. run.log is
// left out: status only stats it (and reads at most 2 MiB of a log with named stages), while cat would read
// all of it, which would flatter runwatch.
func floorFind(ws string) string {
	return fmt.Sprintf(`find %s \( -name .git -o -name node_modules \) -prune -o -type f \( -name '*.env' -o -name '*.lock' `+
		`-o -name MANIFEST.yaml -o -name progress.txt -o -name '*.done.json' -o -name commit-ledger.json `+
		`-o -path '*/.jonggrang/*.json' \) -print0 | xargs -0 cat > /dev/null`, shellword.Quote(ws))
}

func dropCaches() error {
	unix.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0o200)
}

func measureStatus(c config, ws string) error {
	floor := floorFind(ws)
	files, bytes, err := floorFiles(ws)
	if err != nil {
		return err
	}
	if f, n, b, err := straceFloor(c.bin, ws); err == nil {
		floor, files, bytes = f, n, b
	} else {
		fmt.Printf("floor: strace not usable (%v): a find of the state files instead\n", err)
	}
	read := readFloor(ws)
	fmt.Printf("\n## status --json over %d runs (floor: %d files, %d KiB)\n", c.resumable+c.jonggrang, files, bytes>>10)
	fmt.Printf("floor: sh -c %q\n", floor)
	fmt.Printf("read floor: sh -c %q\n", read)
	modes := []string{"warm"}
	if c.cold {
		if err := dropCaches(); err != nil {
			fmt.Printf("cold cache: not measured: cannot drop caches (%v)\n", err)
		} else {
			modes = append(modes, "cold")
		}
	}
	for _, mode := range modes {
		var floors, reads, runs, ratios, readRatios []float64
		fmt.Printf("%-5s %5s %12s %12s %12s %14s %14s %7s %7s\n", mode, "round", "floor wall", "floor cpu", "read floor", "status wall", "status cpu", "ratio", "/read")
		if mode == "warm" {
			// One untimed pass of each, so both start from a warm cache.
			if _, err := timeCmd("sh", "-c", floor); err != nil {
				return err
			}
			if _, err := timeCmd("sh", "-c", read); err != nil {
				return err
			}
			if _, err := timeCmd(c.bin, "status", "--json", ws); err != nil {
				return err
			}
		}
		for r := 1; r <= c.rounds; r++ {
			if mode == "cold" {
				if err := dropCaches(); err != nil {
					return err
				}
			}
			f, err := timeCmd("sh", "-c", floor)
			if err != nil {
				return err
			}
			if mode == "cold" {
				if err := dropCaches(); err != nil {
					return err
				}
			}
			rf, err := timeCmd("sh", "-c", read)
			if err != nil {
				return err
			}
			if mode == "cold" {
				if err := dropCaches(); err != nil {
					return err
				}
			}
			s, err := timeCmd(c.bin, "status", "--json", ws)
			if err != nil {
				return err
			}
			for _, bin := range c.old {
				if mode == "cold" {
					if err := dropCaches(); err != nil {
						return err
					}
				}
				o, err := timeCmd(bin, "status", "--json", ws)
				if err != nil {
					return err
				}
				fmt.Printf("%-5s %5d old %s: %.1f ms wall, %.1f ms cpu, %.2fx the read floor, peak RSS %.1f MiB\n", mode, r, bin, ms(o.wall), ms(o.cpu),
					float64(o.wall)/float64(rf.wall), float64(o.maxRSS)/1024)
			}
			ratio, readRatio := float64(s.wall)/float64(f.wall), float64(s.wall)/float64(rf.wall)
			floors, reads, runs = append(floors, ms(f.wall)), append(reads, ms(rf.wall)), append(runs, ms(s.wall))
			ratios, readRatios = append(ratios, ratio), append(readRatios, readRatio)
			fmt.Printf("%-5s %5d %10.1fms %10.1fms %10.1fms %12.1fms %12.1fms %6.2fx %6.2fx  status peak RSS %.1f MiB\n", mode, r, ms(f.wall), ms(f.cpu),
				ms(rf.wall), ms(s.wall), ms(s.cpu), ratio, readRatio, float64(s.maxRSS)/1024)
		}
		fmt.Printf("%-5s floor median %.1f ms, read floor %.1f ms, status median %.1f ms, ratio median %.2fx (range %.2f–%.2fx), "+
			"to the read floor %.2fx (range %.2f–%.2fx); goal ≤ 3x the read floor\n",
			mode, median(floors), median(reads), median(runs), median(ratios), minOf(ratios), maxOf(ratios),
			median(readRatios), minOf(readRatios), maxOf(readRatios))
	}
	return nil
}

// readFloor is issue 35's floor: the bytes status needs read once, nothing listed twice (the strace floor
// also lists every folder with ls -f, which flatters the ratio): every state file, lock, manifest and
// run.log, found by one find and read whole by cat.
func readFloor(ws string) string {
	return fmt.Sprintf(`find %s \( -name '*.env' -o -name MANIFEST.yaml -o -name run.log -o -name '*.lock' \) -print0 | xargs -0 cat > /dev/null`,
		shellword.Quote(ws))
}

// straceFloor is the honest floor of status: the regular files one `status --json` opens, each read whole
// with cat, and the folders it opens, listed with ls -f (status reads less of some: a run.log is only
// stat'ed or its head read). It returns the shell command and how many files and bytes it reads.
func straceFloor(bin, ws string) (string, int, int64, error) {
	if _, err := exec.LookPath("strace"); err != nil {
		return "", 0, 0, err
	}
	trace := filepath.Join(os.TempDir(), "scale-status.strace")
	cmd := exec.Command("strace", "-f", "-qq", "-e", "trace=openat", "-o", trace, bin, "status", "--json", ws)
	cmd.Stdout = io.Discard
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() > 1 {
			return "", 0, 0, err
		}
	}
	b, err := os.ReadFile(trace)
	os.Remove(trace)
	if err != nil {
		return "", 0, 0, err
	}
	seen := map[string]bool{}
	var files, dirs []string
	var total int64
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, "openat(") || strings.Contains(line, "= -1") {
			continue
		}
		_, rest, ok := strings.Cut(line, "\"")
		p, _, ok2 := strings.Cut(rest, "\"")
		if !ok || !ok2 || seen[p] || !strings.HasPrefix(p, ws) {
			continue
		}
		seen[p] = true
		st, err := os.Stat(p)
		switch {
		case err != nil:
		case st.IsDir():
			dirs = append(dirs, p)
		case st.Mode().IsRegular():
			files = append(files, p)
			total += st.Size()
		}
	}
	lists := filepath.Join(filepath.Dir(ws), "floor")
	if err := os.WriteFile(lists+".files", []byte(strings.Join(files, "\x00")), 0o644); err != nil {
		return "", 0, 0, err
	}
	if err := os.WriteFile(lists+".dirs", []byte(strings.Join(dirs, "\x00")), 0o644); err != nil {
		return "", 0, 0, err
	}
	fmt.Printf("floor: the %d files and %d folders status opens (strace), read and listed\n", len(files), len(dirs))
	return fmt.Sprintf("xargs -0 cat < %s > /dev/null; xargs -0 ls -f < %s > /dev/null", shellword.Quote(lists+".files"), shellword.Quote(lists+".dirs")),
		len(files), total, nil
}

// floorFiles counts the files the floor reads (and their bytes), walking the workspace as find does.
func floorFiles(ws string) (int, int64, error) {
	out, err := exec.Command("sh", "-c", strings.Replace(floorFind(ws), "xargs -0 cat > /dev/null", "xargs -0 wc -c | grep ' total$'", 1)+"; "+
		strings.Replace(floorFind(ws), "-print0 | xargs -0 cat > /dev/null", "-print | wc -l", 1)).Output()
	if err != nil {
		return 0, 0, err
	}
	var total int64
	var files int
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[1] == "total":
			n, _ := strconv.ParseInt(f[0], 10, 64)
			total += n
		case len(f) == 1:
			files, _ = strconv.Atoi(f[0])
		}
	}
	return files, total, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// pty is a pseudo-terminal the dashboard runs in, as it would in a terminal pane (openPTY: pty_linux.go).
type pty struct{ master, slave *os.File }

// dashboard is a runwatch process in a pty whose output is searched as it arrives.
type dashboard struct {
	cmd   *exec.Cmd
	pty   *pty
	start time.Time
	seen  chan seenText
	buf   bytes.Buffer
	want  []*regexp.Regexp
}

type seenText struct {
	text string
	at   time.Time
}

// startDashboard starts the binary with args in a 140x40 pty and reports the first time each of want matches
// its output. Frames are cell diffs (a count going from 1199 to 1200 rewrites only "200"), so the patterns
// look at the window title, which the dashboard sets whole with every change: "runwatch: N runs, …".
func startDashboard(bin string, want []*regexp.Regexp, args ...string) (*dashboard, error) {
	p, err := openPTY(140, 40)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.slave, p.slave, p.slave
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	d := &dashboard{cmd: cmd, pty: p, seen: make(chan seenText, len(want)), want: want}
	d.start = time.Now()
	if err := cmd.Start(); err != nil {
		p.master.Close()
		p.slave.Close()
		return nil, err
	}
	go d.read()
	return d, nil
}

func (d *dashboard) read() {
	found := make([]bool, len(d.want))
	chunk := make([]byte, 64<<10)
	for {
		n, err := d.pty.master.Read(chunk)
		at := time.Now()
		if n > 0 {
			if os.Getenv("SCALE_DEBUG") != "" {
				fmt.Fprintf(os.Stderr, "read %d: %q\n", n, chunk[:min(n, 200)])
			}
			d.buf.Write(chunk[:n])
			// Frames are cell diffs: search only what arrived plus a margin, not the whole history again.
			tail := d.buf.Bytes()
			if len(tail) > n+256 {
				tail = tail[len(tail)-n-256:]
			}
			for i, w := range d.want {
				if !found[i] && w.Match(tail) {
					found[i] = true
					d.seen <- seenText{w.String(), at}
				}
			}
			if d.buf.Len() > 1<<20 {
				keep := append([]byte(nil), d.buf.Bytes()[d.buf.Len()-4096:]...)
				d.buf.Reset()
				d.buf.Write(keep)
			}
		}
		if err != nil {
			if os.Getenv("SCALE_DEBUG") != "" {
				fmt.Fprintf(os.Stderr, "read: %v\n", err)
			}
			return
		}
	}
}

// await waits for the pattern to match and returns how long after the start it did.
func (d *dashboard) await(re *regexp.Regexp, timeout time.Duration) (time.Duration, error) {
	text := re.String()
	deadline := time.After(timeout)
	for {
		select {
		case s := <-d.seen:
			if s.text == text {
				return s.at.Sub(d.start), nil
			}
		case <-deadline:
			return 0, fmt.Errorf("%q did not appear within %s", text, timeout)
		}
	}
}

func (d *dashboard) stop() {
	_, _ = d.pty.master.Write([]byte("q"))
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = d.cmd.Process.Kill()
		<-done
	}
	d.pty.master.Close()
	d.pty.slave.Close()
}

// memory reads VmRSS and VmHWM of pid, in KiB.
func memory(pid int) (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = v
		case "VmHWM:":
			hwm = v
		}
	}
	return rss, hwm
}

func measureFrame(c config, ws string, total int) error {
	fmt.Printf("\n## dashboard over %d runs in a 140x40 pty (runwatch --read-only DIR)\n", total)
	fmt.Printf("floor: the discovery walk alone, find DIR -name state.env -o -name MANIFEST.yaml\n")
	fmt.Printf("%5s %12s %14s %16s %12s %12s\n", "round", "floor", "first runs", "all runs loaded", "RSS", "peak RSS")
	var firsts, alls, rsss []float64
	for r := 1; r <= c.rounds; r++ {
		f, err := timeCmd("sh", "-c", fmt.Sprintf("find %s \\( -name state.env -o -name MANIFEST.yaml \\) > /dev/null", shellword.Quote(ws)))
		if err != nil {
			return err
		}
		firstRe := regexp.MustCompile(`\x1b\]2;runwatch: [1-9]`)
		allRe := regexp.MustCompile(fmt.Sprintf(`\x1b\]2;runwatch: %d runs`, total))
		d, err := startDashboard(c.bin, []*regexp.Regexp{firstRe, allRe}, "--read-only", ws)
		if err != nil {
			return err
		}
		first, err := d.await(firstRe, 30*time.Second)
		if err != nil {
			d.stop()
			return err
		}
		all, err := d.await(allRe, 60*time.Second)
		if err != nil {
			d.stop()
			return err
		}
		// Let the first batches of liveness checks and the log index settle before reading memory.
		time.Sleep(2 * time.Second)
		rss, hwm := memory(d.cmd.Process.Pid)
		d.stop()
		firsts, alls, rsss = append(firsts, ms(first)), append(alls, ms(all)), append(rsss, float64(rss)/1024)
		fmt.Printf("%5d %10.1fms %12.1fms %14.1fms %9.1f MiB %9.1f MiB\n", r, ms(f.wall), ms(first), ms(all), float64(rss)/1024, float64(hwm)/1024)
	}
	fmt.Printf("first frame with runs median %.1f ms (goal ≤ 250 ms); all loaded median %.1f ms; RSS median %.1f MiB (goal ≤ 80 MiB)\n",
		median(firsts), median(alls), median(rsss))
	return nil
}

// measureBrief times `runwatch brief --json` on one resumable run of the workspace copied with a run.log
// grown to c.logSize, beside the same run with its own small log and a plain read of the big log.
func measureBrief(c config, ws string) error {
	src := ""
	entries, err := os.ReadDir(filepath.Join(ws, "reports"))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "generated-task-0000") {
			src = filepath.Join(ws, "reports", e.Name())
		}
	}
	if src == "" {
		return errors.New("no generated-task-0000 run in the workspace")
	}
	big := filepath.Join(c.dir, "biglog", "reports", filepath.Base(src))
	logPath := filepath.Join(big, "run.log")
	if st, err := os.Stat(logPath); err != nil || st.Size() < c.logSize {
		if err := os.RemoveAll(filepath.Dir(filepath.Dir(big))); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(big), 0o755); err != nil {
			return err
		}
		if out, err := exec.Command("cp", "-a", src, big).CombinedOutput(); err != nil {
			return fmt.Errorf("cp: %v: %s", err, out)
		}
		t0 := time.Now()
		if _, err := sim.GrowLog(logPath, c.logSize); err != nil {
			return err
		}
		fmt.Printf("grew %s to %d MiB in %s\n", logPath, c.logSize>>20, time.Since(t0).Round(time.Millisecond))
	}
	st, err := os.Stat(logPath)
	if err != nil {
		return err
	}
	fmt.Printf("\n## brief --json of a resumable run with a %.2f GiB run.log (%s)\n", float64(st.Size())/(1<<30), big)
	fmt.Printf("floor: the same brief of the run with its own %d KiB log; cat of the whole big log once\n", logSize(filepath.Join(src, "run.log"))>>10)
	cache := filepath.Join(c.dir, "cache")
	if err := os.RemoveAll(cache); err != nil {
		return err
	}
	env := append(os.Environ(), "XDG_CACHE_HOME="+cache)
	cat, err := timeCmd("sh", "-c", "cat "+shellword.Quote(logPath)+" > /dev/null")
	if err != nil {
		return err
	}
	small, err := timeEnv(env, c.bin, "brief", "--json", src)
	if err != nil {
		return err
	}
	first, err := timeEnv(env, c.bin, "brief", "--json", big)
	if err != nil {
		return err
	}
	fmt.Printf("cat of the big log %.1f ms; brief with its own log %.1f ms; first brief of the big log (no index yet: reads it all) %.1f ms\n",
		ms(cat.wall), ms(small.wall), ms(first.wall))
	fmt.Printf("%5s %18s %22s\n", "round", "brief, own log", "brief, big log +1 MiB")
	var briefs []float64
	for r := 1; r <= c.rounds; r++ {
		// The writer keeps appending between briefs; the index covers what was there before.
		if st, err = os.Stat(logPath); err != nil {
			return err
		}
		if _, err := sim.GrowLog(logPath, st.Size()+1<<20); err != nil {
			return err
		}
		small, err := timeEnv(env, c.bin, "brief", "--json", src)
		if err != nil {
			return err
		}
		b, err := timeEnv(env, c.bin, "brief", "--json", big)
		if err != nil {
			return err
		}
		briefs = append(briefs, ms(b.wall))
		fmt.Printf("%5d %16.1fms %20.1fms\n", r, ms(small.wall), ms(b.wall))
	}
	fmt.Printf("brief of the big log, indexed, median %.1f ms (goal ≤ 100 ms)\n", median(briefs))
	return nil
}

func logSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// measureSoak runs the demo in a pty for c.soak and samples its memory every 30 s.
func measureSoak(c config, work string) error {
	demoDir := filepath.Join(work, "demo")
	fmt.Printf("\n## runwatch demo --speed %g for %s in a 140x40 pty, RSS every 30 s\n", c.speed, c.soak)
	title := regexp.MustCompile(`\x1b\]2;runwatch: [1-9]`)
	d, err := startDashboard(c.bin, []*regexp.Regexp{title}, "demo", "--dir", demoDir, "--speed", strconv.FormatFloat(c.speed, 'f', -1, 64))
	if err != nil {
		return err
	}
	defer d.stop()
	if _, err := d.await(title, 30*time.Second); err != nil {
		return err
	}
	t0 := time.Now()
	var samples []float64
	for {
		rss, hwm := memory(d.cmd.Process.Pid)
		if rss == 0 {
			return errors.New("the demo exited during the soak")
		}
		samples = append(samples, float64(rss)/1024)
		fmt.Printf("%8s RSS %6.1f MiB, peak %6.1f MiB\n", time.Since(t0).Round(time.Second), float64(rss)/1024, float64(hwm)/1024)
		if time.Since(t0) >= c.soak {
			break
		}
		time.Sleep(min(30*time.Second, c.soak-time.Since(t0)+time.Millisecond))
	}
	fmt.Printf("RSS first %.1f, max %.1f, last %.1f MiB\n", samples[0], maxOf(samples), samples[len(samples)-1])
	return nil
}
