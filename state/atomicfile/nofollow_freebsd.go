package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// linkRefused reports whether err is an O_NOFOLLOW open refusing a symlink: FreeBSD answers EMLINK where
// Linux and macOS answer ELOOP (open(2)).
func linkRefused(err error) bool { return errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) }
