package cli

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// flagSet is a command's flags: the standard library's, plus one-letter aliases (`-o` for `--output`) that
// help shows on the same line as the long name. The flag package already accepts `--name` as well as
// `-name`; what it lacks is help in that style and suggestions, which this file adds.
type flagSet struct {
	*flag.FlagSet
	short map[string]string // long name → its one-letter alias
}

func newFlagSet(name string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// The flag package's own messages and usage are replaced by flagError and the help text: silence it so
	// nothing is printed twice.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, short: map[string]string{}}
}

// alias makes -short a second name of the already defined --long.
func (f *flagSet) alias(short, long string) {
	fl := f.Lookup(long)
	if fl == nil {
		panic("runwatch: alias for undefined flag " + long)
	}
	f.Var(fl.Value, short, "same as --"+long)
	f.short[long] = short
}

func (f *flagSet) isAlias(name string) bool {
	for _, s := range f.short {
		if s == name {
			return true
		}
	}
	return false
}

// longName is the long name of a flag given by either name.
func (f *flagSet) longName(name string) string {
	for long, s := range f.short {
		if s == name {
			return long
		}
	}
	return name
}

// names lists the long flag names, sorted.
func (f *flagSet) names() []string {
	var names []string
	f.VisitAll(func(fl *flag.Flag) {
		if !f.isAlias(fl.Name) {
			names = append(names, fl.Name)
		}
	})
	sort.Strings(names)
	return names
}

// flagError reports a flag the command cannot parse, in the house style, once.
func flagError(stderr io.Writer, c command, fs *flagSet, err error) int {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "flag provided but not defined: "):
		name := strings.TrimLeft(strings.TrimPrefix(msg, "flag provided but not defined: "), "-")
		msg = "unknown flag " + dashed(name)
		if near := nearest(name, fs.names()); len(near) > 0 {
			for i := range near {
				near[i] = "--" + near[i]
			}
			msg += "; did you mean " + orList(near) + "?"
		}
	case strings.HasPrefix(msg, "flag needs an argument: "):
		name := strings.TrimLeft(strings.TrimPrefix(msg, "flag needs an argument: "), "-")
		msg = dashed(name) + " needs a value"
	case strings.HasPrefix(msg, "invalid value ") || strings.HasPrefix(msg, "invalid boolean value "):
		// `invalid value "x" for flag -stale-after: parse error`: name the flag as help does.
		if i := strings.Index(msg, " for flag -"); i >= 0 {
			rest := msg[i+len(" for flag -"):]
			name, why, _ := strings.Cut(rest, ": ")
			if f := fs.Lookup(name); f != nil && why == "parse error" {
				if g, ok := f.Value.(flag.Getter); ok {
					if _, ok := g.Get().(time.Duration); ok {
						// "parse error" alone did not say what a duration looks like.
						why = "not a duration: give one like 2s, 500ms or 1m"
					}
				}
			}
			msg = fmt.Sprintf("%s %s: %s", dashed(name), msg[:i], why)
		}
	}
	return usageError(stderr, c.name, "%s", msg)
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// nearest returns the candidates closest to word by edit distance (adjacent swaps count one, so "stauts"
// is one step from "status"), when they are close enough to be what was meant, or that start with it.
func nearest(word string, candidates []string) []string {
	best, bestDist := []string(nil), 0
	limit := max(1, min(2, len(word)/3))
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), c)
		if len(word) >= 2 && strings.HasPrefix(c, word) {
			d = min(d, limit)
		}
		switch {
		case d > limit:
		case best == nil || d < bestDist:
			best, bestDist = []string{c}, d
		case d == bestDist:
			best = append(best, c)
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions, deletions, substitutions and swaps of
// two neighbours each cost one.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = "'" + w + "'"
	}
	return out
}

// orList joins words as "a", "a or b", "a, b or c".
func orList(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
