package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
