//go:build linux

package safefile

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// pseudoFS names the kernel filesystems whose "regular files" are not bytes on a disk: reading one can wait
// forever (/proc/kmsg answers poll, so Go parks the read in its netpoller even with O_NONBLOCK), consume
// something (the kernel log), or change the kernel (sysfs, debugfs). Their st_mode says regular file, so
// only the filesystem's magic tells them apart.
var pseudoFS = map[uint32]string{
	unix.PROC_SUPER_MAGIC:    "procfs (/proc)",
	unix.SYSFS_MAGIC:         "sysfs (/sys)",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.CGROUP_SUPER_MAGIC:  "cgroupfs",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2fs",
	unix.BPF_FS_MAGIC:        "bpffs",
	unix.PSTOREFS_MAGIC:      "pstore",
	0x62656570:               "configfs",
	unix.EFIVARFS_MAGIC:      "efivarfs",
	unix.DEVPTS_SUPER_MAGIC:  "devpts",
	unix.SELINUX_MAGIC:       "selinuxfs",
	unix.SMACK_MAGIC:         "smackfs",
	unix.BINFMTFS_MAGIC:      "binfmt_misc",
	unix.ANON_INODE_FS_MAGIC: "anon_inodefs",
	unix.NSFS_MAGIC:          "nsfs",
	unix.PIPEFS_MAGIC:        "pipefs",
	unix.SOCKFS_MAGIC:        "sockfs",
}

// fsOfDev remembers each device's filesystem as a statfs or fstatfs last named it, so that the check before
// an open costs a statfs once per filesystem, not once per file (status opens thousands). The check on the
// descriptor after the open still asks the kernel every time: a device number freed by an unmount and
// given to another filesystem can fool the first check, never the second.
//
// A map swapped whole, not a sync.Map: a sync.Map's key is an interface, and a device number in one is an
// allocation on every look-up. Each descriptor's check learns its device again; the map changes only when
// that tells it something new.
var fsOfDev atomic.Pointer[map[uint64]string]

func knownFS(dev uint64) (string, bool) {
	if m := fsOfDev.Load(); m != nil {
		kind, ok := (*m)[dev]
		return kind, ok
	}
	return "", false
}

func learnFS(dev uint64, kind string) {
	for {
		old := fsOfDev.Load()
		if old != nil {
			if k, ok := (*old)[dev]; ok && k == kind {
				return
			}
		}
		m := map[uint64]string{dev: kind}
		if old != nil {
			for d, k := range *old {
				if d != dev {
					m[d] = k
				}
			}
		}
		if fsOfDev.CompareAndSwap(old, &m) {
			return
		}
	}
}

// pseudoFSOf names the kernel filesystem path (on device dev) lies on, or "" for a filesystem that holds
// files (ext4, xfs, tmpfs, overlay, nfs...). A path that cannot be statfs'd is left to the open to report.
func pseudoFSOf(path string, dev uint64) string {
	if kind, ok := knownFS(dev); ok {
		return kind
	}
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return ""
	}
	kind := pseudoFS[uint32(st.Type)]
	learnFS(dev, kind)
	return kind
}

// pseudoFSOfFD is pseudoFSOf for an open descriptor: what was opened, whatever the path named by then.
func pseudoFSOfFD(fd int, dev uint64) string {
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil {
		return "an unknown filesystem (fstatfs failed)"
	}
	kind := pseudoFS[uint32(st.Type)]
	learnFS(dev, kind)
	return kind
}
