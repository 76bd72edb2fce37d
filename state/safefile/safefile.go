// Package safefile opens files whose path and content come from agents, so that no planted special file can
// hang or flood a reader: a FIFO blocks an ordinary open until a writer appears, and /dev/zero never ends.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// NotRegularError refuses a path that is a directory, FIFO, device or socket, or a file of a kernel
// filesystem (FS, e.g. /proc/kmsg), which claims to be regular but is no bytes on a disk.
type NotRegularError struct {
	Mode fs.FileMode
	FS   string
}

func (e *NotRegularError) Error() string {
	if e.FS != "" {
		return fmt.Sprintf("not a regular file on disk (%s)", e.Kind())
	}
	return fmt.Sprintf("not a regular file (%s)", Describe(e.Mode))
}

// Kind names what the path is, the way a person would.
func (e *NotRegularError) Kind() string {
	if e.FS != "" {
		return "a file of the kernel's " + e.FS + ", which runwatch does not read: reading it can wait forever or consume what it holds"
	}
	return Describe(e.Mode)
}

// Describe names a file type the way a person would.
func Describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsRegular():
		return "a regular file"
	}
	return m.Type().String()
}

// ErrTooLarge is matched (errors.Is) by every *SizeError.
var ErrTooLarge = errors.New("file too large")

// SizeError refuses a file above a size limit.
type SizeError struct {
	Size, Limit int64
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("file is %d bytes, larger than the %d-byte limit for this kind of file", e.Size, e.Limit)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *SizeError) Is(target error) bool { return target == ErrTooLarge }

// Open opens a regular file on disk for reading, and nothing else, whatever the path claims: the type and
// the filesystem are checked before opening (a FIFO would block the open; /proc/kmsg says it is a regular
// file and blocks the read), the open is non-blocking in case the path was swapped in between, and both are
// checked again on the descriptor. The descriptor is then made blocking before Go sees it, so Go never
// parks a read in its netpoller (it does for any pollable file opened non-blocking): a read of a file on
// disk returns. OS errors pass through unchanged (errors.Is(err, fs.ErrNotExist) works).
func Open(path string) (*os.File, fs.FileInfo, error) {
	fd, fi, err := openChecked(path)
	if err != nil {
		return nil, fi, err
	}
	// F_SETFL to nothing clears O_NONBLOCK, the only status flag the open set: one fcntl where
	// syscall.SetNonblock makes two, on every file status reads.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0); err != nil {
		syscall.Close(fd)
		return nil, fi, &fs.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), fi, nil
}

// openChecked opens path non-blocking once Stat let it through, and checks the descriptor as Open says. The
// FileInfo is the descriptor's own fstat: what was opened, and one stat fewer than asking the *os.File.
func openChecked(path string) (int, fs.FileInfo, error) {
	var pre syscall.Stat_t
	if err := statChecked(path, &pre); err != nil {
		if errors.As(err, new(*NotRegularError)) {
			return -1, infoOf(filepath.Base(path), &pre), err
		}
		return -1, nil, err
	}
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
		if err != syscall.EINTR {
			break
		}
	}
	// A refusal from here on carries what the look before saw, as it always has.
	if err != nil {
		return -1, infoOf(filepath.Base(path), &pre), &fs.PathError{Op: "open", Path: path, Err: err}
	}
	fail := func(err error) (int, fs.FileInfo, error) {
		syscall.Close(fd)
		return -1, infoOf(filepath.Base(path), &pre), err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fail(&fs.PathError{Op: "fstat", Path: path, Err: err})
	}
	if uint32(st.Mode)&syscall.S_IFMT != syscall.S_IFREG {
		return fail(&NotRegularError{Mode: modeOf(uint32(st.Mode))})
	}
	if kind := pseudoFSOfFD(fd, uint64(st.Dev)); kind != "" {
		return fail(&NotRegularError{Mode: fileMode(&pre), FS: kind})
	}
	return fd, infoOf(filepath.Base(path), &st), nil
}

