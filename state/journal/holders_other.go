//go:build !linux

package journal

import "os"

// lockHolders: only Linux lists who holds a flock (/proc/locks).
func lockHolders(*os.File) string { return "another process (this system does not say which)" }
