package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"
	"github.com/charmbracelet/x/term"

	"runwatch/model"
	"runwatch/remote"
	"runwatch/state"
	"runwatch/state/agentpane"
	"runwatch/suggest"
	"runwatch/termsafe"
	"runwatch/ui/text"
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

// Status output formats and sort orders, as --output and --sort take them.
var (
	statusFormats = []string{"table", "wide", "json", "jsonl"}
	statusSorts   = []string{"attention", "name", "id", "updated", "path"}
)

type statusOptions struct {
	output, sort string
	json         bool
	common       commonFlags
}

func defineStatus(fs *flagSet) runFunc {
	o := &statusOptions{}
	fs.StringVar(&o.output, "output", "table", "the `FORMAT` to print: "+orList(statusFormats))
	fs.alias("o", "output")
	fs.BoolVar(&o.json, "json", false, "same as --output json (kept for scripts)")
	fs.StringVar(&o.sort, "sort", "attention", "the `ORDER` of the runs: attention (the dashboard's: those that need you first), "+
		"name or id (the dashboard's name order: by run id), updated (most recent first) or path (by state file)")
	o.common.register(fs.FlagSet)
	return func(paths []string, stdout, stderr io.Writer) int { return runStatus(o, paths, stdout, stderr) }
}

func runStatus(o *statusOptions, paths []string, stdout, stderr io.Writer) int {
	defer statusGC.apply()()
	if o.json {
		if o.output != "table" && o.output != "json" {
			return usageError(stderr, "status", "--json is --output json; it cannot go with --output %s", o.output)
		}
		o.output = "json"
	}
	if err := oneOf("--output", o.output, statusFormats); err != nil {
		return usageError(stderr, "status", "%v", err)
	}
	if err := oneOf("--sort", o.sort, statusSorts); err != nil {
		return usageError(stderr, "status", "%v", err)
	}
	cfg, err := o.common.resolve()
	if err != nil {
		return configError(stderr, "status", err)
	}
	local, roots, err := splitRoots(paths, cfg)
	if err != nil {
		return usageError(stderr, "status", "%v", err)
	}
	env := envFor(cfg)
	elsewhere := elsewhereFor(cfg, roots)
	if elsewhere != nil {
		env.Elsewhere = elsewhere
	}
	format := o.output
	if format == "" {
		format = "table"
	}
	// The document streams, one run at a time, each read as soon as it is found; each run is judged by the
	// clock and the history once every run is read (statusOut), so the order they are read in does not
	// matter (docs/FORMATS.md C.3).
	if err := state.CheckRoots(local); err != nil {
		// Said before any run is read: over 100,000 runs a mistyped path would otherwise wait for all of them.
		return usageError(stderr, "status", "%v", err)
	}
	out := newStatusOut(format, env.Now, env.Liveness)
	out.spill.readOnly, out.spill.warn = cfg.ReadOnly, stderr
	defer out.close()
	add := out.add
	if format == "json" || format == "jsonl" {
		// Where each live holder's agent runs: the panes are listed once, on the first run that has one.
		agents := agentpane.NewFinder(env, "")
		add = func(r model.Run) {
			if r.LiveHolder() {
				if p, err := agents.Find(&r); err == nil {
					r.AgentPane = &p
				}
			}
			out.add(r)
		}
	}
	if len(local) > 0 || len(roots) == 0 {
		err = state.LoadEachFound(local, cfg.MaxDepth, env, add)
	}
	unreadable, err := state.SplitUnreadable(err)
	if err != nil {
		return usageError(stderr, "status", "%v", err)
	}
	var hosts []model.HostHealth
	if len(roots) > 0 {
		var remoteRuns []model.Run
		remoteRuns, hosts = remote.Snapshot(context.Background(), sshFor(cfg), roots, o.common.remoteArgs(), elsewhere, cfg.StaleAfter.D())
		for _, r := range remoteRuns {
			if r.AgentPane != nil && r.Remote != nil {
				r.AgentPane.Host = r.Remote.Host // found by that host's runwatch, in a pane there
			}
			out.addJudged(r)
		}
	}
	head := snapshot([]model.Run{}, env)
	head.Hosts = hosts
	width := 0
	if format == "table" {
		// Only the table fits the terminal: -o wide exists to add columns, so, as kubectl's, it never cuts.
		width, _ = terminalWidth(stdout)
	}
	failed, err := out.write(stdout, o.sort, head, width)
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
			fmt.Fprintf(stderr, "runwatch status: %s\n", text.Sanitize(h.Error))
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

// sortRuns orders runs for --sort (runOrder.less).
func sortRuns(runs []model.Run, by string) {
	sort.SliceStable(runs, func(i, j int) bool { return orderOf(&runs[i]).less(by, orderOf(&runs[j])) })
}

// terminalWidth is the width of the terminal w writes to; ok is false when w is not a terminal (a pipe or a
// file), where the table is never cut. Tests replace it.
var terminalWidth = func(w io.Writer) (int, bool) {
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

// snapshot builds the status --json document. Runs are ordered by directory so output is stable for scripts.
func snapshot(runs []model.Run, env model.Env) model.Snapshot {
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Key() < runs[j].Key() })
	for i := range runs {
		fillEmptyLists(&runs[i])
	}
	host := env.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	return model.Snapshot{Schema: model.SchemaVersion, GeneratedAt: env.Now.UTC(), Host: host, Protocol: remote.ProtocolVersion, Runs: runs}
}

