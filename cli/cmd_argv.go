package cli

import (
	"fmt"
	"io"
	"strings"

	"runwatch/remote"
	"runwatch/shellword"
)

func init() {
	register(command{
		name:    remote.ArgvCommand,
		summary: "answer another runwatch: run the command encoded in WORD (its words, each ended by a NUL, in base64url)",
		args:    "[--sh] WORD",
		about: "Another runwatch runs every command it sends over ssh this way, so that the login shell on this machine " +
			"(sh, bash, zsh, fish, tcsh: each quotes differently) reads only letters, digits and - _, never a path or a " +
			"name. With --sh it prints the words instead, quoted for sh, and runs nothing (for a wrapper script, or a " +
			"person reading what was sent).",
		hidden:  true,
		rawArgs: true,
		define: func(fs *flagSet) runFunc {
			return func(args []string, stdout, stderr io.Writer) int { return runArgv(fs.env, args, stdout, stderr) }
		},
	})
}

// runArgv runs the command encoded in args in e, the environment this runwatch was started in.
func runArgv(e env, args []string, stdout, stderr io.Writer) int {
	print := len(args) == 2 && args[0] == "--sh"
	if print {
		args = args[1:]
	}
	if len(args) != 1 {
		return usageError(stderr, remote.ArgvCommand, "takes one encoded WORD, got %d arguments", len(args))
	}
	words, err := remote.DecodeArgv(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "runwatch: %v\n", err)
		return exitUsage
	}
	if print {
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = shellword.Quote(w)
		}
		fmt.Fprintln(stdout, strings.Join(quoted, " "))
		return exitOK
	}
	if len(words) > 0 && words[0] == remote.ArgvCommand {
		fmt.Fprintln(stderr, "runwatch: an encoded command may not hold another")
		return exitUsage
	}
	return dispatch(words, stdout, stderr, e)
}
