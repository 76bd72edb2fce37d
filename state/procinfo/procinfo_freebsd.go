//go:build freebsd && (amd64 || arm64)

package procinfo

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"
)

// x/sys/unix has no struct kinfo_proc for FreeBSD, so the few fields needed are read at their offsets in
// sys/user.h's layout for 64-bit systems (KINFO_PROC_SIZE 1088, fixed by the ABI since FreeBSD 7; the
// record's own size is checked before anything is read).
const (
	kinfoProcSize  = 1088
	kiPidOffset    = 72  // ki_pid
	kiStartOffset  = 336 // ki_start, a struct timeval
	kiFlagOffset   = 368 // ki_flag, a long
	pKproc         = 0x4 // P_KPROC from sys/proc.h: a kernel process
	kiStructsizeAt = 0
)

// StartTime returns when pid started, from sysctl kern.proc.pid (ki_start). It is what catches a pid reused
// by an unrelated process after the lock holder died.
func (System) StartTime(pid int) (time.Time, bool) {
	raw, ok := kinfo(pid)
	if !ok {
		return time.Time{}, false
	}
	sec := int64(binary.LittleEndian.Uint64(raw[kiStartOffset:]))
	usec := int64(binary.LittleEndian.Uint64(raw[kiStartOffset+8:]))
	return time.Unix(sec, usec*1000), true
}

// KernelThread reports whether pid is a kernel process (P_KPROC).
func (System) KernelThread(pid int) bool {
	raw, ok := kinfo(pid)
	return ok && binary.LittleEndian.Uint64(raw[kiFlagOffset:])&pKproc != 0
}

func kinfo(pid int) ([]byte, bool) {
	if pid <= 0 {
		return nil, false
	}
	raw, err := unix.SysctlRaw("kern.proc.pid", pid)
	if err != nil || len(raw) < kinfoProcSize ||
		binary.LittleEndian.Uint32(raw[kiStructsizeAt:]) != kinfoProcSize ||
		int(int32(binary.LittleEndian.Uint32(raw[kiPidOffset:]))) != pid {
		return nil, false
	}
	return raw, true
}
