package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"runwatch/model"
	"runwatch/remote"
	"runwatch/state"
	"runwatch/ui"
)

func init() {
	register(command{
		name:    "status",
		summary: "print every run once: a table, or the stable JSON shape with --json",
		usage:   "runwatch status [--json] [--config FILE] [--stale-after DUR] [--max-depth N] [PATH...]",
		run:     runStatus,
	})
}

// Exit codes of status: every run read and none blocked, some run has a stop condition, usage error.
const (
	exitOK       = 0
	exitProblems = 1
	exitUsage    = 2
)

func runStatus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the stable JSON document (schema 1) instead of a table")
	var common commonFlags
	common.register(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	cfg, err := common.resolve()
	if err != nil {
		return usageError(stderr, "status", "%v", err)
	}
	env := envFor(cfg)
	local, roots, err := splitRoots(fs.Args(), cfg)
	if err != nil {
		return usageError(stderr, "status", "%v", err)
	}
	var locs []state.Location
	if len(local) > 0 || len(roots) == 0 {
		locs, err = state.Discover(local, cfg.MaxDepth)
	}
	unreadable, err := state.SplitUnreadable(err)
	if err != nil {
		return usageError(stderr, "status", "%v", err)
	}
	runs := state.LoadAll(locs, env)
	var hosts []model.HostHealth
	if len(roots) > 0 {
		var remoteRuns []model.Run
		remoteRuns, hosts = remote.Snapshot(context.Background(), sshFor(cfg), roots, common.remoteArgs())
		runs = append(runs, remoteRuns...)
	}
	snap := snapshot(runs, env)
	snap.Hosts = hosts
	if *asJSON {
		if err := writeSnapshotJSON(stdout, snap); err != nil {
			fmt.Fprintf(stderr, "runwatch status: %v\n", err)
			return exitProblems
		}
	} else {
		printStatusTable(stdout, snap.Runs, env.Now)
	}
	// A folder that could not be listed may hide runs: say which, and do not report "all read".
	for _, u := range unreadable {
		fmt.Fprintf(stderr, "runwatch status: %s\n", ui.Sanitize(u.Error()))
	}
	// A host that could not answer may hold runs that need someone: say so, and do not report "all read".
	hostFailed := false
	for _, h := range hosts {
		if h.Error != "" {
			fmt.Fprintf(stderr, "runwatch status: %s\n", ui.Sanitize(h.Error))
		}
		hostFailed = hostFailed || h.State != model.HostLive
	}
	if len(unreadable) > 0 || hostFailed {
		return exitProblems
	}
	for _, r := range snap.Runs {
		if r.HasErrors() && !r.Archived {
			return exitProblems
		}
	}
	return exitOK
}

// snapshot builds the status --json document. Runs are ordered by directory so output is stable for scripts.
func snapshot(runs []model.Run, env model.Env) model.Snapshot {
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Key() < runs[j].Key() })
	for i := range runs {
		// JSON consumers get [] rather than null for empty lists.
		if runs[i].Stages == nil {
			runs[i].Stages = []model.Stage{}
		}
		for j := range runs[i].Stages {
			if runs[i].Stages[j].Checklist == nil {
				runs[i].Stages[j].Checklist = []model.ChecklistItem{}
			}
		}
		if runs[i].Flags == nil {
			runs[i].Flags = []model.Flag{}
		}
		if runs[i].Locks == nil {
			runs[i].Locks = []model.Lock{}
		}
		for j := range runs[i].Locks {
			if runs[i].Locks[j].Reasons == nil {
				runs[i].Locks[j].Reasons = []string{}
			}
		}
		if runs[i].Problems == nil {
			runs[i].Problems = []model.Problem{}
		}
		if runs[i].Gates == nil {
			runs[i].Gates = []model.Gate{}
		}
	}
	host := env.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	return model.Snapshot{Schema: model.SchemaVersion, GeneratedAt: env.Now.UTC(), Host: host, Protocol: remote.ProtocolVersion, Runs: runs}
}

