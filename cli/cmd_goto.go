package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"runwatch/config"
	"runwatch/model"
	"runwatch/remote"
	"runwatch/shellword"
	"runwatch/state"
	"runwatch/state/agentpane"
	"runwatch/state/launch"
	"runwatch/ui/app"
	"runwatch/ui/text"
)

func init() {
	register(command{
		name:    "goto",
		group:   groupRead,
		summary: "go to the tmux pane where a run's agent runs",
		args:    "RUN",
		about: "The agent is the run's own: the live holder of its lock (pid and start time as the lock was taken), a " +
			"running parallel worker, or the window the dashboard launched with X. It is followed up its parent " +
			"processes to a pane of your tmux servers (the default one and $TMUX's). Inside tmux, goto switches " +
			"this client to that pane (tmux's last-window and last-pane keys go back); outside tmux it attaches. " +
			"A remote RUN (ssh://HOST/PATH) is found by the host's runwatch and attached over ssh. " +
			"--print prints SESSION:WINDOW.PANE %PANE_ID; with no agent found, goto exits 3 and says why.",
		examples: []example{
			{"switch to the pane of the run whose id starts with irm-backfill", "runwatch goto irm-backfill"},
			{"print where it is", "runwatch goto --print irm-backfill"},
		},
		completeArgs: []string{argRuns},
		define:       defineGoto,
	})
	register(command{
		name:    agentpane.Command,
		summary: "answer another runwatch: the tmux pane of the agent of the run at PATH, as JSON",
		args:    "PATH",
		about:   "Another runwatch runs this over ssh to find the agent of a run on this machine. It changes nothing.",
		hidden:  true,
		rawArgs: true,
		define: func(fs *flagSet) runFunc {
			return func(args []string, stdout, stderr io.Writer) int {
				return runAgentPane(fs.env.getenv, args, stdout, stderr)
			}
		},
	})
	register(command{
		name:    remote.AttachCommand,
		summary: "answer another runwatch: attach this terminal to tmux pane PANE of the server at SOCKET",
		args:    "SOCKET PANE",
		about:   "Another runwatch runs this over ssh -t to take a person to an agent's pane on this machine.",
		hidden:  true,
		rawArgs: true,
		define:  func(*flagSet) runFunc { return runAttach },
	})
}

// runAttach becomes tmux attaching to the pane: the words came encoded, and only tmux's %N is a pane.
func runAttach(args []string, _, stderr io.Writer) int {
	if len(args) != 2 || !agentpane.ValidPaneID(args[1]) {
		return usageError(stderr, remote.AttachCommand, "takes SOCKET and a pane id %%N")
	}
	return execAttach(agentpane.Pane{Socket: args[0], PaneID: args[1]}.AttachArgv(), stderr)
}

// exitNoAgent: goto found no pane of the run's agent (stderr says why).
const exitNoAgent = 3

func defineGoto(fs *flagSet) runFunc {
	printOnly := fs.Bool("print", false, "print SESSION:WINDOW.PANE %PANE_ID instead of going there")
	asJSON := fs.Bool("json", false, `print {"host","pid","session","window","pane","pane_id"} instead of going there`)
	var common commonFlags
	common.register(fs)
	common.registerRunRoots(fs.FlagSet)
	return func(args []string, stdout, stderr io.Writer) int {
		return runGoto(args, *printOnly, *asJSON, common, stdout, stderr)
	}
}

