package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"runwatch/state"
	"runwatch/state/brief"
)

func init() {
	register(command{
		name:    "brief",
		summary: "print a run's resume brief: what is done, where to restart, what to retry or clean first",
		usage:   "runwatch brief RUN [--json] [--config FILE] [--stale-after DUR] [--max-depth N]",
		run:     runBrief,
	})
}

// Exit codes of brief: printed, the run cannot be found (or RUN is ambiguous), usage error.
const exitNoRun = 1

func runBrief(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("brief", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the brief as JSON (schema 1) instead of Markdown")
	var common commonFlags
	common.register(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	// Flags may also follow RUN, as in `runwatch brief RUN --json`.
	rest := fs.Args()
	if len(rest) == 0 {
		return usageError(stderr, "brief", "RUN is missing: give a run directory or the start of a run id")
	}
	target := rest[0]
	if err := fs.Parse(rest[1:]); err != nil {
		return exitUsage
	}
	if len(fs.Args()) > 0 {
		return usageError(stderr, "brief", "one RUN only, got also %q", fs.Args())
	}
	cfg, err := common.resolve()
	if err != nil {
		return usageError(stderr, "brief", "%v", err)
	}
	loc, err := resolveRun(target, cfg)
	if err != nil {
		// Not found, ambiguous (the candidates are listed) or unreadable: in every case there is no one run.
		fmt.Fprintf(stderr, "runwatch brief: %v\n", err)
		return exitNoRun
	}
	env := envFor(cfg)
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
