// Package tmuxsafe is the one quoting rule for text runwatch hands to the tmux client: run names, folders and
// notification text are untrusted, and tmux reads its arguments in two ways that can turn them into commands.
//
//   - Every argument: tmux's client splits its command line at an argument that ends in ';' (the rest is a
//     second command). Arg escapes that final ';'.
//   - display-message's message goes through three readers before it is drawn: strftime(3) (`%H` becomes the
//     hour), the format expander (`#(cmd)` runs cmd, `#{…}` substitutes, `##` is `#`) and the status line's
//     drawing (`##` is `#` again, `#[…]` is a style). Message doubles '%' for strftime and writes each run of
//     '#' so that both later readers give it back: 4k '#' for k, or 2k before '[' (which the expander passes
//     on as is). Checked against tmux's own status line in the test.
//
// Other format arguments (-c folders, -F) are expanded but not drawn; runwatch gives them no run text (the
// resume launcher hands the folder over as a word after "--", which tmux never expands).
package tmuxsafe

import "strings"

// Arg keeps a as one literal argument of a tmux command when it is not expanded as a format.
func Arg(a string) string {
	if strings.HasSuffix(a, ";") {
		// tmux turns a final `\;` back into `;` (and `\\;` into `\;`)
		return a[:len(a)-1] + `\;`
	}
	return a
}

// Message is s as display-message must be given it to show s literally in the status line.
func Message(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '%':
			b.WriteString("%%")
		case '#':
			j := i
			for j < len(s) && s[j] == '#' {
				j++
			}
			n := 4 * (j - i)
			if j < len(s) && s[j] == '[' {
				n = 2 * (j - i)
			}
			b.WriteString(strings.Repeat("#", n))
			i = j - 1
		default:
			b.WriteByte(s[i])
		}
	}
	return Arg(b.String())
}