func runGoto(rest []string, printOnly, asJSON bool, common commonFlags, stdout, stderr io.Writer) int {
	if len(rest) != 1 {
		return usageError(stderr, "goto", "takes one RUN: a run directory, a state file, or the start of a run id")
	}
	cfg, err := common.resolve(config.Overrides{})
	if err != nil {
		return configError(stderr, "goto", err)
	}
	getenv := common.getenv
	tmux := agentpane.TmuxOf(getenv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var pane agentpane.Pane
	var root remote.Root
	target := rest[0]
	if r, isRemote, err := remote.Parse(target); err != nil {
		return usageError(stderr, "goto", "%v", err)
	} else if isRemote {
		root = r
		pane, err = remoteAgent(ctx, sshFor(getenv, cfg), r, r.Path)
		if err != nil {
			return noAgent(r.Label(), err, stderr)
		}
	} else {
		if code := checkRoots(getenv, "goto", cfg, stderr); code != exitOK {
			return code // RUN is looked for under them
		}
		loc, err := resolveRun(getenv, target, cfg)
		if err != nil {
			fmt.Fprintf(stderr, "runwatch goto: %v\n", text.Sanitize(err.Error()))
			return exitNoRun
		}
		run := state.Load(loc, envFor(cfg))
		if pane, err = localFinder(getenv, cfg).Find(&run); err != nil {
			return noAgent(run.ID, err, stderr)
		}
	}
	switch {
	case asJSON:
		host := pane.Host
		if host == "" {
			host = envFor(cfg).Host
		}
		// The pane's own fields only: socket and via are left out, empty.
		p := pane
		p.Host, p.Socket, p.Via = host, "", ""
		_ = json.NewEncoder(terminalSafeJSONWriter{stdout}).Encode(p)
		return exitOK
	case printOnly:
		fmt.Fprintf(stdout, "%s %s\n", text.Sanitize(pane.Target()), pane.PaneID)
		return exitOK
	}
	if pane.Host != "" {
		argv := sshFor(getenv, cfg).AttachArgv(root, pane.Socket, pane.PaneID)
		if tmux.CurrentSocket() != "" {
			if err := tmux.OpenWindow(ctx, "agent "+pane.Host, argv); err != nil {
				fmt.Fprintf(stderr, "runwatch goto: %v\n", text.Sanitize(err.Error()))
				return exitProblems
			}
			return exitOK
		}
		return execAttach(argv, stderr)
	}
	err = tmux.SwitchTo(ctx, pane)
	switch {
	case err == nil:
		return exitOK
	case tmux.CurrentSocket() == "":
		return execAttach(pane.AttachArgv(), stderr)
	case errors.Is(err, agentpane.ErrOtherServer):
		fmt.Fprintf(stderr, "runwatch goto: %s is on another tmux server than this one; from outside tmux: %s\n",
			text.Sanitize(pane.Where()), attachLine(pane.AttachArgv()))
		return exitProblems
	}
	fmt.Fprintf(stderr, "runwatch goto: %v\n", text.Sanitize(err.Error()))
	return exitProblems
}

func noAgent(runName string, err error, stderr io.Writer) int {
	fmt.Fprintf(stderr, "runwatch goto: %s: no agent pane: %s\n", text.Sanitize(runName), text.Sanitize(err.Error()))
	if agentpane.IsNotFound(err) {
		return exitNoAgent
	}
	return exitProblems
}

// execAttach becomes the attaching command (tmux attach, or ssh to it), so the terminal is the pane's.
func execAttach(argv []string, stderr io.Writer) int {
	path, err := exec.LookPath(argv[0])
	if err == nil {
		err = syscall.Exec(path, argv, os.Environ())
	}
	fmt.Fprintf(stderr, "runwatch goto: cannot run %s: %v\n", attachLine(argv), err)
	return exitProblems
}

// localFinder finds agents of this machine's runs, with the launches the dashboard recorded, in the
// environment getenv reads (tmux's, the journal's folder).
func localFinder(getenv func(string) string, cfg config.Config) *agentpane.Finder {
	return agentpane.NewFinder(envFor(cfg), agentpane.TmuxOf(getenv), launch.DefaultLaunches(getenv))
}

// dashboardAgents is the dashboard's FindAgent: a run of this machine here (with the launches at launches),
// a remote run by its host's runwatch; with the command that attaches a terminal here to the pane. getenv is
// the environment tmux and ssh are found in.
func dashboardAgents(getenv func(string) string, cfg config.Config, launches string) app.FindAgentFunc {
	return func(ctx context.Context, run model.Run) (agentpane.Pane, []string, error) {
		if run.Remote == nil {
			p, err := agentpane.NewFinder(envFor(cfg), agentpane.TmuxOf(getenv), launches).Find(&run)
			return p, p.AttachArgv(), err
		}
		root, _, err := remote.Parse(run.Remote.Root)
		if err != nil {
			return agentpane.Pane{}, nil, err
		}
		s := sshFor(getenv, cfg)
		p, err := remoteAgent(ctx, s, root, run.StatePath)
		return p, s.AttachArgv(root, p.Socket, p.PaneID), err
	}
}

// remoteAgent asks root's host to find the pane of the run at path there.
func remoteAgent(ctx context.Context, s remote.SSH, root remote.Root, path string) (agentpane.Pane, error) {
	if strings.HasPrefix(path, "-") {
		path = "./" + path
	}
	out, errb, code, err := s.Run(ctx, root, agentpane.Command, path)
	switch {
	case err != nil:
		return agentpane.Pane{}, fmt.Errorf("%s: %v", root.Label(), err)
	case code == 2:
		return agentpane.Pane{}, fmt.Errorf("%s: its runwatch is older than this one and cannot find an agent's pane: upgrade it (%s)",
			root.Label(), remote.InstallHint(root))
	case code != 0:
		return agentpane.Pane{}, errors.New(remote.Explain(root, code, errb))
	}
	var a agentpane.Answer
	if err := json.Unmarshal(out, &a); err != nil {
		return agentpane.Pane{}, fmt.Errorf("%s: the answer about the agent's pane is not JSON (%v)", root.Label(), err)
	}
	if a.Pane == nil {
		return agentpane.Pane{}, &agentpane.NotFound{Reason: "on " + root.Label() + ": " + a.NotFound}
	}
	if !agentpane.ValidPaneID(a.Pane.PaneID) {
		// It becomes a word of the ssh command and of tmux's: only tmux's own %N is taken.
		return agentpane.Pane{}, fmt.Errorf("%s answered a pane id that is none (%q)", root.Label(), a.Pane.PaneID)
	}
	p := *a.Pane
	p.Host = root.Label()
	return p, nil
}

// runAgentPane answers another runwatch with the pane of the run at args[0], in the environment getenv reads.
func runAgentPane(getenv func(string) string, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		return usageError(stderr, agentpane.Command, "takes PATH")
	}
	cfg, err := config.Load("", getenv)
	if err != nil {
		return usageError(stderr, agentpane.Command, "%v", err)
	}
	var a agentpane.Answer
	loc, err := resolveRun(getenv, args[0], cfg)
	if err != nil {
		a.NotFound = err.Error()
	} else {
		run := state.Load(loc, envFor(cfg))
		if p, err := localFinder(getenv, cfg).Find(&run); err != nil {
			a.NotFound = err.Error()
		} else {
			a.Pane = &p
		}
	}
	b, err := json.Marshal(a)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch %s: %v\n", agentpane.Command, err)
		return exitRefused
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return exitOK
}

// attachLine is the attaching command as a person types it, safe for the terminal (a host named its parts).
func attachLine(argv []string) string { return text.Sanitize(shellword.Line(argv)) }
