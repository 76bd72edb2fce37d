package safefile

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DirEntry is one name a folder's listing held, with its type as the listing gave it (fs.DirEntry.Type's
// bits): a value, where os.ReadDir makes an object and an interface an entry.
type DirEntry struct {
	Name string
	Type fs.FileMode
}

// IsDir reports whether the entry is a folder (a symlink to one is not).
func (e DirEntry) IsDir() bool { return e.Type.IsDir() }

// ReadDir lists at most n entries (n > 0) of the folder at path in the folder's own order, without "." and
// "..", as (*os.File).ReadDir(n) does. It stops early at an error, returning what it had read with it; an
// entry gone between the listing and the look at its type (a filesystem that gives none) is left out, as
// os.ReadDir leaves it.
func ReadDir(path string, n int) ([]DirEntry, error) { return readDir(path, n) }

// SortByName sorts entries by name, as os.ReadDir returns them.
func SortByName(entries []DirEntry) {
	slices.SortFunc(entries, func(a, b DirEntry) int { return strings.Compare(a.Name, b.Name) })
}

// typeOf is an entry's type when the listing did not say (DT_UNKNOWN), as os.ReadDir learns it: by Lstat.
func typeOf(dir, name string) (fs.FileMode, error) {
	fi, err := os.Lstat(filepath.Join(dir, name))
	if err != nil {
		return 0, err
	}
	return fi.Mode().Type(), nil
}
