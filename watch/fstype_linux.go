package watch

import (
	"os"
	"syscall"
)

// remoteMagic maps statfs f_type values of filesystems where inotify sees only local changes (or nothing) to
// a name for the health line. Values are the kernel's *_SUPER_MAGIC constants.
var remoteMagic = map[int64]string{
	0x6969:     "nfs",
	0x517b:     "smb",
	0xfe534d42: "smb2",
	0xff534d42: "cifs",
	0x65735546: "fuse",
	0x01021997: "9p",
	0x00c36400: "ceph",
	0x5346414f: "afs",
	0x47504653: "gpfs",
	0x0bd00bd0: "lustre",
}

// remoteFS reports the kind of network or userspace filesystem dir is on, if it is one.
func remoteFS(dir string) (string, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "", false
	}
	name, ok := remoteMagic[int64(st.Type)]
	return name, ok
}

// ctime is a file's last status change (UnixNano), -1 when unknown.
func ctime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return -1
}
