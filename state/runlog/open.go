package runlog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"runwatch/state/safefile"
)

// openRegular opens a log for reading, refusing anything but a regular file without blocking on a FIFO or
// reading an endless device (safefile.Open).
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	f, fi, err := safefile.Open(path)
	var nr *safefile.NotRegularError
	if errors.As(err, &nr) {
		return nil, nil, fmt.Errorf("%s: %w; refusing to read it as a log", path, err)
	}
	return f, fi, err
}

// openRegularAt is openRegular for a reader that only reads by offset (safefile.ReadOnly).
func openRegularAt(path string) (*safefile.ReadOnly, fs.FileInfo, error) {
	f, fi, err := safefile.OpenReadOnly(path)
	var nr *safefile.NotRegularError
	if errors.As(err, &nr) {
		return nil, nil, fmt.Errorf("%s: %w; refusing to read it as a log", path, err)
	}
	return f, fi, err
}

// readFull reads len(buf) bytes at off, or fewer at end of file.
func readFull(f io.ReaderAt, buf []byte, off int64) (int, error) {
	n, err := f.ReadAt(buf, off)
	if err == io.EOF {
		err = nil
	}
	return n, err
}
