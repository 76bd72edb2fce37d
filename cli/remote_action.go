package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"runwatch/config"
	"runwatch/remote"
)

// runRemoteAction carries out an action on a run on another machine through that machine's runwatch: the
// plan is asked for with --dry-run and shown here, the confirmation is asked here, and the change is made
// there with --yes, so the locks, compare-and-swap, journal and audit line all happen where the files are.
// args are the command's arguments as given; run is the remote RUN among them.
func runRemoteAction(name string, args []string, run remote.Root, runArg string, cfg config.Config, local remoteActionFlags,
	stdout, stderr io.Writer) int {
	path := run.Path
	if strings.HasPrefix(path, "-") {
		path = "./" + path // never an option to the remote runwatch
	}
	fwd := forwardArgs(args, runArg, path)
	if local.readOnly || cfg.ReadOnly {
		fwd = append(fwd, "--read-only")
	}
	s := sshFor(cfg)
	ctx := context.Background()
	call := func(extra ...string) int {
		out, errb, code, err := s.Run(ctx, run, append(append([]string{name}, fwd...), extra...)...)
		stdout.Write(out)
		if err != nil {
			fmt.Fprintf(stderr, "runwatch %s: %s: %v\n", name, run.Label(), err)
			return exitRefused
		}
		if code == 255 || code == 127 {
			fmt.Fprintf(stderr, "runwatch %s: %s\n", name, remote.Explain(run, code, errb))
			return exitRefused
		}
		stderr.Write(errb)
		return code
	}
	if local.dryRun || local.yes {
		return call()
	}
	if code := call("--dry-run"); code != exitOK {
		return code
	}
	if !stdinIsTerminal() {
		fmt.Fprintf(stderr, "runwatch %s: refused: no terminal to confirm on; pass --yes to apply on %s\n", name, run.Label())
		return exitRefused
	}
	fmt.Fprintf(stdout, "Apply this change on %s? [y/N] ", run.Label())
	answer, _ := bufio.NewReader(actionStdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
	default:
		fmt.Fprintf(stderr, "runwatch %s: refused: not confirmed\n", name)
		return exitRefused
	}
	return call("--yes")
}

// remoteActionFlags are the action flags runwatch looks at itself before handing an action to another machine.
type remoteActionFlags struct {
	dryRun, yes, readOnly bool
}

// forwardArgs is what the remote runwatch gets: the same words, with RUN as the remote path and without
// --config, which names a file on this machine.
func forwardArgs(args []string, runArg, path string) []string {
	var out []string
	replaced := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--config" || a == "-config":
			i++
			continue
		case strings.HasPrefix(a, "--config=") || strings.HasPrefix(a, "-config="):
			continue
		case a == runArg && !replaced:
			a, replaced = path, true
		}
		out = append(out, a)
	}
	return out
}
