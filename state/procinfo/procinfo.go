// Package procinfo answers liveness questions about local processes for lock verdicts. Alive is the same on
// every Unix; a process's start time (which catches a pid reused after the lock holder died) and whether it
// is a kernel thread are read per system: /proc on Linux (procinfo_linux.go), sysctl kern.proc on macOS and
// FreeBSD (procinfo_darwin.go, procinfo_freebsd.go). Elsewhere (procinfo_other.go) StartTime reports false:
// a pid reused by an unrelated process then looks like the live holder, and the lock is judged held (the
// safe side: nothing is taken over on a guess).
package procinfo

import (
	"errors"
	"syscall"
)

// System is the real model.ProcInspector of this host.
type System struct{}

// Alive reports whether pid exists on this host. kill(pid, 0) sends nothing; EPERM means the process exists
// but belongs to someone else, which is still alive.
func (System) Alive(pid int) bool {
	// kill(0) and kill(-n) address process groups, not a process: never let a lock file steer that.
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
