//go:build !linux

package childproc

import "syscall"

// Elsewhere there is no parent-death signal: children still stop with q and SIGTERM, and a master left by
// a killed runwatch is found by its owner record and never reused.
func setParentDeathSignal(*syscall.SysProcAttr) {}
