//go:build !linux

package state

import "io/fs"

// walkCacheSupported is false off Linux, where ctime's field is named otherwise: completion walks the tree.
const walkCacheSupported = false

func statKeyOf(fs.FileInfo) statKey { return statKey{} }
