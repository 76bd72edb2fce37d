package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"runwatch/shellword"
	"runwatch/sim"
	"runwatch/state/journal"
	"runwatch/userdir"
)

func init() {
	register(command{
		name:    "demo",
		summary: "open the dashboard on a live demo workspace of simulated runs (nothing to prepare)",
		about: "Creates a workspace of simulated runs of both conventions that change live — a paused run to " +
			"tick and step, a dead process's lock to clear, a run awaiting input — and opens the dashboard on " +
			"it. The workspace is removed when you quit, unless --keep or --dir keeps it; then its status is printed.",
		examples: []example{
			{"try runwatch with nothing to prepare", "runwatch demo"},
			{"a faster simulation, kept afterwards for the other commands", "runwatch demo --speed 4 --dir /tmp/rw-demo"},
		},
		define: defineDemo,
	})
}

func defineDemo(fs *flagSet) runFunc {
	dir := fs.String("dir", "", "create the workspace in `DIR` (must be empty or absent; kept afterwards)")
	speed := fs.Float64("speed", 1, "simulation speed factor: 2 runs twice as fast")
	seed := fs.Uint64("seed", sim.DefaultSeed, "seed for the simulation's choices (same seed, same runs)")
	keep := fs.Bool("keep", false, "keep the temporary workspace when the demo ends")
	return func(args []string, stdout, stderr io.Writer) int {
		return runDemo(fs.env, args, *dir, *speed, *seed, *keep, stdout, stderr)
	}
}

func runDemo(e env, args []string, dirFlag string, speedFlag float64, seed uint64, keepFlag bool, stdout, stderr io.Writer) int {
	dir, speed, keep := &dirFlag, &speedFlag, &keepFlag
	if len(args) > 0 {
		return usageError(stderr, "demo", "unexpected argument %q", args[0])
	}
	if !(*speed > 0) || *speed > 10000 {
		return usageError(stderr, "demo", "--speed must be a number above 0 and at most 10000, got %v", *speed)
	}
	// Before anything is created: a demo without a terminal would only make and remove a workspace.
	if !e.hasTerminal(stdout) {
		fmt.Fprintln(stderr, noTerminalMessage)
		return exitUsage
	}

	root, temporary, err := demoDir(userdir.Temp(e.getenv), *dir)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch demo: %v\n", err)
		return exitProblems
	}
	code := demoIn(e, root, *speed, seed, stdout, stderr)
	switch {
	case temporary && !*keep:
		if err := os.RemoveAll(root); err != nil {
			fmt.Fprintf(stderr, "runwatch demo: removing workspace %s: %v\n", root, err)
			return exitProblems
		}
	default:
		// What the demo left behind, as `runwatch status` shows it, so the kept folder is easy to come back to.
		// The command is the one printed, run as such: with the demo's grace, so it judges the runs as the
		// dashboard did (without it, the orphaned feature read "running" here and "stalled" there).
		argv := []string{"runwatch", "status", "--orphan-after", demoOrphanAfter.String(), root}
		fmt.Fprintf(stdout, "runwatch demo: workspace kept at %s\nits actions are journaled in it: act on it, or undo, with\n  XDG_STATE_HOME=%s runwatch undo RUN --dry-run\n"+
			"as the demo judged it (orphaned after %s):\n  %s\n\n", root, shellword.Quote(demoStateHome(root)), demoOrphanAfter, shellword.Line(argv))
		if c := dispatch(argv[1:], stdout, stderr, e); c != exitOK && c != exitProblems && code == exitOK {
			code = c
		}
	}
	return code
}

// demoDir returns the workspace folder: DIR when given (created if absent, refused if it holds anything, so a
// demo never mixes its runs into real ones), otherwise a new folder under the temporary folder tmp.
func demoDir(tmp, dir string) (root string, temporary bool, err error) {
	if dir == "" {
		root, err = os.MkdirTemp(tmp, "runwatch-demo-")
		return root, true, err
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return dir, false, os.MkdirAll(dir, 0o755)
	case err != nil:
		return "", false, err
	case len(entries) > 0:
		return "", false, fmt.Errorf("--dir %s is not empty; give an empty or new folder", dir)
	}
	return dir, false, nil
}

func demoIn(e env, root string, speed float64, seed uint64, stdout, stderr io.Writer) int {
	ws, err := sim.NewWorkspaceWith(root, sim.Options{Seed: seed})
	if err != nil {
		fmt.Fprintf(stderr, "runwatch demo: %v\n", err)
		return exitProblems
	}
	simulator := sim.NewSimulator(ws, speed)
	if err := simulator.Start(context.Background()); err != nil {
		fmt.Fprintf(stderr, "runwatch demo: %v\n", err)
		return exitProblems
	}
	code := demoView(e, ws, stdout, stderr)
	if err := simulator.Stop(); err != nil {
		fmt.Fprintf(stderr, "runwatch demo: simulator: %v\n", err)
		if code == exitOK {
			code = exitProblems
		}
	}
	return code
}

// demoStateHome is the XDG_STATE_HOME of a demo workspace: its journal is there, not in the person's, and
// the CLI reaches it with that variable set (the exit message says how).
func demoStateHome(root string) string { return filepath.Join(root, "state") }

// demoOrphanAfter is the demo's grace for a phase marked running that nothing runs: short, so its orphaned
// feature (last written sim.OrphanLead before the demo opens) turns orphaned about a minute into the tour.
const demoOrphanAfter = 90 * time.Second

// demoView opens the dashboard on the workspace and returns when the person quits it.
func demoView(e env, ws *sim.Workspace, stdout, stderr io.Writer) int {
	return openDashboard(ws.Paths(), dashboardOptions{JournalPath: journal.PathIn(demoStateHome(ws.Dir)), env: e,
		Common: commonFlags{orphanAfter: demoOrphanAfter}}, stdout, stderr)
}
