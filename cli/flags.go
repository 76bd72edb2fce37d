package cli

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"runwatch/suggest"
)

// flagSet is a command's flags: the standard library's, plus one-letter aliases (`-o` for `--output`) that
// help shows on the same line as the long name. The flag package already accepts `--name` as well as
// `-name`; what it lacks is help in that style and suggestions, which this file adds.
type flagSet struct {
	*flag.FlagSet
	short map[string]string // long name → its one-letter alias
	// env is what the command runs in, the other input it is given besides its arguments: a command's
	// define keeps it for its run. Help and completion, which define flags only to list them, leave it zero.
	env env
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
func flagError(stderr io.Writer, c command, fs *flagSet, err error, args []string) int {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "flag provided but not defined: "):
		name := strings.TrimLeft(strings.TrimPrefix(msg, "flag provided but not defined: "), "-")
		msg = "unknown flag " + asTyped(name, args)
		if (name == "v" || name == "V") && c.name == defaultCommand {
			msg += "; for the version: runwatch --version"
		}
		if near := suggest.Nearest(name, fs.names()); len(near) > 0 {
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

// asTyped is an unknown flag as the command line wrote it (-rf, not --rf: the flag package drops the dashes).
func asTyped(name string, args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		word, _, _ := strings.Cut(a, "=")
		if strings.HasPrefix(word, "-") && strings.TrimLeft(word, "-") == name {
			return word
		}
	}
	return dashed(name)
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
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
