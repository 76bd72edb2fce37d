package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/charmbracelet/x/term"

	"runwatch/config"
	"runwatch/fleet"
	"runwatch/gcpolicy"
	"runwatch/model"
	"runwatch/notify"
	"runwatch/remote"
	"runwatch/state/action"
	"runwatch/state/launch"
	"runwatch/ui"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/watch"
)

func init() {
	register(command{
		name:    "dashboard",
		summary: "open the live dashboard (the default command: 'runwatch PATH' is 'runwatch dashboard PATH')",
		args:    "[PATH...]",
		paths:   true,
		about: "Watches every run root under each PATH (default: the config's roots, else the current directory " +
			"and $OPENCODE_CONFIG_DIR/reports) and shows which runs need you first. Press ? inside for the keys. " +
			"It needs a terminal; in scripts use 'runwatch status' or 'runwatch events'.",
		examples: []example{
			{"the runs under the current directory", "runwatch"},
			{"two folders, without any key that changes run state", "runwatch --read-only ~/src/app ~/.config/opencode/reports"},
			{"a network filesystem, polled every 2 seconds", "runwatch --poll 2s /mnt/shared/runs"},
		},
		completeArgs: []string{argPaths},
		define:       defineDashboard,
	})
}

// dashboardOptions are the dashboard's flags; the demo command fills them too.
type dashboardOptions struct {
	// Common is the flags every command that reads runs shares, resolved over the config as theirs are (the
	// demo sets orphanAfter to shorten the grace).
	Common    commonFlags
	ReadOnly  bool
	Poll      time.Duration
	DebugPath string
	NoMouse   bool
	// Notify holds the notification flags; nil means the config file's notify: section alone.
	Notify *notifyFlags
	// env is what the dashboard runs in (flagSet.env).
	env env
	// JournalPath, when set, is where actions are journaled instead of $XDG_STATE_HOME (the demo keeps its
	// journal in its workspace, so trying it leaves nothing in the person's real journal).
	JournalPath string

	// Program I/O; nil means the terminal. Tests and benchmarks pass their own, with a size, since a pipe
	// has none to report.
	Input         io.Reader
	Output        io.Writer
	Width, Height int
}

func defineDashboard(fs *flagSet) runFunc {
	var common commonFlags
	common.register(fs)
	readOnly := fs.Bool("read-only", false, "remove every key that changes run state")
	noMouse := fs.Bool("no-mouse", false, "leave the mouse to the terminal: no wheel scrolling or clicks, text selection without shift")
	poll := fs.Duration("poll", 0, "poll at this interval instead of using inotify (e.g. 2s, for network filesystems)")
	debug := fs.String("debug", "", "append messages and frame timings to `FILE`")
	var nf notifyFlags
	nf.register(fs.FlagSet)
	return func(paths []string, stdout, stderr io.Writer) int {
		if err := watch.CheckPoll(*poll); err != nil {
			return usageError(stderr, defaultCommand, "--%v", err)
		}
		return openDashboard(paths, dashboardOptions{
			Common: common, ReadOnly: *readOnly, Poll: *poll, DebugPath: *debug, Notify: &nf, NoMouse: *noMouse, env: fs.env,
		}, stdout, stderr)
	}
}

const noTerminalMessage = "runwatch needs a terminal for the dashboard; use `runwatch status` or `runwatch events` in scripts"

// isTerminal says whether the dashboard can run: it draws on stdout and reads keys from stdin, or from
// /dev/tty when stdin is a pipe (as Bubble Tea does).
func isTerminal(stdout io.Writer) bool {
	f, ok := stdout.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return false
	}
	if term.IsTerminal(os.Stdin.Fd()) {
		return true
	}
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return false
	}
	tty.Close()
	return true
}

