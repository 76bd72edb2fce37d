//go:build !freebsd

package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// linkRefused reports whether err is an O_NOFOLLOW open refusing a symlink (ELOOP; FreeBSD's answer is in
// nofollow_freebsd.go). EMLINK is not one here: on Linux it is link(2)'s "too many links".
func linkRefused(err error) bool { return errors.Is(err, unix.ELOOP) }