// Stat is os.Stat that refuses what Open refuses (*NotRegularError), for a reader that looks before it
// reads, or reads later: a log whose size is taken now and whose lines are read when shown.
func Stat(path string) (fs.FileInfo, error) {
	var st syscall.Stat_t
	err := statChecked(path, &st)
	if err != nil && !errors.As(err, new(*NotRegularError)) {
		return nil, err
	}
	return infoOf(filepath.Base(path), &st), err
}

// statChecked is Stat into the caller's Stat_t: the check before every open, which then makes no FileInfo
// (os.Stat allocates one a file) unless it refuses the file. Errors are os.Stat's.
func statChecked(path string, st *syscall.Stat_t) error {
	for {
		err := syscall.Stat(path, st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "stat", Path: path, Err: err}
		}
		break
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return &NotRegularError{Mode: fileMode(st)}
	}
	if kind := pseudoFSOf(path, uint64(st.Dev)); kind != "" {
		return &NotRegularError{Mode: fileMode(st), FS: kind}
	}
	return nil
}

// modeOf turns a raw st_mode's type bits into the fs.FileMode that Describe names.
func modeOf(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

// Read reads a whole regular file of at most limit bytes. It never reads more than limit+1 bytes, whatever
// size the file claims or grows to while being read (writers append). It reads the descriptor itself: an
// *os.File would cost two fcntl and an fstat more per file, and status reads thousands.
func Read(path string, limit int64) ([]byte, fs.FileInfo, error) {
	fd, fi, err := openChecked(path)
	if err != nil {
		return nil, fi, err
	}
	defer syscall.Close(fd)
	if fi.Size() > limit {
		return nil, fi, &SizeError{Size: fi.Size(), Limit: limit}
	}
	// Sized from the descriptor's own size plus one byte: a read that comes back short at that size has met
	// the end (a regular file's read is short only there), so a file that did not change takes one read.
	data := make([]byte, 0, fi.Size()+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		want := min(int64(cap(data)), limit+1) - int64(len(data))
		n, err := syscall.Read(fd, data[len(data):int64(len(data))+want])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, fi, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		data = data[:len(data)+n]
		if int64(len(data)) > limit {
			return nil, fi, &SizeError{Size: int64(len(data)), Limit: limit}
		}
		if n == 0 || (int64(n) < want && int64(len(data)) >= fi.Size()) {
			return data, fi, nil
		}
	}
}

// OpenDir opens a directory for listing with f.ReadDir(n) or f.Readdirnames(n). os.Open would take it for a
// file to read: it sets and clears O_NONBLOCK and offers the descriptor to the poller, five syscalls that
// are all undone or refused, per directory; os.ReadDir opens a directory plainly but lists all of it, and a
// listing of agent-written folders must stop at a bound. O_DIRECTORY also refuses anything else before it
// is opened, so a FIFO in a directory's place cannot block the open.
func OpenDir(path string) (*os.File, error) {
	fd, err := openDirFD(path)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

func openDirFD(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// ReadOnly is a file as Open opens it, read by offset straight from its descriptor: for a reader that only
// preads, an *os.File's making is two fcntl and two objects a file. The descriptor stays non-blocking, which
// a regular file's read ignores; Go's poller never sees it.
type ReadOnly struct {
	fd   int
	path string
}

// OpenReadOnly opens path as Open does, with Open's refusals and errors.
func OpenReadOnly(path string) (*ReadOnly, fs.FileInfo, error) {
	fd, fi, err := openChecked(path)
	if err != nil {
		return nil, fi, err
	}
	return &ReadOnly{fd: fd, path: path}, fi, nil
}

// ReadAt is (*os.File).ReadAt: it reads len(b) bytes at off, or fewer with io.EOF at the end of the file.
func (r *ReadOnly) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for len(b) > 0 {
		m, err := syscall.Pread(r.fd, b, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, &fs.PathError{Op: "read", Path: r.path, Err: err}
		}
		if m == 0 {
			return n, io.EOF
		}
		n, b, off = n+m, b[m:], off+int64(m)
	}
	return n, nil
}

// Close closes the descriptor.
func (r *ReadOnly) Close() error {
	if err := syscall.Close(r.fd); err != nil {
		return &fs.PathError{Op: "close", Path: r.path, Err: err}
	}
	return nil
}
