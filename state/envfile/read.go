package envfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

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

// NotRegularError refuses a path that is a directory, FIFO, device or socket.
type NotRegularError struct {
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("not a regular file (%s)", describeMode(e.Mode))
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// ReadRegular reads a regular file of at most limit bytes. It stats before opening and opens non-blocking,
// so a FIFO or device planted where a state file belongs can never hang the caller, and it never reads more
// than limit+1 bytes whatever the file claims its size is. Errors from the OS pass through unchanged
// (errors.Is(err, fs.ErrNotExist) works).
func ReadRegular(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Mode: fi.Mode()}
	}
	if fi.Size() > limit {
		return nil, &SizeError{Size: fi.Size(), Limit: limit}
	}
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	// The path may have been swapped between Stat and Open.
	if fi, err = fh.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Mode: fi.Mode()}
	}
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &SizeError{Size: int64(len(data)), Limit: limit}
	}
	return data, nil
}

// ReadFile reads and parses an env file of at most MaxSize bytes. A read failure returns a nil File; a
// parse failure returns the File with every good line and the first *ParseError.
func ReadFile(path string) (*File, error) {
	data, err := ReadRegular(path, MaxSize)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}
