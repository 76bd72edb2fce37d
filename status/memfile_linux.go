//go:build linux

package status

import (
	"os"

	"golang.org/x/sys/unix"
)

// memoryFile is an anonymous file in memory (memfd): a file to spill into that writes nothing to any
// filesystem, for read-only mode. nil when the system refuses one.
func memoryFile(name string) *os.File {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), "memfd:"+name)
}
