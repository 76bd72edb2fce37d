package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"runwatch/config"
	"runwatch/fleet"
	"runwatch/model"
	"runwatch/remote"
	"runwatch/state"
	"runwatch/state/brief"
	"runwatch/state/journal"
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
	runRoots    rootList            // --root, for the commands that take RUN (registerRunRoots)
	getenv      func(string) string // the command's environment (flagSet.env)
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

func (c *commonFlags) register(fs *flagSet) {
	c.registerConfig(fs)
	fs.DurationVar(&c.staleAfter, "stale-after", 0, "age after which a jonggrang lock without a pid is stale (default 30m)")
	fs.DurationVar(&c.orphanAfter, "orphan-after", 0, "how long a jonggrang phase marked running may go unwritten with nothing alive to run it before it is orphaned (default 5m)")
	fs.DurationVar(&c.quietAfter, "quiet-after", 0, "how long a run held by a live process may stay silent when no past run says how long its stage takes (default 60m)")
	fs.IntVar(&c.maxDepth, "max-depth", 0, "how many directory levels to scan below each path (default 4)")
}

// registerConfig is --config alone, for a command that reads no runs (install), and the environment the
// default config is found in.
func (c *commonFlags) registerConfig(fs *flagSet) {
	c.getenv = fs.env.getenv
	fs.StringVar(&c.configPath, "config", "", "read the config from `FILE` (default $XDG_CONFIG_HOME/runwatch/config.yaml)")
}

// resolve loads the config and applies flags over it: flags > config > defaults.
// own are the command's flags over the config beyond the common ones (--poll, --read-only), merged with
// them in one config.Apply.
func (c *commonFlags) resolve(own config.Overrides) (config.Config, error) {
	if c.maxDepth < 0 {
		// As the config's max_depth is: 0 is the default, and no depth is below it.
		return config.Config{}, fmt.Errorf("--max-depth %d is negative", c.maxDepth)
	}
	cfg, err := config.Load(c.configPath, c.getenv)
	if err != nil {
		return cfg, err
	}
	o := c.overrides()
	o.Poll, o.ReadOnly = own.Poll, own.ReadOnly
	cfg.Apply(o)
	if len(c.runRoots) > 0 {
		// Checked as every root is, so a missing one is a usage error here as everywhere.
		if _, _, err := fleet.Check(c.runRoots); err != nil {
			return cfg, err
		}
		cfg.Roots = append([]string(nil), c.runRoots...)
		cfg.RootsLine = 0 // not the file's: a problem with them names no line of it
	}
	return cfg, nil
}

func (c *commonFlags) overrides() config.Overrides {
	return config.Overrides{StaleAfter: c.staleAfter, OrphanAfter: c.orphanAfter, QuietAfter: c.quietAfter, MaxDepth: c.maxDepth}
}

// scanPaths picks what to scan: paths from the command line, else the config's roots, else the defaults of
// the environment getenv reads.
func scanPaths(getenv func(string) string, args []string, cfg config.Config) []string {
	return fleet.Options{Paths: args, Roots: cfg.Roots, Getenv: getenv}.Scanned()
}

// openRoots opens the runs under paths (else the config's roots, else the defaults), local and remote, with
// cfg's settings: every command that reads runs opens them here. given are the command line's flags, which
// each host's runwatch is given too. When they cannot be opened it has said why (rootsProblem) and returns
// nil and the exit code.
func openRoots(getenv func(string) string, name string, paths []string, cfg config.Config, given fleet.Given, stderr io.Writer) (*fleet.Roots, int) {
	roots, err := fleet.Open(fleetOptions(getenv, paths, cfg, given))
	if err != nil {
		return nil, rootsProblem(stderr, name, paths, cfg, err)
	}
	return roots, exitOK
}

// checkRoots is openRoots' check alone, for a command that looks for one RUN under the roots (brief): the
// config's roots, or --root's.
func checkRoots(getenv func(string) string, name string, cfg config.Config, stderr io.Writer) int {
	if _, _, err := fleet.Check(scanPaths(getenv, nil, cfg)); err != nil {
		return rootsProblem(stderr, name, nil, cfg, err)
	}
	return exitOK
}

// rootsProblem says why roots cannot be opened: a usage error (2) without the usage lines, since what is
// wrong is a path. The config's roots are named by the file and the line of roots:, where they are fixed;
// roots the command line gives (paths, --root) stand over the config, which is then not mentioned.
func rootsProblem(stderr io.Writer, name string, paths []string, cfg config.Config, err error) int {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	fromConfig := len(paths) == 0 && len(cfg.Roots) > 0 && cfg.Path != "" && cfg.RootsLine > 0
	for _, e := range errs {
		if fromConfig {
			var re *state.RootError
			if errors.As(e, &re) && errors.Is(re.Err, fs.ErrNotExist) {
				e = fmt.Errorf("%s does not exist", re.Path)
			}
			e = cfg.RootsError(e)
		}
		fmt.Fprintf(stderr, "%s: %v\n", progName(name), e)
	}
	return exitUsage
}