// openDashboard runs the dashboard over paths until the user quits. It returns the exit code.
func openDashboard(paths []string, opts dashboardOptions, stdout, stderr io.Writer) int {
	opts.Common.getenv = opts.env.getenv // the config is the one of the dashboard's environment
	defer gcpolicy.Dashboard.Apply(opts.env.getenv)()
	d, code := setUpDashboard(paths, opts, stdout, stderr)
	if d == nil {
		return code
	}
	defer d.close()
	roots := d.roots
	// The list is on screen before every run is read; runs join it as they load (issue 16).
	src, err := roots.Watch(true)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch: %v\n", err)
		return 1
	}
	defer src.Close()

	var p *tea.Program
	notifier, err := newDashboardNotifier(opts.env.getenv, d.notify, func(msg tea.Msg) { p.Send(msg) })
	if err != nil {
		fmt.Fprintf(stderr, "runwatch: %v\n", err)
		return 2
	}
	p = tea.NewProgram(d.model(roots, notifier, func(msg tea.Msg) { p.Send(msg) }), programOptions(opts)...)
	if src.Local != nil {
		notifier.start(src.Snapshot())
		go ui.Relay(p, src.Local, notifier.observe)
	} else {
		// With only remote roots there is nothing to watch here.
		notifier.start(nil)
		go p.Send(app.SnapshotMsg{Health: app.Health{Mode: "ssh"}, At: time.Now()})
	}
	defer notifier.stop()
	if src.Remote != nil {
		go ui.RelayRemote(p, src.Remote, notifier.observe)
	}
	err = runProgram(p)
	// A write confirmed just before the end finishes before anything is closed or removed (the demo's workspace).
	d.actor.Close()
	if err != nil {
		fmt.Fprintf(stderr, "runwatch: %v\n", err)
		return 1
	}
	return 0
}

// dashboard is what the dashboard is set up with before it opens any run: the config, its keys and
// notification settings, where the debug log goes.
type dashboard struct {
	opts     dashboardOptions
	cfg      config.Config
	roots    *fleet.Roots
	readOnly bool
	keys     keys.KeyMap
	notify   notify.Settings
	debug    io.Writer
	close    func()
	// actor applies the local runs' actions; the dashboard's end waits for those under way.
	actor ui.ClosingActor
}

// setUpDashboard loads and checks what the dashboard needs, its roots among them, before it reads any run; nil
// with the exit code
// when it cannot start.
func setUpDashboard(paths []string, opts dashboardOptions, stdout, stderr io.Writer) (*dashboard, int) {
	cfg, err := opts.Common.resolve(config.Overrides{Poll: opts.Poll, ReadOnly: opts.ReadOnly})
	if err != nil {
		return nil, configError(stderr, defaultCommand, err)
	}
	d := &dashboard{opts: opts, cfg: cfg, readOnly: cfg.ReadOnly, close: func() {}}
	if d.keys, err = keys.NewKeyMapAt(cfg.Keys, cfg.KeyLines, d.readOnly); err != nil {
		where := "config"
		if cfg.Path != "" {
			where = "config " + cfg.Path
		}
		fmt.Fprintf(stderr, "runwatch: %s: %v\n", where, err)
		return nil, 2
	}
	if d.notify, err = opts.Notify.settings(cfg); err != nil {
		fmt.Fprintf(stderr, "runwatch: %v\n", err)
		return nil, 2
	}
	// Before the terminal is asked for: a root that cannot be opened is said the same way as by status.
	var code int
	if d.roots, code = openRoots(opts.env.getenv, defaultCommand, paths, cfg, opts.Common.given(opts.Poll), stderr); d.roots == nil {
		return nil, code
	}
	if opts.Input == nil && opts.Output == nil && !opts.env.hasTerminal(stdout) {
		fmt.Fprintln(stderr, noTerminalMessage)
		return nil, exitUsage
	}
	if opts.DebugPath != "" {
		f, err := os.OpenFile(opts.DebugPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "runwatch: --debug: %v\n", err)
			return nil, 2
		}
		d.debug, d.close = f, func() { f.Close() }
	}
	return d, 0
}

