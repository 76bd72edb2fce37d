package cachedir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Folders and files of ours alone are used; a folder others may write, a link where the folder or a file
// should be, a FIFO, and a file past the reader's cap are refused, and nothing is written through them.
func TestOnlyCachesOfOursAloneAreUsed(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "runwatch", "c")
	d, ok := Open(dir, true)
	if !ok {
		t.Fatal("a folder made here refused")
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("made %v, %v; want 0700", fi.Mode(), err)
	}
	if err := d.WriteFile("a", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if got, err := d.ReadFile("a", 5); err != nil || string(got) != "hello" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	if _, err := d.ReadFile("a", 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("past the cap: %v", err)
	}
	if _, err := d.ReadFile("missing", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	planted := filepath.Join(t.TempDir(), "planted")
	if err := os.WriteFile(planted, []byte("theirs"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(planted, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadFile("link", 100); !errors.Is(err, ErrRefused) {
		t.Errorf("a link: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shared"), []byte("x"), 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, "shared"), 0o666)
	if _, err := d.ReadFile("shared", 100); !errors.Is(err, ErrRefused) {
		t.Errorf("a file others may write: %v", err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadFile("fifo", 100); !errors.Is(err, ErrRefused) {
		t.Errorf("a FIFO: %v", err)
	}
	// Writing over the link replaces the link, never the file it points at.
	if err := d.WriteFile("link", []byte("ours")); err != nil {
		t.Fatal(err)
	}
	if theirs, _ := os.ReadFile(planted); string(theirs) != "theirs" {
		t.Errorf("a write through a link changed %s to %q", planted, theirs)
	}
	d.Close()

	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if d, ok := Open(dir, true); ok {
		d.Close()
		t.Error("a folder others may write was used")
	}
	os.Chmod(dir, 0o700)
	linked := filepath.Join(base, "linked")
	if err := os.Symlink(dir, linked); err != nil {
		t.Fatal(err)
	}
	if d, ok := Open(linked, true); ok {
		d.Close()
		t.Error("a link to a folder was used")
	}
}

// RemoveUnused removes what keep claims and no one wrote for that long, and nothing else.
func TestRemoveUnused(t *testing.T) {
	dir := t.TempDir()
	d, ok := Open(dir, false)
	if !ok {
		t.Fatal("refused")
	}
	defer d.Close()
	old := time.Now().Add(-48 * time.Hour)
	for _, n := range []string{"walk-old", "walk-new", "other-old"} {
		if err := d.WriteFile(n, nil); err != nil {
			t.Fatal(err)
		}
		if n != "walk-new" {
			os.Chtimes(filepath.Join(dir, n), old, old)
		}
	}
	d.RemoveUnused(func(n string) bool { return len(n) > 5 && n[:5] == "walk-" }, 24*time.Hour)
	for n, want := range map[string]bool{"walk-old": false, "walk-new": true, "other-old": true} {
		if _, err := os.Stat(filepath.Join(dir, n)); (err == nil) != want {
			t.Errorf("%s: there %v, want %v", n, err == nil, want)
		}
	}
}
