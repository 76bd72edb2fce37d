package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/config"
	"runwatch/model"
	"runwatch/state/action"
	"runwatch/ui"
	"runwatch/watch"
)

func init() {
	register(command{
		name:    "dashboard",
		summary: "open the live dashboard (the default command)",
		usage:   "runwatch [PATH...] [--config FILE] [--read-only] [--poll DUR] [--stale-after DUR] [--max-depth N] [--debug FILE]",
		run:     runDashboard,
	})
}

// dashboardOptions are the dashboard's flags; the demo command fills them too.
type dashboardOptions struct {
	ConfigPath string
	ReadOnly   bool
	Poll       time.Duration
	StaleAfter time.Duration
	MaxDepth   int
	DebugPath  string
	// Notify holds the notification flags; nil means the config file's notify: section alone.
	Notify *notifyFlags

	// Program I/O; nil means the terminal. Tests and benchmarks pass their own, with a size, since a pipe
	// has none to report.
	Input         io.Reader
	Output        io.Writer
	Width, Height int
}

type dashboardFlags struct {
	set      *flag.FlagSet
	common   commonFlags
	readOnly *bool
	poll     *time.Duration
	debug    *string
	notify   notifyFlags
}

func newDashboardFlags() *dashboardFlags {
	f := &dashboardFlags{set: flag.NewFlagSet("dashboard", flag.ContinueOnError)}
	f.common.register(f.set)
	f.readOnly = f.set.Bool("read-only", false, "remove every key that changes run state")
	f.poll = f.set.Duration("poll", 0, "poll at this interval instead of using inotify (e.g. 2s, for network filesystems)")
	f.debug = f.set.String("debug", "", "append messages and frame timings to FILE")
	f.notify.register(f.set)
	return f
}

func runDashboard(args []string, stdout, stderr io.Writer) int {
	f := newDashboardFlags()
	f.set.SetOutput(stderr)
	f.set.Usage = func() {
		fmt.Fprintln(stderr, "usage: "+commands["dashboard"].usage)
		fmt.Fprintln(stderr, "Open the live dashboard over the run roots under each PATH (default: config roots, else the current")
		fmt.Fprintln(stderr, "directory and $OPENCODE_CONFIG_DIR/reports). Press ? inside for the keys.")
		fmt.Fprintln(stderr)
		f.set.PrintDefaults()
	}
	paths, err := parseInterleaved(f.set, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return usageError(stderr, "dashboard", "%v", err)
	}
	return openDashboard(paths, dashboardOptions{
		ConfigPath: f.common.configPath, ReadOnly: *f.readOnly, Poll: *f.poll, StaleAfter: f.common.staleAfter,
		MaxDepth: f.common.maxDepth, DebugPath: *f.debug, Notify: &f.notify,
	}, stdout, stderr)
}

// parseInterleaved accepts flags before, between and after paths (`runwatch ./a --read-only ./b`), which
// the flag package alone stops at the first path.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var paths []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return paths, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(paths, rest...), nil
		}
		paths = append(paths, rest[0])
		args = rest[1:]
	}
}

// openDashboard runs the dashboard over paths until the user quits. It returns the exit code.
func openDashboard(paths []string, opts dashboardOptions, stdout, stderr io.Writer) int {
	cfg, err := config.Load(opts.ConfigPath)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch: %v\n", err)
		return 2
	}
	if opts.StaleAfter > 0 {
		cfg.StaleAfter = config.Duration(opts.StaleAfter)
	}
	if opts.MaxDepth > 0 {
		cfg.MaxDepth = opts.MaxDepth
	}
	if opts.Poll > 0 {
		cfg.Poll = config.Duration(opts.Poll)
	}
	readOnly := opts.ReadOnly || cfg.ReadOnly
	keys, err := ui.NewKeyMap(cfg.Keys, readOnly)
	if err != nil {
		where := "config"
		if cfg.Path != "" {
			where = "config " + cfg.Path
		}
		fmt.Fprintf(stderr, "runwatch: %s: %v\n", where, err)
		return 2
	}

	notifySettings, err := opts.Notify.settings(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch: %v\n", err)
		return 2
	}

	var debug io.Writer
	if opts.DebugPath != "" {
		f, err := os.OpenFile(opts.DebugPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "runwatch: --debug: %v\n", err)
			return 2
		}
		defer f.Close()
		debug = f
	}

	w, err := watch.New(watch.Options{
		Paths: scanPaths(paths, cfg), MaxDepth: cfg.MaxDepth, Poll: cfg.Poll.D(), StaleAfter: cfg.StaleAfter.D(),
	})
	if err != nil {
		fmt.Fprintf(stderr, "runwatch: %v\n", err)
		return 1
	}
	defer w.Close()

	var p *tea.Program
	notifier, err := newDashboardNotifier(notifySettings, func(msg tea.Msg) { p.Send(msg) })
	if err != nil {
		fmt.Fprintf(stderr, "runwatch: %v\n", err)
		return 2
	}

	m := ui.New(ui.Options{
		Theme: cfg.Theme, Keys: keys, ReadOnly: readOnly, Actor: ui.NewActor(action.Options{ReadOnly: readOnly}, func() model.Env { return envFor(cfg) }),
		OpenLog: ui.OpenIndexedLog, Debug: debug, InTmux: ui.InTmux(),
		Env: func() model.Env { return envFor(cfg) }, ResumeCommand: cfg.ResumeCommand,
	})
	var popts []tea.ProgramOption
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	if opts.Width > 0 && opts.Height > 0 {
		popts = append(popts, tea.WithWindowSize(opts.Width, opts.Height))
	}
	p = tea.NewProgram(m, popts...)

	notifier.start(w.Snapshot())
	defer notifier.stop()
	go ui.Relay(p, w, notifier.Apply)

	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		fmt.Fprintf(stderr, "runwatch: %v\n", err)
		return 1
	}
	return 0
}
