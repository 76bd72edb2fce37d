//go:build darwin && !portable

package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// CanReportDisplaced is whether this build can swap a file into place and so hand back the bytes a writer
// renamed in between the last check and ours. On macOS it can, on APFS (renamex_np's RENAME_SWAP).
const CanReportDisplaced = true

// swap exchanges tmpName and base in d with renameatx_np(RENAME_SWAP). ok is false, with no error, when the
// filesystem cannot swap (HFS+, network and FUSE filesystems answer ENOTSUP or EINVAL): the caller renames
// plainly.
func swap(d dirFD, tmpName, base string) (ok bool, err error) {
	err = unix.RenameatxNp(d.fd, tmpName, d.fd, base, unix.RENAME_SWAP)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return false, nil
	}
	return err == nil, err
}
