package envfile

import "runwatch/state/safefile"

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
	data, err := ReadRegular(path, MaxSize)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}
