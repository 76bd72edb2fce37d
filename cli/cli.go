// Package cli is runwatch's command line: flags, subcommands and the wiring of state, watch and ui.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/charmbracelet/x/term"

	"runwatch/config"
	"runwatch/fleet"
	"runwatch/remote"
	"runwatch/state/action"
	"runwatch/suggest"
)

// command is one subcommand. Each lives in its own cmd_<name>.go and registers itself, so subcommands can be
// added without touching this file. Help, completion and the README are built from these fields and from the
// flags the command defines, so a new command or flag shows up in all of them by itself.
type command struct {
	name    string
	summary string // one line, lower case, for the command list
	group   string // the heading it is listed under in help (groupOrder); "" is the last group
	args    string // positional arguments for the usage line: "[PATH...]", "RUN [LOCK]"
	// paths says the positional arguments are paths to scan: each must exist (a typo is an error, exit 2,
	// rather than an empty result).
	paths    bool
	about    string    // paragraphs shown under the usage line
	examples []example // two or three, each with what it does
	hidden   bool      // not listed in help (the completion helper)
	rawArgs  bool      // every argument goes to the command as it is, flags included (the completion helper)
	// define declares the command's flags on fs and returns what runs once they are parsed. Help and
	// completion call it too, so they list exactly the flags the command parses.
	define func(fs *flagSet) runFunc
	// completeArgs says what the positional arguments are, for shell completion: argPaths, argRuns, or a
	// fixed list of words.
	completeArgs []string
}

// runFunc runs a command with its positional arguments, once its flags are parsed.
type runFunc func(args []string, stdout, stderr io.Writer) int

type example struct{ what, cmd string }

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("runwatch: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// defaultCommand runs when the first argument is not a subcommand: the dashboard.
const defaultCommand = "dashboard"

// Main runs runwatch with the arguments after the program name and returns the process exit code. getenv is
// the environment it runs in (os.Getenv): every variable runwatch reads is read through it, so a test gives
// each call its own and runs in parallel.
func Main(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	return dispatch(args, stdout, stderr, env{getenv: getenv})
}

// env is what a command is given besides its arguments and its output: the environment it runs in, and the
// seams a test gives one call (the terminal it draws on, the moments of an action); their zero values are the
// process's own.
type env struct {
	getenv func(string) string
	// terminal, when set, says whether the dashboard has a terminal (isTerminal).
	terminal func(stdout io.Writer) bool
	// width, when set, is the width of the terminal w writes to (terminalWidth).
	width func(w io.Writer) (int, bool)
	// actionSeams play a writer or a full disk at an exact moment of an action a subcommand applies.
	actionSeams action.Seams
	// stdin, when set, is where confirmations are read from, and stdinTerminal whether it is a terminal.
	stdin         io.Reader
	stdinTerminal func() bool
}

// hasTerminal says whether the dashboard can run (isTerminal, unless a test says).
func (e env) hasTerminal(stdout io.Writer) bool {
	if e.terminal != nil {
		return e.terminal(stdout)
	}
	return isTerminal(stdout)
}

// terminalWidth is the width of the terminal w writes to (terminalWidth, unless a test says).
func (e env) terminalWidth(w io.Writer) (int, bool) {
	if e.width != nil {
		return e.width(w)
	}
	return terminalWidth(w)
}

// confirmations is where a command reads a person's answer: stdin.
func (e env) confirmations() io.Reader {
	if e.stdin != nil {
		return e.stdin
	}
	return os.Stdin
}

// stdinIsTerminal says whether a person can answer on stdin.
func (e env) stdinIsTerminal() bool {
	if e.stdinTerminal != nil {
		return e.stdinTerminal()
	}
	// A character device is not enough: /dev/null is one. Only a tty answers the termios ioctl (TCGETS on
	// Linux, TIOCGETA on the BSDs and macOS), which term asks.
	return term.IsTerminal(os.Stdin.Fd())
}

func dispatch(args []string, stdout, stderr io.Writer, e env) int {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "--help", "-help":
			printMainHelp(stdout)
			return exitOK
		case "--version", "-version":
			return runVersion(nil, stdout, stderr)
		}
		if c, ok := commands[args[0]]; ok {
			return runCommand(c, args[1:], stdout, stderr, e)
		}
		if c, i, ok := commandAfterFlags(args); ok {
			return runCommand(c, append(append([]string{}, args[:i]...), args[i+1:]...), stdout, stderr, e)
		}
		if code, handled := unknownCommand(args[0], stderr); handled {
			return code
		}
	}
	return runCommand(commands[defaultCommand], args, stdout, stderr, e)
}

