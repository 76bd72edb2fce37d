package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"runwatch/remote"
)

func init() {
	register(command{
		name:    remote.LogTailCommand,
		summary: "answer another runwatch: the last N entries of the run log at PATH, with their offsets, as JSON",
		args:    "PATH N",
		about:   "Another runwatch runs this over ssh when it opens the timeline of a run on this machine. It changes nothing.",
		hidden:  true,
		rawArgs: true,
		define:  func(*flagSet) runFunc { return runLogTail },
	})
}

func runLogTail(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		return usageError(stderr, remote.LogTailCommand, "takes PATH and N")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 1 {
		return usageError(stderr, remote.LogTailCommand, "N must be a positive number, got %q", args[1])
	}
	t, err := remote.ReadLogTail(args[0], n)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch %s: %v\n", remote.LogTailCommand, err)
		return exitRefused
	}
	b, err := json.Marshal(t)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch %s: %v\n", remote.LogTailCommand, err)
		return exitRefused
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return exitOK
}
