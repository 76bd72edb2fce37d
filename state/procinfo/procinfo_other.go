//go:build !linux && !darwin && !(freebsd && (amd64 || arm64))

package procinfo

import "time"

// StartTime is not known here: a reused pid looks like the live holder (see the package comment).
func (System) StartTime(int) (time.Time, bool) { return time.Time{}, false }

// KernelThread is not known here.
func (System) KernelThread(int) bool { return false }
