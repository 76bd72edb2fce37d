package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"runwatch/config"
	"runwatch/fleet"
	"runwatch/model"
	"runwatch/remote"
	"runwatch/state"
	"runwatch/termsafe"
	"runwatch/ui/text"
)

// commonFlags are the flags every subcommand that reads runs shares, so they mean the same everywhere.
type commonFlags struct {
	configPath  string
	staleAfter  time.Duration
	orphanAfter time.Duration
	quietAfter  time.Duration
	maxDepth    int
	runRoots    rootList // --root, for the commands that take RUN (registerRunRoots)
}

// rootList is a flag given once per folder (--root A --root B).
type rootList []string

func (r *rootList) String() string { return strings.Join(*r, ",") }

func (r *rootList) Set(s string) error {
	if s == "" {
		return errors.New("an empty folder")
	}
	*r = append(*r, s)
	return nil
}

// registerRunRoots adds --root to a command that takes RUN: where to look for a RUN given as the start of a
// run id, in place of the config's roots.
func (c *commonFlags) registerRunRoots(fs *flag.FlagSet) {
	fs.Var(&c.runRoots, "root", "look for RUN under `DIR` instead of the config's roots (repeatable); the current directory is looked in too")
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	c.registerConfig(fs)
	fs.DurationVar(&c.staleAfter, "stale-after", 0, "age after which a jonggrang lock without a pid is stale (default 30m)")
	fs.DurationVar(&c.orphanAfter, "orphan-after", 0, "how long a jonggrang phase marked running may go unwritten with nothing alive to run it before it is orphaned (default 5m)")
	fs.DurationVar(&c.quietAfter, "quiet-after", 0, "how long a run held by a live process may stay silent when no past run says how long its stage takes (default 60m)")
	fs.IntVar(&c.maxDepth, "max-depth", 0, "how many directory levels to scan below each path (default 4)")
}

// registerConfig is --config alone, for a command that reads no runs (install).
func (c *commonFlags) registerConfig(fs *flag.FlagSet) {
	fs.StringVar(&c.configPath, "config", "", "read the config from `FILE` (default $XDG_CONFIG_HOME/runwatch/config.yaml)")
}

// resolve loads the config and applies flags over it: flags > config > defaults.
func (c *commonFlags) resolve() (config.Config, error) {
	if c.maxDepth < 0 {
		// As the config's max_depth is: 0 is the default, and no depth is below it.
		return config.Config{}, fmt.Errorf("--max-depth %d is negative", c.maxDepth)
	}
	cfg, err := config.Load(c.configPath)
	if err != nil {
		return cfg, err
	}
	cfg.Apply(c.overrides())
	if len(c.runRoots) > 0 {
		cfg.Roots = append([]string(nil), c.runRoots...)
	}
	return cfg, nil
}

func (c *commonFlags) overrides() config.Overrides {
	return config.Overrides{StaleAfter: c.staleAfter, OrphanAfter: c.orphanAfter, QuietAfter: c.quietAfter, MaxDepth: c.maxDepth}
}

// scanPaths picks what to scan: paths from the command line, else the config's roots, else the defaults.
func scanPaths(args []string, cfg config.Config) []string {
	return fleet.Options{Paths: args, Roots: cfg.Roots}.Scanned()
}

// openRoots opens the runs under paths (else the config's roots, else the defaults), local and remote, with
// cfg's settings: every command that reads runs opens them here. given are the command line's flags, which
// each host's runwatch is given too. Its error is a usage error.
func openRoots(paths []string, cfg config.Config, given fleet.Given) (*fleet.Roots, error) {
	return fleet.Open(fleetOptions(paths, cfg, given))
}

func fleetOptions(paths []string, cfg config.Config, given fleet.Given) fleet.Options {
	o := fleet.Options{Paths: paths, Roots: cfg.Roots, MaxDepth: cfg.MaxDepth, Poll: cfg.Poll.D(), StaleAfter: cfg.StaleAfter.D(),
		Liveness: livenessFor(cfg), StageOrders: stageOrders(cfg), SSH: sshFor(cfg), Given: given}
	if given.Poll > 0 {
		o.Poll = given.Poll
	}
	return o
}

// sshFor is the ssh that reaches remote roots: the config's, overridden by RUNWATCH_SSH_COMMAND.
func sshFor(cfg config.Config) remote.SSH {
	return remote.FromEnv(cfg.SSH.Command, cfg.SSH.Runwatch)
}

// given are the flags of c that each host's runwatch is given too (fleet.Given); poll is the command's --poll.
func (c *commonFlags) given(poll time.Duration) fleet.Given {
	return fleet.Given{StaleAfter: c.staleAfter, OrphanAfter: c.orphanAfter, QuietAfter: c.quietAfter, MaxDepth: c.maxDepth, Poll: poll}
}

func envFor(cfg config.Config) model.Env {
	return fleetOptions(nil, cfg, fleet.Given{}).Env()
}

// livenessFor is the config's thresholds for the judgements the clock decides (orphaned, quiet).
func livenessFor(cfg config.Config) model.LivenessRules {
	return model.LivenessRules{OrphanAfter: cfg.OrphanAfter.D(), QuietAfter: cfg.QuietAfter.D()}
}

// reachingEnv is envFor with the machines runwatch reaches (the config's remote roots), so a lock that names
// one of them is judged there. Every lock is asked about afresh: a command's answer, and an action's plan,
// rest on nothing older than the command.
func reachingEnv(cfg config.Config) model.Env {
	o := fleetOptions(nil, cfg, fleet.Given{})
	env := o.Env()
	if e := o.Reaching(nil); e != nil {
		env.Elsewhere = e
	}
	return env
}

// stageOrders is the config's stage_order in the model's terms.
func stageOrders(cfg config.Config) []model.StageOrderRule {
	var out []model.StageOrderRule
	for _, r := range cfg.StageOrder {
		out = append(out, model.StageOrderRule{Pattern: r.Pattern, Stages: r.Stages})
	}
	return out
}

// resolveRun finds RUN (state.FindRun) under the configured roots, else the defaults.
func resolveRun(arg string, cfg config.Config) (state.Location, error) {
	loc, _, err := resolveRunIn(arg, cfg)
	return loc, err
}

// resolveRunIn is resolveRun, also returning the runs of the configured roots when it walked them to find
// RUN (nil when RUN was a path).
func resolveRunIn(arg string, cfg config.Config) (state.Location, []state.Location, error) {
	return state.FindRun(arg, scanPaths(nil, cfg), cfg.MaxDepth)
}

// sanitizingWriter neutralises escape and control sequences line by line, for commands whose output quotes
// run files. Each Write must carry whole lines or whole fields, as fmt.Fprint calls do.
type sanitizingWriter struct{ w io.Writer }

func (s sanitizingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, strings.Join(text.SanitizeLines(string(p)), "\n")); err != nil {
		return 0, err
	}
	return len(p), nil
}

// terminalSafeJSONWriter applies termsafe.JSON to each Write; json.Encoder writes one whole value a call.
type terminalSafeJSONWriter struct{ w io.Writer }

func (t terminalSafeJSONWriter) Write(p []byte) (int, error) {
	if _, err := t.w.Write(termsafe.JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// oneRunOnly says a command that takes one RUN got more; a further word that is a folder was most likely
// meant as where to look (runwatch brief sphinx ws), which --root says.
func oneRunOnly(pos []string) string {
	msg := fmt.Sprintf("one RUN only, got also %q", pos[1:])
	for _, p := range pos[1:] {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return msg + fmt.Sprintf("; to look for %q under %s, give --root %s", pos[0], p, p)
		}
	}
	return msg
}
