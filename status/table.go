package status

import (
	"fmt"
	"io"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"

	"runwatch/model"
	"runwatch/ui/text"
)

// PrintTable writes one line per run, fitted to width when it is above 0 (cells are cut with …), in
// full otherwise. Every field from a run file is sanitised: a run's title or stage name must not be able to
// drive the terminal. The table is plain text, with no styles, so it greps and pipes cleanly.
func PrintTable(w io.Writer, runs []model.Run, now time.Time, wide bool, width int) {
	rows := make([][]string, 0, len(runs))
	for _, r := range runs {
		rows = append(rows, statusRow(r, now, wide))
	}
	renderStatusTable(w, rows, wide, width)
}

// renderStatusTable writes the table of rows (statusRow), fitted to width as PrintTable says.
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
