//go:build linux && !portable

package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// CanReportDisplaced is whether this build can swap a file into place and so hand back the bytes a writer
// renamed in between the last check and ours. On Linux it can, on filesystems with RENAME_EXCHANGE.
const CanReportDisplaced = true

// swap exchanges tmpName and base in d with renameat2(RENAME_EXCHANGE). ok is false, with no error, when the
// filesystem cannot exchange (EINVAL, EOPNOTSUPP; ENOSYS before Linux 3.15): the caller renames plainly.
func swap(d dirFD, tmpName, base string) (ok bool, err error) {
	err = unix.Renameat2(d.fd, tmpName, d.fd, base, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return false, nil
	}
	return err == nil, err
}
