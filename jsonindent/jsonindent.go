// Package jsonindent indents json.Marshal's compact output as json.Indent does, without its validating scanner.
package jsonindent

import "bytes"

// Append appends src, compact valid JSON as json.Marshal writes it, to dst indented exactly as
// json.Indent(dst, src, prefix, indent) would: a newline plus prefix plus one indent a level before every
// element and closing bracket, a space after each colon, an empty object or array kept as {} or [].
//
// json.Indent runs its validating scanner over every byte, and over 1,200 runs that was a tenth of
// `status --json`'s CPU; src here is json.Marshal's own output, already checked, so only strings need
// following (punctuation inside them is copied as is). FuzzAppend holds it to json.Indent.
func Append(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	open := false // the last byte opened an object or array: its newline waits for what comes next
	// Each newline is a prefix of one line break, made once: "\n", prefix, then indents for the deepest level
	// yet.
	var padBuf [128]byte
	pad := append(append(padBuf[:0], '\n'), prefix...)
	newline := func(depth int) {
		for n := len(prefix) + 1 + depth*len(indent); len(pad) < n; {
			pad = append(pad, indent...)
		}
		dst = append(dst, pad[:len(prefix)+1+depth*len(indent)]...)
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if open && c != '}' && c != ']' {
			open = false
			depth++
			newline(depth)
		}
		switch c {
		case '"':
			j := stringEnd(src, i)
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			open = true
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				newline(depth)
			}
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline(depth)
		case ':':
			dst = append(dst, c, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// stringEnd is the index of the quote that closes the string opening at src[i] (or the last byte, when src
// ends inside it), found a run of plain bytes at a time.
func stringEnd(src []byte, i int) int {
	j := i + 1
	for j < len(src) {
		q := bytes.IndexByte(src[j:], '"')
		if q < 0 {
			return len(src) - 1
		}
		b := bytes.IndexByte(src[j:j+q], '\\')
		if b < 0 {
			return j + q
		}
		j += b + 2 // the escaped byte, whatever it is, is not the end
	}
	return min(j, len(src)-1)
}
