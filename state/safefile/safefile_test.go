package safefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// A file of /proc or /sys says it is regular (procfs says size 0), and it is refused before it is opened:
// /proc/kmsg answers poll, so a read of it waits in Go's netpoller until the kernel logs, and consumes it.
func TestKernelFilesAreRefused(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the filesystem magic is checked on Linux only")
	}
	for _, path := range []string{"/proc/self/cmdline", "/proc/kmsg", "/sys/kernel/uevent_seqnum"} {
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue // not on this machine, or not readable by this user
		}
		done(t, func() {
			var nr *NotRegularError
			if _, _, err := Read(path, 1<<20); !errors.As(err, &nr) || nr.FS == "" || !strings.Contains(err.Error(), "not a regular file on disk") {
				t.Errorf("Read(%s): %v, want it refused as a kernel file", path, err)
			}
			if _, err := Stat(path); !errors.As(err, &nr) || nr.FS == "" {
				t.Errorf("Stat(%s): %v, want it refused as a kernel file", path, err)
			}
		})
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

// The descriptor Open returns is blocking, opened non-blocking or not: Go parks reads of a non-blocking
// descriptor in its netpoller, and nothing else changed in its status flags.
func TestOpenReturnsABlockingDescriptor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.env")
	if err := os.WriteFile(path, []byte("STATUS=running\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Not f.Fd(), which would make the descriptor blocking itself.
	raw, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	if cerr := raw.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); cerr != nil || err != nil {
		t.Fatal(cerr, err)
	}
	if flags&(unix.O_NONBLOCK|unix.O_APPEND) != 0 || flags&unix.O_ACCMODE != unix.O_RDONLY {
		t.Errorf("the descriptor's status flags are %#x: want read-only, blocking, not appending", flags)
	}
}

// Read and Open describe the file from the descriptor's own fstat: what os.Stat says of the same unchanged
// file, down to the inode a caller compares through Sys.
func TestInfoIsTheDescriptorsStat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	if err := os.WriteFile(path, []byte("[2026-12-07T18:00:00Z] stage_start M0\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 12, 7, 18, 0, 0, 123456789, time.UTC)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
	want, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	_, readInfo, err := Read(path, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	f, openInfo, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for name, got := range map[string]fs.FileInfo{"Read": readInfo, "Open": openInfo} {
		if got.Name() != want.Name() || got.Size() != want.Size() || got.Mode() != want.Mode() ||
			!got.ModTime().Equal(want.ModTime()) || got.IsDir() {
			t.Errorf("%s: %s %d %v %v, want %s %d %v %v", name, got.Name(), got.Size(), got.Mode(), got.ModTime(),
				want.Name(), want.Size(), want.Mode(), want.ModTime())
		}
		gs, ok := got.Sys().(*syscall.Stat_t)
		ws := want.Sys().(*syscall.Stat_t)
		if !ok || gs.Ino != ws.Ino || gs.Dev != ws.Dev {
			t.Errorf("%s: Sys() %v, want the file's own stat (inode %d)", name, got.Sys(), ws.Ino)
		}
	}
}

// The checks before and after the open make nothing of their own on the heap: status reads thousands of
// files, and a FileInfo from the look before (os.Stat's) or a boxed device number (a sync.Map key) a file was
// a fifth of what reading them allocated. What is left: the path as the kernel takes it, twice (stat, open),
// the bytes, and the descriptor's FileInfo.
func TestReadAllocatesOnlyItsResult(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.env")
	if err := os.WriteFile(path, []byte("A=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(path, 100); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(50, func() { _, _, _ = Read(path, 100) }); n > 4 {
		t.Errorf("Read allocates %.0f times a file, want at most 4", n)
	}
}

// ReadOnly reads as (*os.File).ReadAt reads, and refuses what Open refuses.
func TestReadOnlyReadsAsOSFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.log")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, fi, err := OpenReadOnly(path)
	if err != nil || fi.Size() != 10 {
		t.Fatalf("OpenReadOnly: %v, %v", fi, err)
	}
	defer r.Close()
	buf := make([]byte, 4)
	if n, err := r.ReadAt(buf, 3); n != 4 || err != nil || string(buf) != "3456" {
		t.Errorf("ReadAt(4 at 3) = %d %q %v", n, buf[:n], err)
	}
	if n, err := r.ReadAt(buf, 8); n != 2 || err != io.EOF || string(buf[:n]) != "89" {
		t.Errorf("ReadAt(4 at 8) = %d %q %v, want 2 \"89\" EOF", n, buf[:n], err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done(t, func() {
		var nr *NotRegularError
		if _, _, err := OpenReadOnly(fifo); !errors.As(err, &nr) {
			t.Errorf("a FIFO was opened: %v", err)
		}
	})
}
