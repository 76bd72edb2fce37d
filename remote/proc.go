package remote

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"runwatch/childproc"
	"runwatch/state/procinfo"
)

// Nothing runwatch starts over ssh may outlive it, however it ends: childproc starts each child with the
// parent-death signal and a process group of its own.
func startChild(c *exec.Cmd) error { return childproc.Start(c) }

// runChild is c.Run with startChild.
func runChild(c *exec.Cmd) error { return childproc.Run(c) }

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
	_ = runChild(s.command(ctx, append(s.base(r, true), "-O", "exit", r.Dest())))
	_ = os.Remove(sock)
	_ = os.Remove(ownerPath(sock))
}
