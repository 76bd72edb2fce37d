//go:build !linux

package safefile

// The BSDs and macOS give procfs and devfs files a type other than regular, which Open already refuses.
func pseudoFSOf(string, uint64) string { return "" }

func pseudoFSOfFD(int, uint64) string { return "" }
