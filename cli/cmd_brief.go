package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"runwatch/config"
	"runwatch/model"
	"runwatch/remote"
	"runwatch/state"
	"runwatch/state/brief"
	"runwatch/termsafe"
	"runwatch/ui/text"
)

func init() {
	register(command{
		name:    "brief",
		group:   groupRead,
		summary: "print a run's resume brief: what is done, where to restart, what to retry or clean first",
		args:    "RUN",
		about: "RUN is a run directory, a state file, or a unique prefix of a run id under the configured roots. " +
			"The brief is Markdown, to read or to paste into the agent; --json prints the same as a document. " +
			"Its Time line (how long the current stage has run, what past runs of the task say it takes, the ETA) " +
			"comes from the task's other runs under the configured roots, as in the dashboard.",
		examples: []example{
			{"the brief of the run whose id starts with irm-backfill", "runwatch brief irm-backfill"},
			{"the brief of a run folder, as JSON", "runwatch brief --json ~/.config/opencode/reports/irm-backfill-20261103T120000Z"},
		},
		completeArgs: []string{argRuns},
		define:       defineBrief,
	})
}

// Exit codes of brief: printed, the run cannot be found (or RUN is ambiguous), usage error.
const exitNoRun = 1

func defineBrief(fs *flagSet) runFunc {
	asJSON := fs.Bool("json", false, "print the brief as JSON (schema 1) instead of Markdown")
	var common commonFlags
	common.register(fs)
	common.registerRunRoots(fs.FlagSet)
	return func(args []string, stdout, stderr io.Writer) int {
		return runBrief(args, *asJSON, common, stdout, stderr)
	}
}

func runBrief(rest []string, asJSONFlag bool, common commonFlags, stdout, stderr io.Writer) int {
	asJSON := &asJSONFlag
	if len(rest) == 0 {
		return usageError(stderr, "brief", "RUN is missing: give a run directory or the start of a run id")
	}
	target := rest[0]
	if len(rest) > 1 {
		return usageError(stderr, "brief", "%s", oneRunOnly(rest))
	}
	cfg, err := common.resolve(config.Overrides{})
	if err != nil {
		return configError(stderr, "brief", err)
	}
	if root, isRemote, err := remote.Parse(target); err != nil {
		return usageError(stderr, "brief", "%v", err)
	} else if isRemote {
		return remoteBrief(common.getenv, root, *asJSON, cfg, stdout, stderr)
	}
	// A RUN here is looked for under the roots, and its task's other runs read there: checked as every
	// command checks its roots.
	if code := checkRoots(common.getenv, "brief", cfg, stderr); code != exitOK {
		return code
	}
	loc, rootRuns, err := resolveRunIn(common.getenv, target, cfg)
	if err != nil {
		// Not found, ambiguous (the candidates are listed) or unreadable: in every case there is no one run.
		fmt.Fprintf(stderr, "runwatch brief: %v\n", err)
		return exitNoRun
	}
	env := reachingEnv(common.getenv, cfg)
	run := state.Load(loc, env)
	// Judged as the dashboard judges it, by the clock and with what the task's other runs say (its Time
	// line, the ETA; orphaned, quiet).
	model.JudgeTime(&run, env.Now, env.Liveness, taskHistory(common.getenv, run, loc, rootRuns, cfg))
	b := brief.BuildWith(run, env, brief.Options{Cache: briefCache(common.getenv, cfg.ReadOnly)})
	if *asJSON {
		enc := json.NewEncoder(terminalSafeJSONWriter{stdout})
		enc.SetIndent("", "  ")
		if err := enc.Encode(b); err != nil {
			fmt.Fprintf(stderr, "runwatch brief: %v\n", err)
			return exitIncomplete // a document it could not finish writing, as status's
		}
		return exitOK
	}
	if _, err := io.WriteString(stdout, b.Markdown()); err != nil {
		fmt.Fprintf(stderr, "runwatch brief: %v\n", err)
		return exitIncomplete // a document it could not finish writing (a full disk), as status's
	}
	return exitOK
}

// taskHistory is state.TaskHistory over the local roots of the config (or the defaults): what the dashboard
// would read, in the environment getenv reads.
func taskHistory(getenv func(string) string, run model.Run, loc state.Location, rootRuns []state.Location, cfg config.Config) *model.History {
	local, _, err := remote.Split(scanPaths(getenv, nil, cfg))
	if err != nil {
		local = nil
	}
	return state.TaskHistory(run, loc, rootRuns, local, cfg.MaxDepth, envFor(cfg))
}

// remoteBrief prints the brief of a run on another machine as that machine's runwatch builds it, from its
// own files and its own git; getenv is the environment ssh is found in.
func remoteBrief(getenv func(string) string, root remote.Root, asJSON bool, cfg config.Config, stdout, stderr io.Writer) int {
	args := []string{"brief"}
	if asJSON {
		args = append(args, "--json")
	}
	if cfg.ReadOnly {
		args = append(args, "--read-only") // it writes nothing there either
	}
	out, errb, code, err := sshFor(getenv, cfg).Run(context.Background(), root, append(args, "--", root.Path)...)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "runwatch brief: %s: %v\n", root.Label(), err)
		return exitNoRun
	case code != 0:
		fmt.Fprintf(stderr, "runwatch brief: %s\n", remote.Explain(root, code, errb))
		return exitNoRun
	}
	if asJSON {
		_, _ = stdout.Write(termsafe.JSON(out))
		return exitOK
	}
	_, _ = io.WriteString(stdout, strings.Join(text.SanitizeLines(strings.TrimRight(string(out), "\n")), "\n")+"\n")
	return exitOK
}
