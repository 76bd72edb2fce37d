package status

import (
	"fmt"
	"io"
	"strings"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"

	"runwatch/colfit"
	"runwatch/model"
	"runwatch/plural"
	"runwatch/ui/text"
)

// statusTableSlice is how many rows are drawn at once: what the table holds in memory is one slice of
// rows and its drawing, whatever the number of runs (lipgloss's table drew 100,000 at once in 426 MiB).
const statusTableSlice = 256

const noRunsLine = "no runs found (looked for .jonggrang/ projects and state.env run folders)"

// noRuns is noRunsLine naming where, when known.
func noRuns(where string) string {
	if where == "" {
		return noRunsLine
	}
	return "no runs found in " + where + " (looked for .jonggrang/ projects and state.env run folders)"
}

func statusHeaders(wide bool) []string {
	if wide {
		return []string{"RUN", "KIND", "STATUS", "STAGE", "PROGRESS", "LOCK", "UPDATED", "REASON", "NEXT", "PROBLEMS", "DIR"}
	}
	return []string{"RUN", "STATUS", "STAGE", "PROGRESS", "UPDATED", "REASON"}
}

// The narrow table's columns, and the cells after them that hold the short forms of STAGE (the stage's name
// alone where it has one, else its key) and STATUS (its word in short), the dashboard's, shown while the
// long form does not fit.
const (
	colRun, colStatus, colStage, colProgress, colUpdated, colReason = 0, 1, 2, 3, 4, 5
	cellStageKey, cellStatusShort                                   = 6, 7
)

// columnWidths are the natural widths of a row's cells: the widest of the header and every cell (the
// stage's key is under the STAGE header).
type columnWidths []int

func newColumnWidths(wide bool) columnWidths {
	headers := statusHeaders(wide)
	if !wide {
		headers = append(headers, "STAGE", "STATUS")
	}
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

// narrowTable is the order in which the table's columns take a terminal's width, by colfit's rule (the
// dashboard's): the run id cut in its middle to colfit.LeadMin, its status and its stage in short (as the
// dashboard's), the reason, from the width of its header to colfit.ReasonMin, the age; only then the whole
// id, the progress, the long status, the stage's key beside its name and the whole reason. Names are cut
// before the reason is lost: at 80 columns the 48-cell ids kept the reason to 5 cells. No cell is lent: at
// 50 and 60 columns the ids were cut to 16 cells in a RUN column padded to 24 and 34 (issue 36 point 7).
func narrowTable(natural columnWidths) colfit.Table {
	cols := make([]colfit.Natural, colReason+1)
	for col := range cols {
		cols[col] = colfit.Natural{Long: natural[col], Short: natural[col]}
	}
	cols[colStage].Short = natural[cellStageKey]
	cols[colStatus].Short = natural[cellStatusShort]
	return colfit.Table{Cols: cols, Lead: colRun, Sep: statusGap, Steps: []colfit.Step{
		{Kind: colfit.Grow, Col: colRun, Upto: colfit.LeadMin},
		{Kind: colfit.Add, Col: colStatus},
		{Kind: colfit.Add, Col: colStage},
		{Kind: colfit.Add, Col: colReason, Upto: colfit.ReasonMin, Min: len("REASON")},
		{Kind: colfit.Add, Col: colUpdated},
		{Kind: colfit.Grow, Col: colRun, Upto: natural[colRun]},
		{Kind: colfit.Add, Col: colProgress},
		{Kind: colfit.Long, Col: colStatus},
		{Kind: colfit.Long, Col: colStage},
		{Kind: colfit.Grow, Col: colReason, Upto: natural[colReason]},
	}}
}

// statusTable draws the table a slice of rows at a time, every column's width fixed beforehand from the
// natural widths of all the rows, so each slice is laid out as the whole table would be.
type statusTable struct {
	headers []string // of the columns shown
	cells   []int    // of the columns shown, the row's cell each draws
	widths  []int    // of the columns shown
	cutID   int      // above 0: ids are cut in the middle to this width
	width   int
	started bool
}

const statusGap = 2

// newStatusTable lays the table out: fitted to width by narrowTable when width is above 0; -o wide, as
// kubectl's, exists to add columns and is never cut (issue 36 point 3).
func newStatusTable(wide bool, width int, natural columnWidths) *statusTable {
	headers := statusHeaders(wide)
	t := &statusTable{}
	if width <= 0 || wide {
		t.headers, t.widths = headers, append([]int(nil), natural[:len(headers)]...)
		for col := range headers {
			t.cells = append(t.cells, col)
		}
		return t
	}
	lay := narrowTable(natural).Fit(width)
	// The table is as wide as its columns: lipgloss spreads a wider table's spare cells over the columns.
	t.width = lay.Used
	for col, h := range headers {
		if !lay.Show[col] {
			continue
		}
		cell := col
		switch {
		case col == colStage && !lay.LongForm[col]:
			cell = cellStageKey
		case col == colStatus && !lay.LongForm[col]:
			cell = cellStatusShort
		}
		t.headers, t.cells, t.widths = append(t.headers, h), append(t.cells, cell), append(t.widths, lay.Width[col])
	}
	if lay.Width[colRun] < natural[colRun] {
		// The table would cut the id at its end, where one task's runs differ: cut its middle.
		t.cutID = lay.Width[colRun]
	}
	return t
}

// write draws rows, the next slice of the table; it changes them (cut ids, columns left out).
func (t *statusTable) write(w io.Writer, rows [][]string) {
	widths := t.widths
	for i, row := range rows {
		if t.cutID > 0 {
			row[0] = text.CutMiddle(row[0], t.cutID)
		}
		kept := make([]string, 0, len(t.cells))
		for _, cell := range t.cells {
			kept = append(kept, row[cell])
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
		return "✗ " + plural.Count(errs, "error", "errors") + ": " + first
	case warns > 0:
		return "⚠ " + plural.Count(warns, "warning", "warnings")
	}
	return "-"
}