// fleetOptions are the options of fleet.Open from the config, the command line and the environment getenv
// reads (the default roots, ssh).
func fleetOptions(getenv func(string) string, paths []string, cfg config.Config, given fleet.Given) fleet.Options {
	o := fleet.Options{Paths: paths, Roots: cfg.Roots, Getenv: getenv, MaxDepth: cfg.MaxDepth, Poll: cfg.Poll.D(), StaleAfter: cfg.StaleAfter.D(),
		Liveness: livenessFor(cfg), StageOrders: stageOrders(cfg), SSH: sshFor(getenv, cfg), Given: given}
	return o
}

// sshFor is the ssh that reaches remote roots: the config's, overridden by RUNWATCH_SSH_COMMAND in the
// environment getenv reads.
func sshFor(getenv func(string) string, cfg config.Config) remote.SSH {
	return remote.FromEnv(getenv, cfg.SSH.Command, cfg.SSH.Runwatch)
}

// briefCache is where briefs keep the index of a large run.log: the cache folder of the environment getenv
// reads, written to unless readOnly (read-only mode writes nothing: an index found there is still used).
func briefCache(getenv func(string) string, readOnly bool) brief.IndexCache {
	return brief.IndexCache{Dir: brief.IndexDir(getenv), ReadOnly: readOnly}
}

// journalIn is the journal actions are written to: path when set, else the one of the environment getenv
// reads ("" when it has no home for one, which the action then reports).
func journalIn(getenv func(string) string, path string) string {
	if path == "" {
		path, _ = journal.DefaultPath(getenv)
	}
	return path
}

// given are the flags of c that each host's runwatch is given too (fleet.Given); poll is the command's --poll.
func (c *commonFlags) given(poll time.Duration) fleet.Given {
	return fleet.Given{StaleAfter: c.staleAfter, OrphanAfter: c.orphanAfter, QuietAfter: c.quietAfter, MaxDepth: c.maxDepth, Poll: poll}
}

// envFor is the environment runs are judged in, as the config says (fleet.Options.Env).
func envFor(cfg config.Config) model.Env {
	return fleet.Options{StaleAfter: cfg.StaleAfter.D(), Liveness: livenessFor(cfg), StageOrders: stageOrders(cfg)}.Env()
}

// livenessFor is the config's thresholds for the judgements the clock decides (orphaned, quiet).
func livenessFor(cfg config.Config) model.LivenessRules {
	return model.LivenessRules{OrphanAfter: cfg.OrphanAfter.D(), QuietAfter: cfg.QuietAfter.D()}
}

// reachingEnv is envFor with the machines runwatch reaches (the config's remote roots), so a lock that names
// one of them is judged there. Every lock is asked about afresh: a command's answer, and an action's plan,
// rest on nothing older than the command.
func reachingEnv(getenv func(string) string, cfg config.Config) model.Env {
	o := fleetOptions(getenv, nil, cfg, fleet.Given{})
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

// resolveRun finds RUN (state.FindRun) under the configured roots, else the defaults of the environment
// getenv reads.
func resolveRun(getenv func(string) string, arg string, cfg config.Config) (state.Location, error) {
	loc, _, err := resolveRunIn(getenv, arg, cfg)
	return loc, err
}

// resolveRunIn is resolveRun, also returning the runs of the configured roots when it walked them to find
// RUN (nil when RUN was a path).
func resolveRunIn(getenv func(string) string, arg string, cfg config.Config) (state.Location, []state.Location, error) {
	return state.FindRun(arg, scanPaths(getenv, nil, cfg), cfg.MaxDepth)
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

// hostProblem says what a host's runwatch could not do, in the same words from every command.
func hostProblem(stderr io.Writer, name string, h model.HostHealth) {
	fmt.Fprintf(stderr, "%s: %s\n", progName(name), termsafe.Screen(h.Error))
}

// hostsSaid says on stderr what becomes of the hosts a watch follows (events, notify): a host never reached
// ends the command as it fails status (fleet.Unreached), with its words and exit code, rather than watch
// nothing; one lost later is said each time its error changes, and tried again.
type hostsSaid struct {
	name string
	last map[string]string
}

func newHostsSaid(name string) *hostsSaid { return &hostsSaid{name: name, last: map[string]string{}} }

// update says what changed of hosts; end is true, with the exit code, when one was never reached.
func (s *hostsSaid) update(stderr io.Writer, hosts []model.HostHealth) (code int, end bool) {
	if h, ok := fleet.Unreached(hosts); ok {
		hostProblem(stderr, s.name, h)
		return exitIncomplete, true
	}
	for _, h := range hosts {
		if h.Error != "" && s.last[h.Host] != h.Error {
			again := ""
			if h.State == model.HostReconnecting {
				again = "; trying again"
			}
			fmt.Fprintf(stderr, "%s: %s%s\n", progName(s.name), termsafe.Screen(h.Error), again)
		}
		s.last[h.Host] = h.Error
	}
	return exitOK, false
}
