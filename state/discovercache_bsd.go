//go:build darwin || freebsd

package state

import (
	"io/fs"
	"syscall"
)

const walkCacheSupported = true

// statKeyOf is discovercache_linux.go's, with the BSD names of the time fields.
func statKeyOf(fi fs.FileInfo) statKey {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statKey{}
	}
	return statKey{dev: uint64(st.Dev), ino: st.Ino, mtime: st.Mtimespec.Nano(), ctime: st.Ctimespec.Nano(), size: st.Size, ok: true}
}
