//go:build linux

package journal

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockHolders names the processes /proc/locks says hold a lock on f's file: "pid 4242 (flock)", or
// "another process" when none is listed (an OFD lock has no pid; another pid namespace hides it).
func lockHolders(f *os.File) string {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return "another process"
	}
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return "another process"
	}
	// /proc/locks: "1: FLOCK  ADVISORY  WRITE 4242 fd:00:1234 0 EOF"; waiters' lines have "->" after the
	// number. The device is major:minor in hex.
	// The device is the superblock's, which can differ from st_dev (btrfs subvolumes, overlay): the inode
	// decides when no line has both.
	dev := fmt.Sprintf("%02x:%02x:", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)))
	ino := ":" + strconv.FormatUint(uint64(st.Ino), 10)
	var exact, sameInode []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 6 || fields[1] == "->" || !strings.HasSuffix(fields[5], ino) {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		name := fmt.Sprintf("pid %d", pid)
		if pid == os.Getpid() {
			name += " (this runwatch: another of its actions)"
		} else if comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
			name += " (" + strings.TrimSpace(string(comm)) + ")"
		} else {
			name += " (gone: a process that inherited its descriptor holds it)"
		}
		if fields[5] == dev+ino[1:] {
			exact = append(exact, name)
		} else {
			sameInode = append(sameInode, name)
		}
	}
	who := exact
	if len(who) == 0 {
		who = sameInode
	}
	if len(who) == 0 {
		return "another process (the system does not say which)"
	}
	return strings.Join(who, ", ")
}
