package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"runwatch/suggest"
)

func init() {
	register(command{
		name:    "help",
		summary: "show this help, or a command's flags and examples",
		args:    "[COMMAND]",
		about:   "Without COMMAND, lists the commands, the dashboard's flags and the exit codes. 'runwatch COMMAND --help' is the same as 'runwatch help COMMAND'.",
		examples: []example{
			{"every command and the exit codes", "runwatch help"},
			{"the flags and examples of status", "runwatch help status"},
		},
		completeArgs: []string{argCommands},
		define: func(*flagSet) runFunc {
			return runHelp
		},
	})
}

func runHelp(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		printMainHelp(stdout)
		return exitOK
	case len(args) > 1:
		return usageError(stderr, "help", "one COMMAND at a time, got %q", args)
	}
	c, ok := commands[args[0]]
	if !ok || c.hidden {
		msg := fmt.Sprintf("%q is not a runwatch command", args[0])
		if near := suggest.Nearest(args[0], commandNames(false)); len(near) > 0 {
			msg += "; did you mean " + orList(quoteAll(near)) + "?"
		}
		return usageError(stderr, "help", "%s", msg)
	}
	fs := newFlagSet(c.name)
	c.define(fs)
	printCommandHelp(stdout, c, fs)
	return exitOK
}

// helpWidth is where help text wraps: an 80-column terminal.
const helpWidth = 80

// Command groups, in the order help lists them.
const (
	groupRead   = "read"
	groupChange = "change"
)

var groupOrder = []struct{ name, heading string }{
	{groupRead, "Read runs:"},
	{groupChange, "Change a run (each shows the exact change first, and can be undone):"},
	{"", "More:"},
}

func knownGroup(g string) bool {
	for _, o := range groupOrder {
		if o.name == g && g != "" {
			return true
		}
	}
	return false
}

func usageLine(c command) string {
	parts := []string{helpName(c)}
	fs := newFlagSet(c.name)
	c.define(fs)
	if len(fs.names()) > 0 {
		parts = append(parts, "[flags]")
	}
	if c.args != "" {
		parts = append(parts, c.args)
	}
	return strings.Join(parts, " ")
}

// printMainHelp is `runwatch help`: what runwatch is, the commands, the dashboard's flags, the exit codes.
func printMainHelp(w io.Writer) {
	dash := commands[defaultCommand]
	writeWrapped(w, "", "runwatch watches long-running agent runs that keep their state on disk, shows which need "+
		"you, and changes their state safely.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage:")
	fmt.Fprintf(w, "  %-34s  %s\n", usageLine(dash), "open the dashboard on the runs under each PATH")
	fmt.Fprintf(w, "  %-34s  %s\n", "runwatch COMMAND [flags] [ARGS...]", "run one command")
	fmt.Fprintln(w)
	names := commandNames(false)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, g := range groupOrder {
		heading := false
		for _, n := range names {
			if group := commands[n].group; group == g.name || (g.name == "" && !knownGroup(group)) {
				if !heading {
					fmt.Fprintln(w, g.heading)
					heading = true
				}
				writeWrapped(w, fmt.Sprintf("  %-*s  ", width, n), commands[n].summary)
			}
		}
		if heading {
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w, "Dashboard:")
	writeWrapped(w, "  ", dash.about)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Dashboard flags:")
	fs := newFlagSet(dash.name)
	dash.define(fs)
	printFlags(w, fs)
	fmt.Fprintln(w)
	printExamples(w, dash.examples)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit codes:")
	for _, e := range exitCodes {
		writeWrapped(w, fmt.Sprintf("  %-3d  ", e.code), e.meaning)
	}
	fmt.Fprintln(w)
	writeWrapped(w, "", "Run 'runwatch help COMMAND' or 'runwatch COMMAND --help' for a command's flags and examples; "+
		"'runwatch --version' for the version.")
}

// printCommandHelp is `runwatch COMMAND --help`: usage, what it does, flags with defaults, examples.
func printCommandHelp(w io.Writer, c command, fs *flagSet) {
	if c.name == defaultCommand {
		printMainHelp(w)
		return
	}
	writeWrapped(w, "", helpName(c)+": "+c.summary)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage:")
	fmt.Fprintf(w, "  %s\n", usageLine(c))
	if c.about != "" {
		fmt.Fprintln(w)
		for i, para := range strings.Split(c.about, "\n\n") {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if strings.Contains(para, "\n") {
				fmt.Fprintln(w, para) // laid out by hand
				continue
			}
			writeWrapped(w, "", para)
		}
	}
	if len(fs.names()) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Flags:")
		printFlags(w, fs)
	}
	if len(c.examples) > 0 {
		fmt.Fprintln(w)
		printExamples(w, c.examples)
	}
}

func printExamples(w io.Writer, examples []example) {
	fmt.Fprintln(w, "Examples:")
	for i, e := range examples {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "  # %s\n  %s\n", e.what, e.cmd)
	}
}

// printFlags lists flags as `-o, --output FORMAT   what (default table)`, long names with two dashes.
func printFlags(w io.Writer, fs *flagSet) {
	type line struct{ left, text string }
	var lines []line
	width := 0
	for _, name := range fs.names() {
		fl := fs.Lookup(name)
		left := "    --" + name
		if s, ok := fs.short[name]; ok {
			left = "-" + s + ", --" + name
		}
		value, usage := flag.UnquoteUsage(fl)
		if value != "" {
			left += " " + valueName(value)
		}
		if !isZeroDefault(fl.DefValue) && !strings.Contains(usage, "(default") {
			usage += " (default " + fl.DefValue + ")"
		}
		lines = append(lines, line{"  " + left, usage})
		width = max(width, len(left)+2)
	}
	for _, l := range lines {
		writeWrapped(w, fmt.Sprintf("%-*s   ", width, l.left), l.text)
	}
}

// valueName turns the flag package's type names into the placeholders help uses; a usage text names its
// own with backquotes (`FILE`).
func valueName(v string) string {
	switch v {
	case "duration":
		return "DUR"
	case "int", "uint":
		return "N"
	case "float":
		return "X"
	case "string":
		return "TEXT"
	case "value":
		return "VALUE"
	}
	return v
}

func isZeroDefault(v string) bool {
	switch v {
	case "", "false", "0", "0s":
		return true
	}
	return false
}

// writeWrapped writes text after prefix, wrapped at helpWidth, continuation lines aligned under the text.
func writeWrapped(w io.Writer, prefix, text string) {
	indent := strings.Repeat(" ", len([]rune(prefix)))
	line := prefix
	empty := true
	for _, word := range strings.Fields(text) {
		if !empty && len([]rune(line))+1+len([]rune(word)) > helpWidth {
			fmt.Fprintln(w, line)
			line, empty = indent, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	fmt.Fprintln(w, strings.TrimRight(line, " "))
}
