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
	if err := asLogRefusal(path, err); err != nil {
		return nil, nil, err
	}
	return f, fi, err
}

// openRegularAt is openRegular for a reader that only reads by offset (safefile.ReadOnly).
func openRegularAt(path string) (*safefile.ReadOnly, fs.FileInfo, error) {
	f, fi, err := safefile.OpenReadOnly(path)
	if err := asLogRefusal(path, err); err != nil {
		return nil, nil, err
	}
	return f, fi, err
}

// asLogRefusal is what a log reader says of a path safefile refused to open as a regular file, nil for
// any other outcome.
func asLogRefusal(path string, err error) error {
	var nr *safefile.NotRegularError
	if errors.As(err, &nr) {
		return fmt.Errorf("%s: %w; refusing to read it as a log", path, err)
	}
	return nil
}

// readFull reads len(buf) bytes at off, or fewer at end of file.
func readFull(f io.ReaderAt, buf []byte, off int64) (int, error) {
	n, err := f.ReadAt(buf, off)
	if err == io.EOF {
		err = nil
	}
	return n, err
}
