package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/charmbracelet/x/term"

	"runwatch/config"
	"runwatch/fleet"
	"runwatch/gcpolicy"
	"runwatch/model"
	"runwatch/state/agentpane"
	"runwatch/status"
	"runwatch/suggest"
	"runwatch/ui/text"
	"runwatch/userdir"
)

func init() {
	register(command{
		name:    "status",
		group:   groupRead,
		summary: "print every run once, those that need you first: a table, or the stable JSON document",
		args:    "[PATH...]",
		paths:   true,
		about: "Scans each PATH (default: the config's roots, else the current directory and " +
			"$OPENCODE_CONFIG_DIR/reports) once and prints the runs in the dashboard's order: the runs that need " +
			"you first, each with the reason. On a terminal the table fits its width (the run id is cut last, in " +
			"its middle); piped, or with -o wide (as kubectl's), nothing is cut. " +
			"-o json prints the stable document (schema 1: fields are added, never renamed), -o jsonl one run a " +
			"line. Exit 1 when some run needs you (a stop condition); exit 6 when a folder could not be read, a host " +
			"could not be reached or the document could not be written, whatever the runs say.",
		examples: []example{
			{"what needs you, under the current directory", "runwatch status"},
			{"more columns: kind, locks, the command that settles each run, problems, folder", "runwatch status -o wide ~/.config/opencode/reports"},
			{"the ids of the runs that need you, with jq", "runwatch status -o jsonl | jq -r 'select(.attention.needs_you) | .id'"},
		},
		completeArgs: []string{argPaths},
		define:       defineStatus,
	})
}

type statusOptions struct {
	output, sort string
	json         bool
	common       commonFlags
	flags        *flag.FlagSet // to tell an --output given from its default
	env          env           // what it runs in (flagSet.env)
}

func defineStatus(fs *flagSet) runFunc {
	o := &statusOptions{flags: fs.FlagSet, env: fs.env}
	fs.StringVar(&o.output, "output", "table", "the `FORMAT` to print: "+orList(status.Formats))
	fs.alias("o", "output")
	fs.BoolVar(&o.json, "json", false, "same as --output json (kept for scripts)")
	fs.StringVar(&o.sort, "sort", "attention", "the `ORDER` of the runs: attention (the dashboard's: those that need you first), "+
		"name or id (the dashboard's name order: by run id), updated (most recent first) or path (by state file)")
	o.common.register(fs)
	return func(paths []string, stdout, stderr io.Writer) int { return runStatus(o, paths, stdout, stderr) }
}

// flagGiven reports whether any of names was set on the command line (not left at its default).
func flagGiven(fs *flag.FlagSet, names ...string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || slices.Contains(names, f.Name) })
	return set
}

func runStatus(o *statusOptions, paths []string, stdout, stderr io.Writer) int {
	defer gcpolicy.Status.Apply(o.env.getenv)()
	if o.json {
		// Any --output but json is a conflict, table too: `-o table --json` was silently JSON.
		if flagGiven(o.flags, "output", "o") && o.output != "json" {
			return usageError(stderr, "status", "--json is --output json; it cannot go with --output %s", o.output)
		}
		o.output = "json"
	}
	if err := oneOf("--output", o.output, status.Formats); err != nil {
		return usageError(stderr, "status", "%v", err)
	}
	if err := oneOf("--sort", o.sort, status.Sorts); err != nil {
		return usageError(stderr, "status", "%v", err)
	}
	cfg, err := o.common.resolve(config.Overrides{})
	if err != nil {
		return configError(stderr, "status", err)
	}
	// Said before any run is read: over 100,000 runs a mistyped path would otherwise wait for all of them.
	roots, code := openRoots(o.env.getenv, "status", paths, cfg, o.common.given(0), stderr)
	if roots == nil {
		return code
	}
	env := roots.Env()
	format := o.output
	if format == "" {
		format = "table"
	}
	// The document streams, one run at a time, each read as soon as it is found; each run is judged by the
	// clock and the history once every run is read (status.Out), so the order they are read in does not
	// matter (docs/FORMATS.md C.3).
	out := status.NewOut(format, env.Now, env.Liveness)
	out.SpillIn(userdir.Temp(o.env.getenv), cfg.ReadOnly, stderr)
	defer out.Close()
	add := out.Add
	if format == "json" || format == "jsonl" {
		// Where each live holder's agent runs: the panes are listed once, on the first run that has one.
		agents := agentpane.NewFinder(env, agentpane.TmuxOf(o.env.getenv), "")
		add = func(r model.Run) {
			if r.LiveHolder() {
				if p, err := agents.Find(&r); err == nil {
					r.AgentPane = &p
				}
			}
			out.Add(r)
		}
	}
	read, err := roots.Read(context.Background(), env, add, func(r model.Run) {
		if r.AgentPane != nil && r.Remote != nil {
			r.AgentPane.Host = r.Remote.Host // found by that host's runwatch, in a pane there
		}
		out.AddJudged(r)
	})
	if err != nil {
		return usageError(stderr, "status", "%v", err)
	}
	unreadable, hosts := read.Unreadable, read.Hosts
	out.LookedIn(shownPaths(answered(roots, hosts)))
	head := status.Snapshot([]model.Run{}, env)
	head.Hosts = hosts
	width := 0
	if format == "table" {
		// Only the table fits the terminal: -o wide exists to add columns, so, as kubectl's, it never cuts.
		width, _ = o.env.terminalWidth(stdout)
	}
	failed, err := out.Print(stdout, o.sort, head, width)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch status: %v\n", err)
		return exitIncomplete
	}
	// A folder that could not be listed may hide runs: say which, and do not report "all read".
	for _, u := range unreadable {
		fmt.Fprintf(stderr, "runwatch status: %s\n", text.Sanitize(u.Error()))
	}
	// A host that could not answer may hold runs that need someone: say so, and do not report "all read".
	hostFailed := false
	for _, h := range hosts {
		if h.Error != "" {
			hostProblem(stderr, "status", h)
		}
		hostFailed = hostFailed || h.State != model.HostLive
	}
	if len(unreadable) > 0 || hostFailed {
		return exitIncomplete
	}
	if failed {
		return exitProblems
	}
	return exitOK
}

// answered are the roots that were looked in: the local ones, and the remote ones whose host answered. A
// host that did not is named by its error, not by "no runs found in" it.
func answered(roots *fleet.Roots, hosts []model.HostHealth) []string {
	down := map[string]bool{}
	for _, h := range hosts {
		down[h.Host] = h.State != model.HostLive
	}
	looked := append([]string(nil), roots.Local...)
	for _, r := range roots.Remote {
		if !down[r.Host] {
			looked = append(looked, r.Label())
		}
	}
	return looked
}

// oneOf checks a flag's value against its choices, suggesting the nearest.
func oneOf(flagName, value string, choices []string) error {
	for _, c := range choices {
		if value == c {
			return nil
		}
	}
	msg := fmt.Sprintf("%s %q is not %s", flagName, value, orList(choices))
	if near := suggest.Nearest(value, choices); len(near) > 0 {
		msg += "; did you mean " + orList(near) + "?"
	}
	return errors.New(msg)
}

// terminalWidth is the width of the terminal w writes to; ok is false when w is not a terminal (a pipe or a
// file), where the table is never cut.
func terminalWidth(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return 0, false
	}
	width, _, err := term.GetSize(f.Fd())
	if err != nil || width <= 0 {
		return 0, false
	}
	return width, true
}