// commandAfterFlags finds a command named after flags (`runwatch --config F status`): as with git's and
// kubectl's global flags, the flags are that command's, and the word is the command, not a path to watch.
// i is the command's index in args.
func commandAfterFlags(args []string) (c command, i int, ok bool) {
	if !strings.HasPrefix(args[0], "-") {
		return command{}, 0, false
	}
	fs := newFlagSet(defaultCommand)
	commands[defaultCommand].define(fs)
	fs.SetOutput(io.Discard)
	if fs.Parse(args) != nil || fs.NArg() == 0 {
		return command{}, 0, false
	}
	i = len(args) - fs.NArg()
	if args[i-1] == "--" {
		return command{}, 0, false // `--` says what follows are paths
	}
	c, ok = commands[args[i]]
	return c, i, ok && args[i] != defaultCommand
}

// unknownCommand answers a first argument that is neither a command, a flag, nor an existing path: git's
// "did you mean" when it is close to a command, otherwise the path error. handled is false when the
// dashboard should take the argument.
func unknownCommand(arg string, stderr io.Writer) (code int, handled bool) {
	if strings.HasPrefix(arg, "-") {
		return 0, false
	}
	if _, err := os.Lstat(arg); err == nil {
		return 0, false
	}
	if strings.ContainsAny(arg, `/\.~`) {
		return 0, false // clearly a path: the dashboard reports that it does not exist
	}
	if _, isRemote, _ := remote.Parse(arg); isRemote {
		return 0, false // host:path, a remote root: the dashboard follows it (or says what is wrong with it)
	}
	if near := suggest.Nearest(arg, commandNames(false)); len(near) > 0 {
		fmt.Fprintf(stderr, "runwatch: %q is not a runwatch command, nor a file or folder here.\n", arg)
		fmt.Fprintf(stderr, "Did you mean %s?\n", orList(quoteAll(near)))
		return exitUsage, true
	}
	fmt.Fprintf(stderr, "runwatch: %q is neither a runwatch command nor a file or folder here (see 'runwatch help')\n", arg)
	return exitUsage, true
}

// runCommand parses a command's flags, wherever they stand among its arguments, and runs it. Every flag
// problem is reported here, once, in one style, with a suggestion when a flag is misspelt. e is what the
// command runs in (flagSet.env).
func runCommand(c command, args []string, stdout, stderr io.Writer, e env) int {
	fs := newFlagSet(c.name)
	fs.env = e
	run := c.define(fs)
	if c.rawArgs {
		return run(args, stdout, stderr)
	}
	pos, err := parseInterleaved(fs.FlagSet, args)
	if errors.Is(err, flag.ErrHelp) {
		printCommandHelp(stdout, c, fs)
		return exitOK
	}
	if err != nil {
		return flagError(stderr, c, fs, err, args)
	}
	if c.paths {
		// Before the config is read: what is wrong with a path given is said first.
		if _, _, err := fleet.Check(pos); err != nil {
			return rootsProblem(stderr, c.name, pos, config.Config{}, err)
		}
	}
	return run(pos, stdout, stderr)
}

// parseInterleaved accepts flags before, between and after positional arguments (`runwatch ./a --read-only
// ./b`), which the flag package alone stops at the first of them. After `--` everything is positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func commandNames(withHidden bool) []string {
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if n != defaultCommand && (withHidden || !c.hidden) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// usageError prints a usage problem the same way for every subcommand.
func usageError(stderr io.Writer, name, format string, args ...any) int {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(stderr, "%s: %s\n", progName(name), strings.TrimSpace(msg))
	if c, ok := commands[name]; ok {
		fmt.Fprintf(stderr, "usage: %s\n", usageLine(c))
		fmt.Fprintf(stderr, "Run '%s --help' for the flags and examples.\n", helpName(c))
	}
	return exitUsage
}

// configError reports a config that cannot be used: the message names the file, the line and the fix, and
// the command's usage, which is not what is wrong, is not printed after it.
func configError(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "%s: %v\n", progName(name), err)
	return exitUsage
}

// progName is how messages of a command start: "runwatch status", or "runwatch" for the dashboard.
func progName(name string) string {
	if name == defaultCommand || name == "" {
		return "runwatch"
	}
	return "runwatch " + name
}

func helpName(c command) string {
	if c.name == defaultCommand {
		return "runwatch"
	}
	return "runwatch " + c.name
}
