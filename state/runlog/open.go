package runlog

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// openRegular opens a log for reading, refusing anything but a regular file. The mode is checked before
// opening (opening a FIFO for reading blocks until a writer appears) and again on the descriptor, which is
// opened non-blocking, in case the path was swapped in between. A symlink to /dev/zero is a character device
// and is refused the same way, so nothing ever reads an endless stream.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, notRegular(path, fi)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegular(path, fi)
	}
	return f, fi, nil
}

func notRegular(path string, fi fs.FileInfo) error {
	return fmt.Errorf("%s: not a regular file (%s); refusing to read it as a log", path, kindOf(fi.Mode()))
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m.IsDir():
		return "directory"
	}
	return m.Type().String()
}

// readFull reads len(buf) bytes at off, or fewer at end of file.
func readFull(f *os.File, buf []byte, off int64) (int, error) {
	n, err := f.ReadAt(buf, off)
	if err == io.EOF {
		err = nil
	}
	return n, err
}
