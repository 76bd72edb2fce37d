package cli

import (
	"io"
	"strconv"
	"strings"
)

// bash hands a completion function the words as typed (COMP_WORDS keeps quotes and backslashes) and inserts
// whatever the function answers as is, so the bash script talks to its own helper: the words come in raw and
// are unquoted here by bash's rules (never evaluated: `$(…)` and `$VAR` stay text), and the candidates go out
// NUL-terminated, whole even with a newline in them, for the script to quote with printf %q.
func init() {
	register(command{
		name:    "__complete-bash",
		summary: "answer the bash completion script: NUL-terminated candidates for the raw words of ARGS",
		args:    "ARGS...",
		hidden:  true,
		rawArgs: true,
		define: func(fs *flagSet) runFunc {
			return func(args []string, stdout, stderr io.Writer) int {
				return runCompleteBash(fs.env.getenv, args, stdout, stderr)
			}
		},
	})
}

func runCompleteBash(getenv func(string) string, args []string, stdout, stderr io.Writer) int {
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = bashUnquote(a)
	}
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	var b strings.Builder
	for _, c := range completions(getenv, words[:len(words)-1], cur) {
		if c == completeFiles {
			// the script completes file names itself, from the unquoted word
			c += "\t" + cur
		}
		b.WriteString(c)
		b.WriteByte(0)
	}
	io.WriteString(stdout, b.String())
	return exitOK
}

// bashUnquote removes bash's quoting from one word as typed, which may be cut short (an open quote, a
// trailing backslash: the word is being completed). It knows backslashes, '…', "…", $'…' and $"…"; anything
// else, `$(…)` and `~` included, is kept as the text it is.
func bashUnquote(w string) string {
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c == '\\':
			if i+1 < len(w) {
				i++
				if w[i] != '\n' {
					b.WriteByte(w[i])
				}
			}
		case c == '\'':
			end := strings.IndexByte(w[i+1:], '\'')
			if end < 0 {
				b.WriteString(w[i+1:])
				return b.String()
			}
			b.WriteString(w[i+1 : i+1+end])
			i += 1 + end
		case c == '$' && i+1 < len(w) && w[i+1] == '\'':
			i = ansiC(w, i+2, &b)
		case c == '"' || c == '$' && i+1 < len(w) && w[i+1] == '"':
			if c == '$' {
				i++
			}
			for i++; i < len(w) && w[i] != '"'; i++ {
				if w[i] == '\\' && i+1 < len(w) && strings.IndexByte("$`\"\\\n", w[i+1]) >= 0 {
					i++
					if w[i] == '\n' {
						continue
					}
				}
				b.WriteByte(w[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ansiC reads a $'…' body from w[i:] into b, as bash decodes it (printf %q writes control characters this
// way), and returns the index of the closing quote (or the end, if the word stops inside it).
func ansiC(w string, i int, b *strings.Builder) int {
	simple := map[byte]byte{'a': '\a', 'b': '\b', 'e': 0x1b, 'E': 0x1b, 'f': '\f', 'n': '\n', 'r': '\r',
		't': '\t', 'v': '\v', '\\': '\\', '\'': '\'', '"': '"', '?': '?'}
	for ; i < len(w); i++ {
		c := w[i]
		if c == '\'' {
			return i
		}
		if c != '\\' || i+1 >= len(w) {
			b.WriteByte(c)
			continue
		}
		i++
		if r, ok := simple[w[i]]; ok {
			b.WriteByte(r)
			continue
		}
		// \nnn octal (up to three digits), \xHH hex (up to two): what printf %q emits for other bytes
		base, max, start := 8, 3, i
		if w[i] == 'x' {
			base, max, start = 16, 2, i+1
		}
		end := start
		for end < len(w) && end-start < max && isDigitIn(w[end], base) {
			end++
		}
		if end == start {
			b.WriteByte('\\')
			b.WriteByte(w[i])
			continue
		}
		n, _ := strconv.ParseUint(w[start:end], base, 16)
		b.WriteByte(byte(n))
		i = end - 1
	}
	return i
}

func isDigitIn(c byte, base int) bool {
	switch {
	case c >= '0' && c <= '7':
		return true
	case base == 16:
		return c >= '8' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
	}
	return false
}
