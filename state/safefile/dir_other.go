//go:build !linux

package safefile

import "io"

func readDir(path string, n int) ([]DirEntry, error) {
	f, err := OpenDir(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	listed, err := f.ReadDir(n)
	if err == io.EOF {
		err = nil
	}
	entries := make([]DirEntry, len(listed))
	for i, e := range listed {
		entries[i] = DirEntry{Name: e.Name(), Type: e.Type()}
	}
	return entries, err
}
