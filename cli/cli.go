// Package cli is runwatch's command line: flags, subcommands and the wiring of state, watch and ui.
package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// command is one subcommand. Each lives in its own cmd_<name>.go and registers itself, so subcommands can be
// added without touching this file.
type command struct {
	name    string
	summary string
	usage   string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("runwatch: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// defaultCommand runs when the first argument is not a subcommand: the dashboard.
const defaultCommand = "dashboard"

// Main runs runwatch with the arguments after the program name and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	return dispatch(args, stdout, stderr)
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "help", "-h", "--help":
			printUsage(stdout)
			return 0
		}
		if c, ok := commands[args[0]]; ok {
			return c.run(args[1:], stdout, stderr)
		}
	}
	if c, ok := commands[defaultCommand]; ok {
		return c.run(args, stdout, stderr)
	}
	printUsage(stderr)
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "runwatch: watch and safely steer long-running agent runs on disk")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: runwatch [PATH...]            open the dashboard")
	fmt.Fprintln(w, "       runwatch COMMAND [ARGS...]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		if n != defaultCommand {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "run 'runwatch COMMAND -h' for a command's flags")
}

// usageError prints a usage problem the same way for every subcommand.
func usageError(stderr io.Writer, name, format string, args ...any) int {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(stderr, "runwatch %s: %s\n", name, strings.TrimSpace(msg))
	if c, ok := commands[name]; ok && c.usage != "" {
		fmt.Fprintf(stderr, "usage: %s\n", c.usage)
	}
	return 2
}
