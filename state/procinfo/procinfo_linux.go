package procinfo

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// StartTime returns when pid started, from field 22 of /proc/<pid>/stat (clock ticks after boot) and the
// boot time in /proc/stat. It is what catches a pid reused by an unrelated process after the lock holder died.
func (System) StartTime(pid int) (time.Time, bool) {
	if pid <= 0 {
		return time.Time{}, false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return time.Time{}, false
	}
	ticks, ok := startTicks(data)
	if !ok {
		return time.Time{}, false
	}
	boot, ok := bootTime()
	if !ok {
		return time.Time{}, false
	}
	return boot.Add(time.Duration(ticks) * time.Second / clockTicksPerSecond), true
}

// pfKthread is PF_KTHREAD from the kernel's sched.h, set in the flags of every kernel thread.
const pfKthread = 0x00200000

// KernelThread reports whether pid is a kernel thread (field 9 of /proc/<pid>/stat carries PF_KTHREAD).
func (System) KernelThread(pid int) bool {
	if pid <= 0 {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	flags, ok := statField(data, 9)
	return ok && flags&pfKthread != 0
}

// clockTicksPerSecond is USER_HZ, fixed at 100 on Linux for every architecture's /proc ABI.
const clockTicksPerSecond = 100

// startTicks extracts field 22, the start time in clock ticks after boot.
func startTicks(stat []byte) (uint64, bool) { return statField(stat, 22) }

// statField returns numeric field n (1-based, as in proc(5)) of a /proc/<pid>/stat line. The command name
// (field 2) is in parentheses and may itself contain spaces and parentheses, so fields are counted from the
// last ')'.
func statField(stat []byte, n int) (uint64, bool) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 || n < 3 {
		return 0, false
	}
	fields := bytes.Fields(stat[end+1:])
	// fields[0] is field 3 (state).
	if len(fields) < n-2 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(fields[n-3]), 10, 64)
	return v, err == nil
}

var (
	bootOnce sync.Once
	boot     time.Time
	bootOK   bool
)

func bootTime() (time.Time, bool) {
	bootOnce.Do(func() {
		data, err := os.ReadFile("/proc/stat")
		if err != nil {
			return
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
				secs, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
				if err == nil {
					boot, bootOK = time.Unix(secs, 0), true
				}
				return
			}
		}
	})
	return boot, bootOK
}

// Parent returns pid's parent, from field 4 of /proc/<pid>/stat; false when it cannot be read (the process
// is gone).
func (System) Parent(pid int) (int, bool) {
	if pid <= 0 {
		return 0, false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	ppid, ok := statField(data, 4)
	return int(ppid), ok
}

// Owner returns the user id pid runs as: the owner of /proc/<pid>, which the kernel sets to the process's
// effective uid.
func (System) Owner(pid int) (int, bool) {
	if pid <= 0 {
		return 0, false
	}
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/"+strconv.Itoa(pid), &st); err != nil {
		return 0, false
	}
	return int(st.Uid), true
}
