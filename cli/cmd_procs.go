package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"runwatch/remote"
)

func init() {
	register(command{
		name:    remote.FactsCommand,
		summary: "answer another runwatch: this machine's host name and the liveness and start time of PIDs",
		args:    "[PID...]",
		about: "Another runwatch runs this over ssh to judge a lock that names this machine by this machine's own " +
			"processes (remote roots). It prints one JSON document and changes nothing.",
		hidden:  true,
		rawArgs: true,
		define:  func(*flagSet) runFunc { return runProcs },
	})
}

func runProcs(args []string, stdout, stderr io.Writer) int {
	pids, err := remote.ParsePIDs(args)
	if err != nil {
		return usageError(stderr, remote.FactsCommand, "%v", err)
	}
	b, err := json.Marshal(remote.LocalFacts(pids))
	if err != nil {
		fmt.Fprintf(stderr, "runwatch %s: %v\n", remote.FactsCommand, err)
		return exitRefused
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return exitOK
}
