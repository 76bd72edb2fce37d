//go:build !linux && !darwin && !freebsd

package watch

import "os"

// remoteFS knows no filesystem types here (Linux, macOS and FreeBSD have their files); polling can still be
// forced with Options.Poll.
func remoteFS(string) (string, bool) { return "", false }

// ctime is unknown here (the field's name differs by system): every run read before watching began is
// read again.
func ctime(os.FileInfo) int64 { return -1 }
