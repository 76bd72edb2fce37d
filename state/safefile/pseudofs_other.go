//go:build !linux

package safefile

// The BSDs and macOS give procfs and devfs files a type other than regular, which Open already refuses.
func pseudoFSOf(string) string { return "" }

func pseudoFSOfFD(int) string { return "" }
