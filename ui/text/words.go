// Short words the panes share: placeholders, prompts and notes that read the same wherever they appear.

package text

import "fmt"

func OrDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// SearchPrompt says which way a search goes and how the pattern is read.
func SearchPrompt(forward, regex bool) string {
	dir := "search ↓"
	if !forward {
		dir = "search ↑"
	}
	mode := "literal, smart case; tab: regex"
	if regex {
		mode = "regex, smart case; tab: literal"
	}
	return dir + " (" + mode + "): "
}

// WrapNote is what less and vim say when a search went round the end of the file; going round to where it
// started, the hit is the only one (what is "match" or "error"), and that is what it says.
func WrapNote(wrapped, only, forward bool, what string) string {
	switch {
	case only:
		return "the only " + what
	case !wrapped:
		return ""
	case forward:
		return "search hit BOTTOM, continuing at TOP"
	}
	return "search hit TOP, continuing at BOTTOM"
}

// RunsCount is "1 run", "6 runs".
func RunsCount(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}