// writeSnapshotJSON writes what json.Encoder with a two-space indent writes for snap, through
// terminalSafeJSON, encoding the runs on every core: with a thousand runs, encoding and indenting the
// document costs as much as reading the runs did.
func writeSnapshotJSON(w io.Writer, snap model.Snapshot) error {
	if len(snap.Runs) == 0 {
		b, err := json.MarshalIndent(snap, "", "  ")
		if err == nil {
			_, err = w.Write(terminalSafeJSON(append(b, '\n')))
		}
		return err
	}
	runs := snap.Runs
	snap.Runs = []model.Run{}
	head, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return err
	}
	// The document ends `"runs": []` and `}`: the runs go between the brackets, one level in.
	head, ok := bytes.CutSuffix(head, []byte("[]\n}"))
	if !ok {
		return fmt.Errorf("status --json: unexpected document shape %q", head)
	}
	parts := make([][]byte, len(runs))
	errs := make([]error, len(runs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(runs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(runs) {
					return
				}
				b, err := json.MarshalIndent(runs[i], "    ", "  ")
				parts[i], errs[i] = terminalSafeJSON(b), err
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(terminalSafeJSON(head))
	bw.WriteString("[\n")
	for i, p := range parts {
		bw.WriteString("    ")
		bw.Write(p)
		if i < len(parts)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("  ]\n}\n")
	return bw.Flush()
}

// printStatusTable writes one line per run. Every field from a run file is sanitised: a run's title or stage
// name must not be able to drive the terminal.
func printStatusTable(w io.Writer, runs []model.Run, now time.Time) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "no runs found (looked for .jonggrang/ projects and state.env run folders)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tKIND\tSTATUS\tSTAGE\tPROGRESS\tLOCK\tUPDATED\tPROBLEMS")
	for _, r := range runs {
		status := r.Status.Glyph() + " " + string(r.Status)
		if r.Archived {
			status += " (archived)"
		}
		stage := r.CurrentStage
		if s := r.Stage(r.CurrentStage); s != nil && s.Name != "" && s.Name != s.Key {
			stage += " " + s.Name
		}
		updated := "-"
		if !r.UpdatedAt.IsZero() {
			updated = model.HumanDuration(now.Sub(r.UpdatedAt)) + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n",
			clip(ui.Sanitize(r.ID), 48), r.Kind, status, clip(ui.Sanitize(stage), 28),
			r.Progress.Done, r.Progress.Total, lockSummary(r.Locks), updated, problemSummary(r.Problems))
	}
	tw.Flush()
}

func lockSummary(locks []model.Lock) string {
	if len(locks) == 0 {
		return "-"
	}
	count := map[model.Verdict]int{}
	for _, l := range locks {
		count[l.Verdict]++
	}
	var parts []string
	for _, v := range []model.Verdict{model.VerdictLive, model.VerdictUnknown, model.VerdictStale} {
		if n := count[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	return strings.Join(parts, ", ")
}

func problemSummary(problems []model.Problem) string {
	var errs, warns int
	first := ""
	for _, p := range problems {
		switch p.Severity {
		case model.SeverityError:
			errs++
			if first == "" || errs == 1 {
				first = p.Message
			}
		case model.SeverityWarning:
			warns++
		}
	}
	switch {
	case errs > 0:
		return fmt.Sprintf("✗ %d error(s): %s", errs, clip(ui.Sanitize(first), 70))
	case warns > 0:
		return fmt.Sprintf("⚠ %d warning(s)", warns)
	}
	return "-"
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// printStatus prints the table for paths, for callers such as the demo that want a one-shot view.
func printStatus(paths []string, stdout io.Writer) error {
	env := state.NewEnv(0)
	locs, err := state.Discover(paths, 0)
	if err != nil && len(locs) == 0 {
		return err
	}
	snap := snapshot(state.LoadAll(locs, env), env)
	printStatusTable(stdout, snap.Runs, env.Now)
	return nil
}
