package safefile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// ReadDir reads getdents records itself; it must list what os.ReadDir lists, types included.
func TestReadDirListsWhatOSReadDirLists(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 { // more records than one getdents buffer holds
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-%03d-%s.json", i, "padding-padding")), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadDir(dir, 10000)
	if err != nil {
		t.Fatal(err)
	}
	SortByName(got)
	if len(got) != len(want) {
		t.Fatalf("%d entries, os.ReadDir has %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Name != w.Name() || got[i].Type != w.Type() || got[i].IsDir() != w.IsDir() {
			t.Errorf("entry %d: %q %v, os.ReadDir: %q %v", i, got[i].Name, got[i].Type, w.Name(), w.Type())
		}
	}
	some, err := ReadDir(dir, 7)
	if err != nil || len(some) != 7 {
		t.Errorf("ReadDir(dir, 7): %d entries, err %v", len(some), err)
	}
	for _, e := range some {
		if e.Name == "." || e.Name == ".." || !slices.ContainsFunc(want, func(w os.DirEntry) bool { return w.Name() == e.Name }) {
			t.Errorf("ReadDir(dir, 7) listed %q", e.Name)
		}
	}
	if _, err := ReadDir(filepath.Join(dir, "fifo"), 10); err == nil {
		t.Error("a FIFO was listed as a folder")
	}
	if _, err := ReadDir(filepath.Join(dir, "absent"), 10); !os.IsNotExist(err) {
		t.Errorf("absent folder: err %v", err)
	}
}
