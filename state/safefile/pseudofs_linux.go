//go:build linux

package safefile

import "golang.org/x/sys/unix"

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

// pseudoFSOf names the kernel filesystem path lies on, or "" for a filesystem that holds files (ext4, xfs,
// tmpfs, overlay, nfs...). A path that cannot be statfs'd is left to the open to report.
func pseudoFSOf(path string) string {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return ""
	}
	return pseudoFS[uint32(st.Type)]
}

// pseudoFSOfFD is pseudoFSOf for an open descriptor: what was opened, whatever the path named by then.
func pseudoFSOfFD(fd int) string {
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil {
		return "an unknown filesystem (fstatfs failed)"
	}
	return pseudoFS[uint32(st.Type)]
}
