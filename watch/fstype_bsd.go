//go:build darwin || freebsd

package watch

import (
	"os"
	"strings"
	"syscall"
)

// remoteKinds are statfs f_fstypename values of filesystems where kqueue sees only local changes (or
// nothing): their runs are polled. FUSE mounts name themselves after the driver ("macfuse", "osxfuse",
// "fusefs.sshfs"), so prefixes count too.
var remoteKinds = map[string]string{
	"nfs":    "nfs",
	"smbfs":  "smb",
	"afpfs":  "afp",
	"webdav": "webdav",
	"cifs":   "cifs",
	"p9fs":   "9p",
}

// remoteFS reports the kind of network or userspace filesystem dir is on, if it is one.
func remoteFS(dir string) (string, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "", false
	}
	b := make([]byte, 0, len(st.Fstypename))
	for _, c := range st.Fstypename {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return remoteKind(string(b))
}

func remoteKind(name string) (string, bool) {
	if kind, ok := remoteKinds[name]; ok {
		return kind, true
	}
	for _, fuse := range []string{"fuse", "macfuse", "osxfuse"} { // fusefs on FreeBSD
		if strings.HasPrefix(name, fuse) {
			return "fuse", true
		}
	}
	return "", false
}

// ctime is a file's last status change (UnixNano), -1 when unknown.
func ctime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctimespec.Nano()
	}
	return -1
}
