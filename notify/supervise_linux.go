//go:build linux

package notify

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"runwatch/childproc"
)

// A hook's processes must not outlive it, nor runwatch: a process group is not enough, since a hook's child
// can leave it (setsid), outlive a hook that exits at once (`cmd &`), and nothing of runwatch runs when it is
// killed. So each hook runs under a supervisor, runwatch itself started again with supervisorEnv set (see
// init): a child subreaper (every orphan of the hook's tree is re-parented to it, wherever it moved to), it
// gets the parent-death signal from runwatch (childproc), and when the hook ends, or its time is up, or
// runwatch goes, it kills every process still below it and says which were left running.
const supervisorEnv = "RUNWATCH_HOOK_SUPERVISOR"

func init() {
	if os.Getenv(supervisorEnv) == "1" {
		os.Exit(supervise(os.Args[1:]))
	}
}

// runHook runs argv under the supervisor, its output to out, stopped (with everything it started) when ctx
// ends. left names the processes the hook left running when it ended by itself (they were ended).
func runHook(ctx context.Context, argv []string, out io.Writer) (left []string, err error) {
	// This very binary, even once `runwatch install` has replaced the file it was started from.
	self := "/proc/self/exe"
	if _, err := os.Stat(self); err != nil {
		if self, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("cannot start the hook's supervisor (runwatch itself): %w", err)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd := exec.Command(self, argv...)
	cmd.Args[0] = "runwatch-hook"
	cmd.Env = append(os.Environ(), supervisorEnv+"=1")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{w}
	// The supervisor ends the hook's processes before it exits, so its output closes with it; this only
	// bounds a supervisor that was itself killed.
	cmd.WaitDelay = 5 * time.Second
	err = childproc.Start(cmd)
	w.Close()
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { cmd.Process.Signal(syscall.SIGTERM) })
	defer stop()
	report := make(chan []string, 1)
	go func() {
		var lines []string
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		report <- lines
	}()
	werr := cmd.Wait()
	status := ""
	for _, l := range <-report {
		switch what, rest, _ := strings.Cut(l, " "); what {
		case "left":
			left = append(left, rest)
		case "status":
			status = rest
		}
	}
	switch {
	case status == "ok":
		return left, nil
	case status != "":
		return left, errors.New(status)
	}
	return left, werr
}

// supervise is the supervisor's whole life (see supervisorEnv). Its report goes to descriptor 3: a line
// "left PID (NAME)" per process the hook left running, then "status ok" or "status WHY".
func supervise(argv []string) int {
	runtime.LockOSThread() // the hook's parent-death signal follows this thread
	os.Unsetenv(supervisorEnv)
	report := os.NewFile(3, "report")
	say := func(format string, a ...any) { fmt.Fprintf(report, format+"\n", a...) }
	if len(argv) == 0 {
		say("status no command")
		return 2
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		say("status cannot become the hook's subreaper: %v", err)
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		say("status %v", err)
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		for _, p := range endTree() {
			say("left %s", p)
		}
		if err != nil {
			say("status %v", err)
			return 1
		}
		say("status ok")
		return 0
	case s := <-sigs:
		// Its time is up, or runwatch is gone: everything goes, the hook first among them.
		endTree()
		<-done
		say("status stopped by %v", s)
		return 1
	}
}

// endTree kills every process below this one and reaps them, until none is left (a process may fork while
// the tree is being killed), and names those it found first.
func endTree() []string {
	var first []string
	for round := 0; round < 500; round++ {
		pids := descendants(os.Getpid())
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if round == 0 {
				name := "?"
				if comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
					name = Plain(strings.TrimSpace(string(comm)))
				}
				first = append(first, fmt.Sprintf("%d (%s)", pid, name))
			}
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
		reap()
	}
	reap()
	return first
}

// reap collects the exit of every child that has ended (the killed, and orphans re-parented here).
func reap() {
	for {
		var ws syscall.WaitStatus
		if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
			return
		}
	}
}

// descendants lists the processes below root that are not zombies (dead, waiting to be reaped), from the
// parent of each in /proc.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, children[p]...)
		queue = append(queue, children[p]...)
	}
	return out
}
