package envfile

import (
	"io/fs"
	"unsafe"

	"runwatch/state/safefile"
)

// ErrTooLarge, SizeError and NotRegularError are safefile's, named here for the readers of env files.
var ErrTooLarge = safefile.ErrTooLarge

type (
	SizeError       = safefile.SizeError
	NotRegularError = safefile.NotRegularError
)

// ReadRegular reads a regular file of at most limit bytes without ever blocking on a special file
// (safefile.Read).
func ReadRegular(path string, limit int64) ([]byte, error) {
	data, _, err := safefile.Read(path, limit)
	return data, err
}

// ReadFile reads and parses an env file of at most MaxSize bytes. A read failure returns a nil File; a
// parse failure returns the File with every good line and the first *ParseError.
func ReadFile(path string) (*File, error) {
	f, _, err := ReadFileInfo(path)
	return f, err
}

// ReadFileInfo is ReadFile that also gives the file's FileInfo as read, so a caller wanting its time does
// not stat it again (nil when the file could not be opened).
func ReadFileInfo(path string) (*File, fs.FileInfo, error) {
	data, fi, err := safefile.Read(path, MaxSize)
	if err != nil {
		return nil, fi, err
	}
	// The bytes were read for this File alone and nothing writes them again: they are its text, not copied
	// once more as Parse copies a caller's.
	f, err := parse(unsafe.String(unsafe.SliceData(data), len(data)))
	return f, fi, err
}
