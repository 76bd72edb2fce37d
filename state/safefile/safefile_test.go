package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// done fails the test if f blocks: the point of this package is that nothing here can hang.
func done(t *testing.T, f func()) {
	t.Helper()
	finished := make(chan struct{})
	go func() { defer close(finished); f() }()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("blocked")
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "state.env")
	if err := os.WriteFile(regular, []byte("A=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path  string
		limit int64
		check func(data []byte, err error) bool
	}{
		{regular, 100, func(d []byte, err error) bool { return err == nil && string(d) == "A=1\n" }},
		{regular, 3, func(d []byte, err error) bool { return errors.Is(err, ErrTooLarge) }},
		{filepath.Join(dir, "absent"), 100, func(d []byte, err error) bool { return errors.Is(err, fs.ErrNotExist) }},
		{dir, 100, func(d []byte, err error) bool { return err != nil && strings.Contains(err.Error(), "a directory") }},
		{fifo, 100, func(d []byte, err error) bool { return err != nil && strings.Contains(err.Error(), "named pipe") }},
		{zero, 100, func(d []byte, err error) bool {
			return err != nil && strings.Contains(err.Error(), "character device")
		}},
	}
	for _, c := range cases {
		done(t, func() {
			data, _, err := Read(c.path, c.limit)
			if !c.check(data, err) {
				t.Errorf("%s (limit %d): data %q, err %v", c.path, c.limit, data, err)
			}
		})
	}
}

// A file whose size says less than it holds (procfs says 0) is read to its end, and still not past the limit.
func TestReadBeyondTheStatedSize(t *testing.T) {
	want, err := os.ReadFile("/proc/self/cmdline")
	if err != nil || len(want) == 0 {
		t.Skipf("no /proc/self/cmdline: %v", err)
	}
	data, fi, err := Read("/proc/self/cmdline", 1<<20)
	if err != nil || fi.Size() != 0 || string(data) != string(want) {
		t.Fatalf("data %q (size said %d), err %v; want %q", data, fi.Size(), err, want)
	}
	if _, _, err := Read("/proc/self/cmdline", int64(len(want)-1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("limit %d below the %d bytes held: err %v", len(want)-1, len(want), err)
	}
}

func TestOpenDir(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b", "a"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	slices.Sort(names)
	if err != nil || strings.Join(names, ",") != "a,b,fifo" {
		t.Errorf("names %v, err %v", names, err)
	}
	for _, path := range []string{fifo, filepath.Join(dir, "a"), filepath.Join(dir, "absent")} {
		done(t, func() {
			if f, err := OpenDir(path); err == nil {
				f.Close()
				t.Errorf("%s: opened as a directory", path)
			}
		})
	}
	if _, err := OpenDir(filepath.Join(dir, "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: err %v, want fs.ErrNotExist", err)
	}
}
