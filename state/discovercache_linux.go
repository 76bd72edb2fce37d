package state

import (
	"io/fs"
	"syscall"
)

const walkCacheSupported = true

func statKeyOf(fi fs.FileInfo) statKey {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statKey{}
	}
	return statKey{dev: uint64(st.Dev), ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), size: st.Size, ok: true}
}
