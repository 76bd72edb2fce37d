//go:build linux && !portable

package atomicfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// resolveFlags: stay beneath the root, follow no link of any kind.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openBeneath opens rel with openat2, which resolves the whole name in the kernel, beneath the root and
// through no link. done is false when the kernel lacks openat2: the caller walks the components instead.
func (r *Root) openBeneath(rel, full string, flags int, mode uint32) (f *os.File, done bool, err error) {
	for range 16 {
		fd, err := unix.Openat2(int(r.f.Fd()), rel, &unix.OpenHow{Flags: uint64(flags), Mode: uint64(mode), Resolve: resolveFlags})
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), full), true, nil
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			continue // EAGAIN: a rename raced the lookup; the kernel asks to retry
		case errors.Is(err, unix.ENOSYS):
			noOpenat2.Store(true)
			return nil, false, nil
		default:
			return nil, true, r.pathErr("open", full, err)
		}
	}
	return nil, false, nil // sixteen retries: the walk is as safe, one component at a time
}
