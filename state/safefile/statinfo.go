package safefile

import (
	"io/fs"
	"syscall"
	"time"
)

// statInfo is the fs.FileInfo of a descriptor's fstat, as os.File.Stat would make it without the syscall.
type statInfo struct {
	name string
	st   syscall.Stat_t
}

func infoOf(name string, st *syscall.Stat_t) fs.FileInfo { return &statInfo{name: name, st: *st} }

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) ModTime() time.Time { return modTime(&s.st) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.st }

func (s *statInfo) Mode() fs.FileMode { return fileMode(&s.st) }

// fileMode is the fs.FileMode of a raw stat, as os.Stat makes it.
func fileMode(st *syscall.Stat_t) fs.FileMode {
	m := uint32(st.Mode)
	mode := fs.FileMode(m & 0o777)
	if m&syscall.S_IFMT != syscall.S_IFREG {
		mode |= modeOf(m)
	}
	if m&syscall.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&syscall.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&syscall.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
