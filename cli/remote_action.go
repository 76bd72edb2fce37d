package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"runwatch/config"
	"runwatch/remote"
	"runwatch/state/action"
	"runwatch/termsafe"
)

// runRemoteAction carries out an action on a run on another machine through that machine's runwatch: the
// plan is asked for with --dry-run --json and shown here, the confirmation is asked here, and the change is
// made there with --yes and --expect (what the plan shown started from), so the locks, compare-and-swap,
// journal and audit line all happen where the files are, and only to the bytes the person saw.
func runRemoteAction(e env, call remoteCall, run remote.Root, cfg config.Config, local remoteActionFlags, stdout, stderr io.Writer) int {
	if cfg.ReadOnly {
		call.flags = append(call.flags, "--read-only")
	}
	s := sshFor(e.getenv, cfg)
	ctx := context.Background()
	do := func(flags ...string) (out []byte, code int) {
		out, errb, code, err := s.Run(ctx, run, call.argv(flags...)...)
		if err != nil {
			fmt.Fprintf(stderr, "runwatch %s: %s: %v\n", call.name(), run.Label(), err)
			return nil, exitRefused
		}
		if code == 255 || code == 127 {
			fmt.Fprintf(stderr, "runwatch %s: %s\n", call.name(), remote.Explain(run, code, errb))
			return nil, exitRefused
		}
		stderr.Write(errb)
		if code == exitUsage {
			fmt.Fprintf(stderr, "runwatch %s: %s: its runwatch may be older than this one: upgrade it (%s)\n",
				call.name(), run.Label(), remote.InstallHint(run))
		}
		return out, code
	}
	// Nothing is applied (--dry-run), or nothing is shown before applying (--yes): the host's words as they are.
	if local.dryRun || local.yes {
		flags := []string{"--yes"}
		switch {
		case local.dryRun && local.asJSON:
			flags = []string{"--dry-run", "--json"}
		case local.dryRun:
			flags = []string{"--dry-run"}
		}
		out, code := do(flags...)
		stdout.Write(out)
		return code
	}
	out, code := do("--dry-run", "--json")
	if code != exitOK {
		stdout.Write(out)
		return code
	}
	plan, err := readRemotePlan(out)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch %s: refused: %s: %v\n", call.name(), run.Label(), err)
		return exitRefused
	}
	fmt.Fprintf(stdout, "%s %s: %s\n", call.name(), plan.Run, plan.Summary)
	io.WriteString(stdout, plan.Preview)
	if !e.stdinIsTerminal() {
		fmt.Fprintf(stderr, "runwatch %s: refused: no terminal to confirm on; pass --yes to apply on %s\n", call.name(), run.Label())
		return exitRefused
	}
	fmt.Fprint(stdout, plan.questionOn(run)+" [y/N] ")
	answer, _ := bufio.NewReader(e.confirmations()).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
	default:
		fmt.Fprintf(stderr, "runwatch %s: refused: not confirmed\n", call.name())
		return exitRefused
	}
	out, code = do(append([]string{"--yes"}, plan.expect()...)...)
	stdout.Write(out)
	return code
}

// readRemotePlan reads what a host's --dry-run --json printed.
func readRemotePlan(out []byte) (planJSON, error) {
	var p planJSON
	if err := json.Unmarshal(out, &p); err != nil {
		return p, fmt.Errorf("its runwatch's plan is not JSON (%v): upgrade it with runwatch install", err)
	}
	return p, nil
}

// questionOn is what a confirmation of the plan asks, on the host of root: what the host's runwatch says it
// writes ("Remove lock/active.lock and append to run.log on gpu2?"), or, from a runwatch before it said so,
// "Apply this change on gpu2?".
func (p planJSON) questionOn(root remote.Root) string {
	q := strings.TrimSuffix(strings.TrimSpace(p.Question), "?")
	if q == "" {
		q = "Apply this change"
	}
	return termsafe.Plain(q, 300) + " on " + root.Label() + "?"
}

// expect is the --expect words that hold the host to the bytes this plan starts from.
func (p planJSON) expect() []string {
	words := make([]string, 0, len(p.Starts))
	for _, s := range p.Starts {
		words = append(words, expectWord(s))
	}
	return words
}

// remoteActionFlags are the action flags runwatch looks at itself before handing an action to another machine.
type remoteActionFlags struct {
	dryRun, yes, asJSON bool
}

// remoteCallOf is the command a remote runwatch gets for an action typed here: the request as the dashboard
// would make it, with RUN as the path on its host, and the flags set, less those runwatch here decides
// (--config names a file on this machine; --dry-run, --yes, --json and --expect are what runRemoteAction
// asks for) and --to, which is the request's.
func remoteCallOf(req action.Request, o *actionFlags, run remote.Root) remoteCall {
	call := remoteCall{req: req, run: run.Path}
	o.set.Visit(func(f *flag.Flag) {
		switch long := o.set.longName(f.Name); long {
		case "config", "dry-run", "yes", "json", "expect", "to", "root": // root: where RUN is looked for here
		default:
			call.flags = append(call.flags, "--"+long+"="+f.Value.String())
		}
	})
	return call
}
