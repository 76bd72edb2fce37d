package runlog

import (
	"bytes"
	"errors"
	"io/fs"
	"os"

	"runwatch/model"
)

const (
	// MaxPollBytes bounds what one Poll reads, so a 100 MB append is handed over in pieces instead of as one
	// huge batch; More reports that another Poll is due right away.
	MaxPollBytes = 4 << 20
	// followBuf is the read unit of a Poll.
	followBuf = 256 << 10
	// witnessBytes are remembered from just before the offset; if they change, the file was rewritten in
	// place (truncated and regrown past our offset between two polls), which a size check cannot see.
	witnessBytes = 64
)

// Follower follows a log by byte offset. Each Poll reads everything appended since the last one (up to
// MaxPollBytes), returns the entries of the complete lines and holds an unfinished last line until its
// newline arrives. It never trusts event counts: it reads to end of file every time.
//
// Entries returned by one Poll may continue the last entry of the previous Poll (continuation lines written
// after their entry): such a batch starts with an entry whose HasTime is false; Append merges it.
type Follower struct {
	path    string
	f       *os.File
	offset  int64 // next byte to read from f
	s       *stream
	witness []byte // the bytes just before offset, see witnessBytes
	more    bool
	buf     []byte
}

// NewFollower follows path from fromOffset, typically the size ReadTail returned. The file need not exist
// yet: Poll returns nothing until it does.
func NewFollower(path string, fromOffset int64) *Follower {
	return &Follower{path: path, offset: max(0, fromOffset)}
}

// More reports that the last Poll stopped at MaxPollBytes before the end of the file.
func (fl *Follower) More() bool { return fl.more }

// Close releases the open file.
func (fl *Follower) Close() error {
	if fl.f == nil {
		return nil
	}
	err := fl.f.Close()
	fl.f = nil
	return err
}

// Poll reads what was appended since the last Poll. truncated means the file shrank below the offset (or
// was rewritten in place) and reading restarted at 0; rotated means the path now names a different file,
// which is read from 0 after the rest of the old one. Entries before and after such a reset can both be in
// one batch. A missing file is not an error (the log may not exist yet, or be mid-rotation).
func (fl *Follower) Poll() (entries []model.LogEntry, truncated, rotated bool, err error) {
	fl.more = false
	budget := MaxPollBytes
	if fl.f == nil {
		f, fi, err := openRegular(fl.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, false, nil
		}
		if err != nil {
			return nil, false, false, err
		}
		fl.f = f
		fl.witness = nil
		if fi.Size() < fl.offset {
			fl.offset = 0
			truncated = true
		} else if fl.offset > 0 {
			// Remember what precedes the starting offset so a rewrite before the first read is caught too.
			w := make([]byte, min(fl.offset, witnessBytes))
			if n, err := readFull(f, w, fl.offset-int64(len(w))); err == nil && n == len(w) {
				fl.witness = w
			}
		}
		fl.s = newStream(fl.offset)
	}

	if cur, err := os.Stat(fl.path); err == nil {
		old, oerr := fl.f.Stat()
		if oerr != nil {
			return nil, truncated, false, oerr
		}
		if !os.SameFile(cur, old) {
			// Drain the old file first: the writer may have appended before the rename.
			if err := fl.readToEOF(&budget); err != nil {
				return fl.s.take(), truncated, false, err
			}
			if fl.more {
				return fl.s.take(), truncated, false, nil
			}
			fl.s.finishPartial()
			entries = fl.s.take()
			f, _, err := openRegular(fl.path)
			if err != nil {
				fl.Close()
				fl.offset = 0
				if errors.Is(err, fs.ErrNotExist) {
					err = nil
				}
				return entries, truncated, true, err
			}
			fl.f.Close()
			fl.f, fl.offset, fl.s, fl.witness, rotated = f, 0, newStream(0), nil, true
		}
	}

	fi, err := fl.f.Stat()
	if err != nil {
		return entries, truncated, rotated, err
	}
	if fi.Size() < fl.offset || (fi.Size() > fl.offset && fl.rewritten()) {
		entries = append(entries, fl.s.take()...)
		fl.offset, fl.s, fl.witness, truncated = 0, newStream(0), nil, true
	}
	if err := fl.readToEOF(&budget); err != nil {
		return append(entries, fl.s.take()...), truncated, rotated, err
	}
	return append(entries, fl.s.take()...), truncated, rotated, nil
}

// readToEOF feeds the stream from offset until end of file or until the budget is spent (then More).
func (fl *Follower) readToEOF(budget *int) error {
	if fl.buf == nil {
		fl.buf = make([]byte, followBuf)
	}
	for *budget > 0 {
		want := min(len(fl.buf), *budget)
		n, err := readFull(fl.f, fl.buf[:want], fl.offset)
		if n > 0 {
			fl.s.feed(fl.buf[:n])
			fl.offset += int64(n)
			fl.remember(fl.buf[:n])
			*budget -= n
		}
		if err != nil {
			return err
		}
		if n < want {
			return nil // end of file
		}
	}
	fl.more = true
	return nil
}

// remember keeps the last witnessBytes bytes read.
func (fl *Follower) remember(b []byte) {
	if len(b) >= witnessBytes {
		fl.witness = append(fl.witness[:0], b[len(b)-witnessBytes:]...)
		return
	}
	fl.witness = append(fl.witness, b...)
	if over := len(fl.witness) - witnessBytes; over > 0 {
		fl.witness = fl.witness[over:]
	}
}

// rewritten reports whether the bytes before offset differ from those read there earlier.
func (fl *Follower) rewritten() bool {
	if len(fl.witness) == 0 {
		return false
	}
	got := make([]byte, len(fl.witness))
	n, err := readFull(fl.f, got, fl.offset-int64(len(got)))
	return err != nil || !bytes.Equal(got[:n], fl.witness)
}
