// Package colfit is the one rule by which a table's columns fit a width, for the dashboard's runs table and
// status's table alike. The table is built up from nothing, one step at a time, in the order of what matters
// most to it: a step is taken while the width left pays for it, and the first step it does not pay for in
// full is the last one tried. A column is shown whole or not at all, in its long form or its short one; only
// the growing columns (the lead, the run's name or id, cut in its middle by the caller, and a reason, cut at
// its end) take part of what is left, and so do the gaps as they widen. No cell is ever lent and taken back:
// one cell more of width changes one step by one cell or shows the column it waited for, so every column's
// width, its form and the set of columns shown never decrease as the width grows (issue 36 point 7: a
// name 20 cells wide at 50 columns was cut to 16 at 60). Cells are left blank only while a column waits
// for its room, fewer than it needs; a table whose growing steps come early in that order fills its
// width with them. Each table says its own order of steps; the rule is this one.
package colfit

// The widths below which a growing column is not worth its room, the same in every table: a name cut in its
// middle to LeadMin keeps its start and its distinguishing end (a timestamp suffix's day and time), and a
// reason cut at ReasonMin still says what is wrong. A table grows its lead to LeadMin and its reason to
// ReasonMin before the lead grows further: names are cut before a reason is lost (issue 36).
const (
	LeadMin   = 16
	ReasonMin = 24
)

// Kind is what a step does.
type Kind int

const (
	// Grow: a growing column already shown (the lead, or a column added with Upto) shows more of its text,
	// toward Upto or its long width when that is less, taking what is left when that is less still.
	Grow Kind = iota
	// Add: the column is shown, whole, in its short form. With Upto above 0 it is a growing column: it comes
	// in once Min cells are left for it (1 when Min is 0) and takes up to min(Upto, its long width). It
	// costs the gap before it too.
	Add
	// Long: the shown column takes its long form, whole.
	Long
	// Spacing: the gaps widen from Sep to Sep+1, one cell at a time, in the order the columns came in.
	Spacing
	// Pad: a shown column that does not grow is widened with blank cells toward Upto, a width it keeps as
	// its cells change (a stage column as wide as every stage its runs may reach). Put it last: it is the
	// one step whose cells hold nothing.
	Pad
)

// Step is one step of a table's order.
type Step struct {
	Kind Kind
	Col  int
	Upto int // Grow, Pad, and Add of a growing column: the width it grows to at most in this step
	Min  int // Add of a growing column: the fewest cells it comes in with
}

// Natural is a column's width in its long and short forms: the widest of its header and its cells in each
// (the same in both for a column with one form). A growing column's long width is all it may ever take.
type Natural struct{ Long, Short int }

// Table is what a table asks of the rule: its columns' natural widths, its lead column (shown always, first,
// with no gap before it), its steps, and the gap it starts with.
type Table struct {
	Cols  []Natural
	Lead  int
	Steps []Step
	Sep   int
}

// Layout is, for one width, which columns show, in which form, how wide each is and the gap before each
// (0 for the lead), and the width the table uses.
type Layout struct {
	Show, LongForm []bool
	Width, Gap     []int
	Used           int
}

// Fit lays t out in width cells.
func (t Table) Fit(width int) Layout {
	f := fitting{t: t, left: max(0, width), sep: t.Sep, growing: make([]bool, len(t.Cols))}
	n := len(t.Cols)
	f.lay = Layout{Show: make([]bool, n), LongForm: make([]bool, n), Width: make([]int, n), Gap: make([]int, n)}
	f.lay.Show[t.Lead], f.growing[t.Lead] = true, true
	for _, st := range t.Steps {
		if !f.take(st) {
			break
		}
	}
	f.lay.Used = max(0, width) - f.left
	return f.lay
}

// fitting is Fit's state as it takes the steps.
type fitting struct {
	t       Table
	lay     Layout
	left    int
	sep     int
	spaced  bool
	growing []bool
	order   []int // the columns shown after the lead, in the order they came in
}

// take takes st as far as what is left pays for it, and says whether it paid for all of it: when it did not,
// no later step is tried.
func (f *fitting) take(st Step) bool {
	c, lay := st.Col, &f.lay
	switch st.Kind {
	case Grow, Pad:
		if !lay.Show[c] || f.growing[c] != (st.Kind == Grow) {
			return true
		}
		want := st.Upto
		if st.Kind == Grow {
			want = min(want, f.t.Cols[c].Long)
		}
		give := min(f.left, max(0, want-lay.Width[c]))
		lay.Width[c] += give
		f.left -= give
		return lay.Width[c] >= want
	case Add:
		if lay.Show[c] {
			return true
		}
		want, least := f.t.Cols[c].Short, f.t.Cols[c].Short
		if st.Upto > 0 {
			want = min(st.Upto, f.t.Cols[c].Long)
			least = min(max(1, st.Min), want)
		}
		if f.left < f.sep+least {
			return false
		}
		lay.Show[c], lay.Gap[c], f.growing[c] = true, f.sep, st.Upto > 0
		lay.Width[c] = min(want, f.left-f.sep)
		f.left -= f.sep + lay.Width[c]
		f.order = append(f.order, c)
		return lay.Width[c] >= want
	case Long:
		cost := f.t.Cols[c].Long - f.t.Cols[c].Short
		if !lay.Show[c] || f.growing[c] || lay.LongForm[c] {
			return true
		}
		if cost > f.left {
			return false
		}
		lay.LongForm[c], lay.Width[c] = true, lay.Width[c]+cost
		f.left -= cost
	case Spacing:
		if f.spaced {
			return true
		}
		for _, c := range f.order {
			if lay.Gap[c] > f.sep {
				continue
			}
			if f.left == 0 {
				return false
			}
			lay.Gap[c]++
			f.left--
		}
		f.spaced, f.sep = true, f.sep+1
	}
	return true
}
