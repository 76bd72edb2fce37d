// Package jsonindent indents json.Marshal's compact output as json.Indent does, without its validating scanner.
package jsonindent

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
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if open && c != '}' && c != ']' {
			open = false
			depth++
			dst = appendNewline(dst, prefix, indent, depth)
		}
		switch c {
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(src)-1)
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
				dst = appendNewline(dst, prefix, indent, depth)
			}
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			dst = appendNewline(dst, prefix, indent, depth)
		case ':':
			dst = append(dst, c, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func appendNewline(dst []byte, prefix, indent string, depth int) []byte {
	dst = append(dst, '\n')
	dst = append(dst, prefix...)
	for range depth {
		dst = append(dst, indent...)
	}
	return dst
}
