//go:build !linux

package main

import (
	"errors"
	"runtime"
)

// openPTY is Linux's /dev/ptmx dance; the scale bench is measured on Linux only (docs/BENCHMARKS.md).
func openPTY(int, int) (*pty, error) {
	return nil, errors.New("the scale bench's pty is Linux only, not " + runtime.GOOS)
}
