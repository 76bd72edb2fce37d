package procinfo

import (
	"time"

	"golang.org/x/sys/unix"
)

// StartTime returns when pid started, from sysctl kern.proc.pid (p_starttime). It is what catches a pid
// reused by an unrelated process after the lock holder died.
func (System) StartTime(pid int) (time.Time, bool) {
	kp, ok := kinfo(pid)
	if !ok {
		return time.Time{}, false
	}
	tv := kp.Proc.P_starttime
	return time.Unix(tv.Sec, int64(tv.Usec)*1000), true
}

// pSystem is P_SYSTEM from XNU's sys/proc.h: the kernel's own process.
const pSystem = 0x200

// KernelThread reports whether pid is the kernel's (kernel_task, P_SYSTEM).
func (System) KernelThread(pid int) bool {
	kp, ok := kinfo(pid)
	return ok && kp.Proc.P_flag&pSystem != 0
}

func kinfo(pid int) (*unix.KinfoProc, bool) {
	if pid <= 0 {
		return nil, false
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	// A pid that does not exist gives a zeroed record, not an error.
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return nil, false
	}
	return kp, true
}
