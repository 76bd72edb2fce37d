// Package cachedir is the one way runwatch reads and writes its cache folders (the completion's walk cache,
// the briefs' artifact index): a folder, and each file in it, is used only when it is a real folder or
// regular file of ours that no one else may write, checked on what was opened (never a path checked then
// opened again), and never through a link. A cache is only a cache, so a refusal is silent: the caller
// works without it.
package cachedir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ErrRefused is a cache folder or file that is a link, not a folder or regular file, or not ours alone.
var ErrRefused = errors.New("not a cache of ours alone")

// ErrTooLarge is a cache file bigger than its reader takes.
var ErrTooLarge = errors.New("cache file too large")

// Dir is an open cache folder, checked.
type Dir struct{ f *os.File }

// Open opens the cache folder dir (made 0700 first, with its parents, when create is set). ok is false
// when it is missing or refused.
func Open(dir string, create bool) (d *Dir, ok bool) {
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, false
		}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), dir)
	if !ours(f, true) {
		f.Close()
		return nil, false
	}
	return &Dir{f: f}, true
}

// Close closes the folder.
func (d *Dir) Close() { d.f.Close() }

// ReadFile reads the file name in d, of at most max bytes: an error wrapping fs.ErrNotExist when it is not
// there, ErrRefused when it is refused (a link is refused, not followed), ErrTooLarge past max.
func (d *Dir) ReadFile(name string, max int64) ([]byte, error) {
	fd, err := unix.Openat(int(d.f.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, fmt.Errorf("%s: %w", name, os.ErrNotExist)
	case errors.Is(err, unix.ELOOP):
		return nil, fmt.Errorf("%s: a link: %w", name, ErrRefused)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if !ours(f, false) {
		return nil, fmt.Errorf("%s: %w", name, ErrRefused)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes: %w", name, fi.Size(), ErrTooLarge)
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return data, nil
}

// WriteFile replaces the file name in d whole, 0600: a temp file beside it, then a rename, so a reader sees
// the old file or the new. Not fsynced: losing a cache costs the work it saved.
func (d *Dir) WriteFile(name string, data []byte) error {
	dirfd := int(d.f.Fd())
	tmp := fmt.Sprintf(".%s.%d.%d.tmp", name, os.Getpid(), time.Now().UnixNano())
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return err
	}
	if err := unix.Renameat(dirfd, tmp, dirfd, name); err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return err
	}
	return nil
}

// RemoveUnused (once per Open: it reads the folder to its end) removes the regular files of d whose names keep says are its (temp files of killed writers
// included) and that no one wrote for longer than unused.
func (d *Dir) RemoveUnused(keep func(name string) bool, unused time.Duration) {
	entries, err := d.f.ReadDir(-1)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !keep(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > unused {
			unix.Unlinkat(int(d.f.Fd()), e.Name(), 0)
		}
	}
}

// ours: an open cache folder (or file) is a real one of ours that no one else may write.
func ours(f *os.File, wantDir bool) bool {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return false
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if wantDir != isDir || !wantDir && st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	return int(st.Uid) == os.Geteuid() && st.Mode&0o022 == 0
}
