package runlog

import (
	"bytes"

	"runwatch/model"
)

// stream parses a log fed in arbitrary chunks while holding at most MaxLineBytes+1 bytes of an unfinished
// line, so a 50 MiB line or a writer that never writes a newline costs bounded memory. It yields exactly what
// ParseEntries would for the same bytes.
type stream struct {
	entries []model.LogEntry
	next    int64 // file offset of the next byte to be fed

	// The unfinished line: its start offset, first bytes, full length so far and last byte.
	partial  bool
	lineOff  int64
	head     []byte
	total    int
	lastByte byte
}

func newStream(offset int64) *stream { return &stream{next: offset} }

// feed parses chunk, which starts at file offset s.next.
func (s *stream) feed(chunk []byte) {
	pos := 0
	for pos < len(chunk) {
		nl := bytes.IndexByte(chunk[pos:], '\n')
		if nl < 0 {
			s.hold(chunk[pos:], s.next+int64(pos))
			break
		}
		piece := chunk[pos : pos+nl]
		if s.partial {
			s.hold(piece, 0)
			s.finishPartial()
		} else {
			s.entries = addLine(s.entries, lineText(piece, len(piece)), s.next+int64(pos))
		}
		pos += nl + 1
	}
	s.next += int64(len(chunk))
}

// hold appends piece to the unfinished line; off is its offset if this starts the line.
func (s *stream) hold(piece []byte, off int64) {
	if !s.partial {
		s.partial = true
		s.lineOff = off
		s.head = s.head[:0]
		s.total = 0
	}
	if room := MaxLineBytes + 1 - len(s.head); room > 0 {
		s.head = append(s.head, piece[:min(room, len(piece))]...)
	}
	s.total += len(piece)
	if len(piece) > 0 {
		s.lastByte = piece[len(piece)-1]
	}
}

// finishPartial turns the unfinished line into a line, as if its newline had arrived.
func (s *stream) finishPartial() {
	if !s.partial {
		return
	}
	var text string
	if s.total <= len(s.head) {
		text = lineText(s.head, s.total)
	} else {
		text = cutLine(s.head, s.total, s.lastByte == '\r')
	}
	s.entries = addLine(s.entries, text, s.lineOff)
	s.partial = false
	if cap(s.head) > 4<<10 {
		s.head = nil // do not keep a 16 KiB buffer per follower once a long line is done
	}
}

// take returns the entries parsed so far and starts a new batch.
func (s *stream) take() []model.LogEntry {
	e := s.entries
	s.entries = nil
	return e
}
