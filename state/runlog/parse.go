// Package runlog reads resumable-run logs (run.log): entry parsing, a backwards tail read, a byte-offset
// follower and a line index for very large files.
//
// An entry is a line starting `[<RFC 3339 timestamp>]` plus every following line that does not start with a
// timestamp (its continuation lines). Nothing here reads a whole log into memory, and every line is capped at
// MaxLineBytes, because a log line is agent output and may be arbitrarily long or binary.
package runlog

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"runwatch/model"
)

// MaxLineBytes caps one line of text. Longer lines keep their first MaxLineBytes bytes (cut on a UTF-8
// boundary where there is one) followed by an elision marker naming how many bytes were dropped.
const MaxLineBytes = 16 << 10

// ParseEntries parses complete lines of data into entries. baseOffset is the file offset of data[0], so entry
// offsets are file offsets. The trailing bytes after the last newline are returned as rest: the caller keeps
// them and passes them in front of the next data, with baseOffset moved back by len(rest).
//
// A leading line that is not a timestamped entry (data starting mid-entry, or a log whose first line is
// free text) becomes an entry with HasTime false. When data continues an earlier call, such an entry belongs
// to the last entry of that call: Append merges it, so that parsing in pieces equals parsing in one go.
func ParseEntries(data []byte, baseOffset int64) (entries []model.LogEntry, rest []byte) {
	// Sized up front: LogEntry is large, and growing the slice by copying was a third of the parse time.
	entries = make([]model.LogEntry, 0, bytes.Count(data, []byte("\n["))+1)
	pos := 0
	for pos < len(data) {
		nl := bytes.IndexByte(data[pos:], '\n')
		if nl < 0 {
			break
		}
		line := data[pos : pos+nl]
		entries = addLine(entries, lineText(line, len(line)), baseOffset+int64(pos))
		pos += nl + 1
	}
	return entries, data[pos:]
}

// Append adds more to dst, merging a leading timeless entry of more into the last entry of dst: it holds
// continuation lines that arrived after their entry was already reported.
func Append(dst []model.LogEntry, more []model.LogEntry) []model.LogEntry {
	if len(more) > 0 && !more[0].HasTime && len(dst) > 0 {
		last := &dst[len(dst)-1]
		last.Continuation = append(last.Continuation, more[0].Message)
		last.Continuation = append(last.Continuation, more[0].Continuation...)
		last.Fields = append(last.Fields, more[0].Fields...)
		more = more[1:]
	}
	return append(dst, more...)
}

// addLine adds one line (already without its newline, CR and excess length) at file offset off.
func addLine(entries []model.LogEntry, text string, off int64) []model.LogEntry {
	if off == 0 {
		// Editors on some systems start a text file with a byte order mark; it would hide the first stamp.
		text = strings.TrimPrefix(text, "\ufeff")
	}
	if t, msg, ok := splitStamp(text); ok {
		e := model.LogEntry{Time: t, HasTime: true, Message: msg, Offset: off}
		parseMessage(&e)
		return append(entries, e)
	}
	if len(entries) == 0 {
		return append(entries, model.LogEntry{Message: text, Offset: off, Fields: continuationFields(text)})
	}
	last := &entries[len(entries)-1]
	last.Continuation = append(last.Continuation, text)
	last.Fields = append(last.Fields, continuationFields(text)...)
	return entries
}

// lineText turns a raw line into the text kept for it. head holds the line's first bytes (at least
// MaxLineBytes+1 of them when the line is longer, so the cut can be made), total is the full line length
// without the newline. A trailing CR is dropped so CRLF logs read like LF logs.
func lineText(head []byte, total int) string {
	if total > 0 && total <= len(head) && head[total-1] == '\r' {
		total--
	}
	return cutLine(head, total, false)
}

// cutLine applies the length cap. crDropped says the caller already knows the full line ended in CR (a
// streamed line whose head no longer holds its end).
func cutLine(head []byte, total int, crDropped bool) string {
	if crDropped {
		total--
	}
	if total <= MaxLineBytes {
		return string(head[:total])
	}
	cut := MaxLineBytes
	// Back off to the start of a rune so the kept text does not end in half a character.
	for i := 0; i < 3 && cut > 0 && head[cut]&0xC0 == 0x80; i++ {
		cut--
	}
	return string(head[:cut]) + elisionMarker(total-cut)
}

func elisionMarker(n int) string {
	return "… (" + strconv.Itoa(n) + " bytes elided)"
}

// splitStamp recognises `[timestamp] message`. The writers use second-precision UTC with a Z; fractional
// seconds, numeric offsets, a space instead of the T and a missing zone (taken as UTC) are accepted too.
func splitStamp(line string) (time.Time, string, bool) {
	if len(line) < 21 || line[0] != '[' {
		return time.Time{}, "", false
	}
	end := strings.IndexByte(line[:min(len(line), 48)], ']')
	if end < 0 {
		return time.Time{}, "", false
	}
	t, ok := parseStamp(line[1:end])
	if !ok {
		return time.Time{}, "", false
	}
	return t, strings.TrimLeft(line[end+1:], " \t"), true
}

func parseStamp(s string) (time.Time, bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
		s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	if s[10] != 'T' {
		s = s[:10] + "T" + s[11:]
	}
	if n := len(s); s[n-1] == 'z' {
		s = s[:n-1] + "Z"
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, time.UTC); err == nil {
		return t, true
	}
	return time.Time{}, false
}