// model is the dashboard's root model over roots; send delivers a message to the running program.
func (d *dashboard) model(roots *fleet.Roots, notifier *dashboardNotifier, send func(tea.Msg)) tea.Model {
	cfg, getenv := d.cfg, d.opts.env.getenv
	// A lock here that names one of the remote machines is judged there: the watcher from answers at most a
	// liveness tick old, an action's plan from an answer asked for the plan.
	actionEnv := roots.Env
	// Launches in tmux are recorded beside the journal, so goto finds a launched run's pane.
	launches := launch.DefaultLaunches(getenv)
	if d.opts.JournalPath != "" {
		launches = launch.LaunchesFile(d.opts.JournalPath)
	}
	ssh := sshFor(getenv, cfg)
	d.actor = ui.NewActor(action.Options{ReadOnly: d.readOnly, JournalPath: journalIn(getenv, d.opts.JournalPath)}, actionEnv)
	return ui.New(app.Options{
		Theme: cfg.Theme, Keys: d.keys, ReadOnly: d.readOnly, Scanned: shownPaths(roots.Scanned), ScannedHosts: hostsOf(roots.Scanned), NoMouse: d.opts.NoMouse,
		Actor:   fleetActor{local: d.actor, ssh: ssh, env: actionEnv, roots: roots.Remote},
		OpenLog: ui.OpenIndexedLog, RemoteLog: remoteLogFetcher(ssh), RemoteBrief: remoteBriefFetcher(ssh), Debug: d.debug, InTmux: getenv("TMUX") != "", Getenv: getenv,
		Env: func() model.Env { return envFor(cfg) }, BriefCache: briefCache(getenv, d.readOnly), ResumeCommand: cfg.ResumeCommand, Notifier: notifier,
		Launches: launches, FindAgent: dashboardAgents(getenv, cfg, launches),
		Send: send,
	})
}

// programOptions are the Bubble Tea program's I/O: the terminal, or what a test or benchmark gives.
func programOptions(opts dashboardOptions) []tea.ProgramOption {
	var popts []tea.ProgramOption
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	} else {
		// lipgloss detected the colours of this stdout in this environment when the program started; a second
		// detection by the Program would run `tmux info` again inside tmux, before the first frame.
		popts = append(popts, tea.WithColorProfile(lipgloss.Writer.Profile))
	}
	if opts.Width > 0 && opts.Height > 0 {
		popts = append(popts, tea.WithWindowSize(opts.Width, opts.Height))
	}
	return popts
}

// runProgram runs p until it ends. A terminal that closes (tmux kill-session, a closed window) sends SIGHUP,
// which Bubble Tea leaves to Go's default, an exit that skips every cleanup: the demo left its workspace
// behind. It ends the program as q does, so the callers' cleanups run. SIGHUP stays caught afterwards: a
// closing terminal sends it more than once (the kernel, then the shell passing it on to its job), and one
// arriving during the cleanups would end them half done.
func runProgram(p *tea.Program) error {
	hup, ended := make(chan os.Signal, 1), make(chan struct{})
	signal.Notify(hup, syscall.SIGHUP)
	defer close(ended)
	go func() {
		select {
		case <-hup:
			p.Kill()
		case <-ended:
		}
	}()
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return err
	}
	return nil
}

// remoteLogFetcher fetches a remote run's log history from its host, for the timeline.
func remoteLogFetcher(s remote.SSH) app.RemoteLogFunc {
	return func(ctx context.Context, run model.Run) ([]model.LogEntry, error) {
		if run.Remote == nil || run.Log == nil {
			return nil, errors.New("the run has no log")
		}
		root, _, err := remote.Parse(run.Remote.Root)
		if err != nil {
			return nil, err
		}
		t, err := s.FetchLogTail(ctx, root, run.Log.Path, remote.MaxTailEntries)
		return t.Entries, err
	}
}

// shownPaths are the scanned paths as the empty dashboard names them: local ones absolute ("." said
// nothing), remote roots as given.
// hostsOf is the host of each root ("" for a local one), as its host's health names it.
func hostsOf(roots []string) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		if _, rs, err := remote.Split([]string{r}); err == nil && len(rs) == 1 {
			out[i] = rs[0].Host
		}
	}
	return out
}

func shownPaths(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil && !strings.Contains(p, ":") {
			p = abs
		}
		out = append(out, p)
	}
	return out
}
