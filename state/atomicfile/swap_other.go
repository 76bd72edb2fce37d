//go:build !(linux || darwin) || portable

package atomicfile

// CanReportDisplaced is whether this build can swap a file into place and so hand back the bytes a writer
// renamed in between the last check and ours. Here it cannot (FreeBSD has no exchanging rename; the build
// tag portable forces this on Linux): a write landing between the last check and the plain rename is
// overwritten unseen. The window is the few microseconds between the two.
const CanReportDisplaced = false

// swap has no exchanging rename to offer: the caller renames plainly.
func swap(dirFD, string, string) (bool, error) { return false, nil }