// writeSnapshotJSON writes what json.Encoder with a two-space indent writes for snap, through
// termsafe.JSON, encoding the runs on every core: with a thousand runs, encoding and indenting the
// document costs as much as reading the runs did.
func writeSnapshotJSON(w io.Writer, snap model.Snapshot) error {
	if len(snap.Runs) == 0 {
		b, err := json.MarshalIndent(snap, "", "  ")
		if err == nil {
			_, err = w.Write(termsafe.JSON(append(b, '\n')))
		}
		return err
	}
	runs := snap.Runs
	snap.Runs = []model.Run{}
	head, err := documentHead(snap)
	if err != nil {
		return err
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
				// json.MarshalIndent would compact and check Run.MarshalJSON's output before indenting it:
				// a copy of every byte that json.Marshal has already written compact and escaped.
				b, err := runs[i].MarshalJSON()
				if err == nil {
					b = appendIndentedJSON(make([]byte, 0, 2*len(b)), b, "    ", "  ") // indented runs come to about 1.65x
				}
				parts[i], errs[i] = termsafe.JSON(b), err
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(termsafe.JSON(head))
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

// printStatusTable writes one line per run, fitted to width when it is above 0 (cells are cut with …), in
// full otherwise. Every field from a run file is sanitised: a run's title or stage name must not be able to
// drive the terminal. The table is plain text, with no styles, so it greps and pipes cleanly.
func printStatusTable(w io.Writer, runs []model.Run, now time.Time, wide bool, width int) {
	rows := make([][]string, 0, len(runs))
	for _, r := range runs {
		rows = append(rows, statusRow(r, now, wide))
	}
	renderStatusTable(w, rows, wide, width)
}

// renderStatusTable writes the table of rows (statusRow), fitted to width as printStatusTable says.
func renderStatusTable(w io.Writer, rows [][]string, wide bool, width int) {
	renderStatusTableIn(w, rows, wide, width, statusTableSlice)
}

// statusTableSlice is how many rows are drawn at once: what the table holds in memory is one slice of
// rows and its drawing, whatever the number of runs (lipgloss's table drew 100,000 at once in 426 MiB).
const statusTableSlice = 256

// renderStatusTableIn is renderStatusTable drawing per rows at a time.
func renderStatusTableIn(w io.Writer, rows [][]string, wide bool, width, per int) {
	if len(rows) == 0 {
		fmt.Fprintln(w, noRunsLine)
		return
	}
	natural := newColumnWidths(wide)
	for _, row := range rows {
		natural.widen(row)
	}
	t := newStatusTable(wide, width, natural)
	for i := 0; i < len(rows); i += per {
		t.write(w, rows[i:min(i+per, len(rows))])
	}
}

const noRunsLine = "no runs found (looked for .jonggrang/ projects and state.env run folders)"

func statusHeaders(wide bool) []string {
	if wide {
		return []string{"RUN", "KIND", "STATUS", "STAGE", "PROGRESS", "LOCK", "UPDATED", "REASON", "NEXT", "PROBLEMS", "DIR"}
	}
	return []string{"RUN", "STATUS", "STAGE", "PROGRESS", "UPDATED", "REASON"}
}

// columnWidths are the natural widths of the table's columns: the widest of the header and every cell.
type columnWidths []int

func newColumnWidths(wide bool) columnWidths {
	headers := statusHeaders(wide)
	c := make(columnWidths, len(headers))
	for col, h := range headers {
		c[col] = lipgloss.Width(h)
	}
	return c
}

func (c columnWidths) widen(row []string) {
	for col := range c {
		c[col] = max(c[col], lipgloss.Width(row[col]))
	}
}

// statusTable draws the table a slice of rows at a time, every column's width fixed beforehand from the
// natural widths of all the rows, so each slice is laid out as the whole table would be.
type statusTable struct {
	headers []string // of the columns shown
	widths  []int    // of every column; 0: not shown
	cutID   int      // above 0: ids are cut in the middle to this width
	width   int
	started bool
}

const statusGap = 2

func newStatusTable(wide bool, width int, natural columnWidths) *statusTable {
	headers := statusHeaders(wide)
	t := &statusTable{widths: append([]int(nil), natural...), width: width}
	if width > 0 {
		t.widths = fitColumns(headers, natural, width, statusGap)
		if t.widths[0] < natural[0] {
			// The table would cut the id at its end, where one task's runs differ: cut its middle.
			t.cutID = t.widths[0]
		}
	}
	for col, cw := range t.widths {
		if cw > 0 {
			t.headers = append(t.headers, headers[col])
		}
	}
	return t
}

// write draws rows, the next slice of the table; it changes them (cut ids, columns left out).
func (t *statusTable) write(w io.Writer, rows [][]string) {
	var widths []int
	for _, cw := range t.widths {
		if cw > 0 {
			widths = append(widths, cw)
		}
	}
	for i, row := range rows {
		if t.cutID > 0 {
			row[0] = text.CutMiddle(row[0], t.cutID)
		}
		kept := make([]string, 0, len(t.headers))
		for col, cw := range t.widths {
			if cw > 0 {
				kept = append(kept, row[col])
			}
		}
		rows[i] = kept
	}
	last := len(widths) - 1
	tb := table.New().Rows(rows...).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		BorderHeader(false).BorderColumn(false).BorderRow(false).
		StyleFunc(func(_, col int) lipgloss.Style {
			st := lipgloss.NewStyle()
			pad := 0
			if col != last {
				st, pad = st.PaddingRight(statusGap), statusGap
			}
			// Every column has its width: the table only cuts cells to it, with "…", and a slice is laid
			// out as the whole table is.
			return st.Width(widths[col] + pad)
		})
	if !t.started {
		// The header line is the table's first line, not each slice's: only the first slice has it.
		tb = tb.Headers(t.headers...)
		t.started = true
	}
	if t.width > 0 {
		tb = tb.Width(t.width).Wrap(false)
	}
	for _, line := range strings.Split(tb.Render(), "\n") {
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

// fitColumns shares width out among the columns when their natural widths do not fit. The run id is what
// a reader types next, so it is the last thing cut: the long columns give way first, each down to a floor
// that keeps it readable, in the order of what matters least (folder, problems, command, reason, stage),
// then further, then whole columns are left out, and only then is the id cut (in the middle, by the caller,
// keeping the suffix that tells one task's runs apart). The short columns a reader scans (status, progress,
// time, kind, lock) keep their width until they go. lipgloss's own resizer does not serve: it shrinks every
// column toward its median, so the reason and the id were cut to a few letters first.
func fitColumns(headers []string, natural []int, width, gap int) []int {
	widths := append([]int(nil), natural...)
	total := gap * (len(widths) - 1)
	for _, w := range widths {
		total += w
	}
	if total <= width {
		return widths
	}
	index := map[string]int{}
	for i, h := range headers {
		index[h] = i
	}
	shrink := func(order []string, floor func(string) int) {
		for _, h := range order {
			i, ok := index[h]
			if !ok || total <= width || widths[i] == 0 {
				continue
			}
			cut := min(total-width, widths[i]-min(widths[i], floor(h)))
			widths[i] -= cut
			total -= cut
		}
	}
	shrink([]string{"DIR", "PROBLEMS", "NEXT", "REASON", "STAGE"}, func(h string) int {
		if h == "STAGE" {
			return 12
		}
		return 24
	})
	shrink([]string{"DIR", "PROBLEMS", "NEXT", "REASON", "STAGE", "UPDATED", "LOCK"}, func(h string) int {
		if h == "REASON" {
			return 12
		}
		return 4
	})
	// Narrower still: leave out whole columns, least needed first, keeping the run, its status and reason;
	// what a left-out column gives back goes to the reason.
	for _, h := range []string{"DIR", "PROBLEMS", "NEXT", "KIND", "LOCK", "UPDATED", "PROGRESS", "STAGE"} {
		if i, ok := index[h]; ok && total > width && widths[i] > 0 {
			total -= widths[i] + gap
			widths[i] = 0 // not shown
		}
	}
	// Below the width where whole ids fit beside their status and a reason: the reason down to a few
	// letters, then the id.
	shrink([]string{"REASON", "RUN"}, func(h string) int {
		if h == "RUN" {
			return 12
		}
		return 6
	})
	if i, ok := index["REASON"]; ok && total < width {
		widths[i] = min(natural[i], widths[i]+width-total)
	}
	return widths
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
		return fmt.Sprintf("✗ %d error(s): %s", errs, first)
	case warns > 0:
		return fmt.Sprintf("⚠ %d warning(s)", warns)
	}
	return "-"
}

// printStatus prints the table for paths, for callers such as the demo that want a one-shot view.
func printStatus(paths []string, stdout io.Writer) error {
	env := state.NewEnv(0)
	locs, err := state.Discover(paths, 0)
	if err != nil && len(locs) == 0 {
		return err
	}
	runs := state.LoadAll(locs, env)
	judgeTimes(runs, env.Now, env.Liveness)
	snap := snapshot(runs, env)
	sortRuns(snap.Runs, "attention")
	width, _ := terminalWidth(stdout)
	printStatusTable(stdout, snap.Runs, env.Now, false, width)
	return nil
}

// documentHead is the status document with no runs, cut before the runs array's closing bracket: both
// writers put the runs there, one level in, each encoded on its own.
func documentHead(snap model.Snapshot) ([]byte, error) {
	snap.Runs = []model.Run{}
	doc, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return nil, err
	}
	// The document ends `"runs": []` and `}`.
	doc, ok := bytes.CutSuffix(doc, []byte("[]\n}"))
	if !ok {
		return nil, fmt.Errorf("status --json: unexpected document shape %q", doc)
	}
	return doc, nil
}
