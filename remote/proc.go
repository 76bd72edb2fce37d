package remote

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"runwatch/state/procinfo"
)

// Nothing runwatch starts over ssh may outlive it, however it ends: q and SIGTERM stop the children
// through their contexts, but SIGHUP (a closed terminal), SIGKILL or a crash run no Go code at all. The
// kernel's parent-death signal covers those: each child asks for SIGTERM when its parent dies. Linux sends
// it when the *thread* that forked the child exits, not the process, and the Go runtime may end threads;
// so every child is started from one goroutine locked to its own thread for the life of runwatch.

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

var spawner struct {
	once sync.Once
	reqs chan spawnRequest
}

// startChild starts c from the spawner's thread, with the parent-death signal and a process group of its
// own (so stopping it never signals the dashboard's terminal).
func startChild(c *exec.Cmd) error {
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.Setpgid = true
	setParentDeathSignal(c.SysProcAttr)
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnRequest)
		go func() {
			// Never unlocked: the thread lives as long as this goroutine, which lives as long as runwatch.
			runtime.LockOSThread()
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnRequest{c, done}
	return <-done
}

// runChild is c.Run with startChild.
func runChild(c *exec.Cmd) error {
	if err := startChild(c); err != nil {
		return err
	}
	return c.Wait()
}

// A master's owner is recorded next to its socket: the pid and start time of the runwatch that started it.
// A master whose owner is gone is left over (from a runwatch killed before this rule, or one whose master
// survived somehow): it is stopped and its socket removed, never used, since it may be connected to
// whatever the host alias named back then.

func ownerPath(sock string) string { return sock + ".owner" }

func ownerStamp() string {
	pid := os.Getpid()
	started, _ := procinfo.System{}.StartTime(pid)
	return fmt.Sprintf("%d %d\n", pid, started.UnixNano())
}

// writeOwner records this runwatch as the owner of the master about to bind sock.
func writeOwner(sock string) error {
	tmp := ownerPath(sock) + ".tmp"
	if err := os.WriteFile(tmp, []byte(ownerStamp()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, ownerPath(sock))
}

// ownerAlive reports whether the runwatch recorded as sock's owner still runs (the same process: its pid
// and start time). No record is no owner.
func ownerAlive(sock string) bool {
	b, err := os.ReadFile(ownerPath(sock))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return false
	}
	pid, err1 := strconv.Atoi(f[0])
	ns, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || !validPID(pid) {
		return false
	}
	sys := procinfo.System{}
	if !sys.Alive(pid) {
		return false
	}
	started, ok := sys.StartTime(pid)
	return ok && started.UnixNano() == ns
}

// dropStale stops a master at sock whose owner is gone and removes its socket and record. The socket is
// ours (checked before), so asking its master to exit speaks to our own leftover process.
func (s SSH) dropStale(r Root, sock string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = runChild(s.command(ctx, append(s.base(r), "-O", "exit", r.Dest())))
	_ = os.Remove(sock)
	_ = os.Remove(ownerPath(sock))
}
