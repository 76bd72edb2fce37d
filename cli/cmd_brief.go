package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"runwatch/state"
	"runwatch/state/brief"
)

func init() {
	register(command{
		name:    "brief",
		group:   groupRead,
		summary: "print a run's resume brief: what is done, where to restart, what to retry or clean first",
		args:    "RUN",
		about: "RUN is a run directory, a state file, or a unique prefix of a run id under the configured roots. " +
			"The brief is Markdown, to read or to paste into the agent; --json prints the same as a document.",
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
	common.register(fs.FlagSet)
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
		return usageError(stderr, "brief", "one RUN only, got also %q", rest[1:])
	}
	cfg, err := common.resolve()
	if err != nil {
		return usageError(stderr, "brief", "%v", err)
	}
	if cfg.ReadOnly {
		brief.ReadOnlyCache()
	}
	loc, err := resolveRun(target, cfg)
	if err != nil {
		// Not found, ambiguous (the candidates are listed) or unreadable: in every case there is no one run.
		fmt.Fprintf(stderr, "runwatch brief: %v\n", err)
		return exitNoRun
	}
	env := reachingEnv(cfg)
	b := brief.Build(state.Load(loc, env), env)
	if *asJSON {
		enc := json.NewEncoder(terminalSafeJSONWriter{stdout})
		enc.SetIndent("", "  ")
		if err := enc.Encode(b); err != nil {
			fmt.Fprintf(stderr, "runwatch brief: %v\n", err)
			return exitNoRun
		}
		return exitOK
	}
	if _, err := io.WriteString(stdout, b.Markdown()); err != nil {
		fmt.Fprintf(stderr, "runwatch brief: %v\n", err)
		return exitNoRun
	}
	return exitOK
}
