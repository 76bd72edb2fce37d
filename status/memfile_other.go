//go:build !linux

package status

import "os"

// memoryFile: no anonymous memory files here; the caller keeps the bytes in memory itself.
func memoryFile(string) *os.File { return nil }
