//go:build !linux && !darwin && !freebsd

package state

import "io/fs"

// walkCacheSupported is false where this package does not know the stat fields' names (Linux, macOS and
// FreeBSD have their files): completion walks the tree.
const walkCacheSupported = false

func statKeyOf(fs.FileInfo) statKey { return statKey{} }
