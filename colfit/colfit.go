// Package colfit is the one rule by which a table's columns fit a width, for the dashboard's runs table and
// status's table alike. The table is built up from nothing, one step at a time, in the order of what matters
// most to it: a step is taken only when the width left pays for it, and once a step does not fit none after
// it is tried. A wider table therefore always shows what a narrower one showed, and more. A column is shown
// whole or not at all, in its long form or its short one; only the growing columns (the lead, the run's name
// or id, cut in its middle by the caller, and a reason, cut at its end) take part of what is left. Each
// table says its own order of steps; the rule is this one.
package colfit

// The widths below which a growing column is not worth its room, the same in every table: a name cut in its
// middle to LeadMin keeps its start and its distinguishing end (a timestamp suffix's day and time), and a
// reason cut at ReasonMin still says what is wrong. A table grows its lead to LeadMin, shows its reason at
// ReasonMin and only then grows the lead whole: names are cut before a reason is lost (issue 36).
const (
	LeadMin   = 16
	ReasonMin = 24
)

// Kind is what a step does.
type Kind int

const (
	// Grow: the column (the lead, or a growing column already shown) grows toward Upto, or its long width
	// when that is less, taking what is left when that is less still.
	Grow Kind = iota
	// Add: the column is shown, whole, in its short form; or, with Upto above 0, as a growing column of
	// width min(Upto, its long width). It costs the separator before it too.
	Add
	// Long: the shown column takes its long form, whole.
	Long
	// Spacing: columns go from one cell apart to two.
	Spacing
)

// Step is one step of a table's order.
type Step struct {
	Kind Kind
	Col  int
	Upto int // Grow, and Add of a growing column: the width it grows to at most in this step
	// Hold: when this step does not fit, what is left stays blank instead of going to the slack, so a column
	// comes in without taking back cells the slack was lent one width narrower (a name that shrank as the
	// terminal grew). Set on the reason's Add, which comes in before the lead grows whole.
	Hold bool
}

// Natural is a column's width in its long and short forms: the widest of its header and its cells in each
// (the same in both for a column with one form). A growing column's long width is all it may ever take.
type Natural struct{ Long, Short int }

// Table is what a table asks of the rule: its columns' natural widths, its lead column (shown always, first,
// with no separator before it), its steps, the separator it starts with, and where what is left once the
// steps stop goes (in order, each up to its long width, if shown).
type Table struct {
	Cols  []Natural
	Lead  int
	Steps []Step
	Sep   int
	Slack []int
}

// Layout is, for one width, which columns show, in which form, how wide each is, the separator, and the
// width the table uses.
type Layout struct {
	Show, LongForm []bool
	Width          []int
	Sep            int
	Used           int
}

// Fit lays t out in width cells.
func (t Table) Fit(width int) Layout {
	n := len(t.Cols)
	lay := Layout{Show: make([]bool, n), LongForm: make([]bool, n), Width: make([]int, n), Sep: t.Sep}
	growing := make([]bool, n)
	lay.Show[t.Lead], growing[t.Lead] = true, true
	left, shown, held := width, 0, false
steps:
	for _, st := range t.Steps {
		c := st.Col
		cost, partial := 0, false
		switch st.Kind {
		case Grow:
			if !lay.Show[c] || !growing[c] {
				continue
			}
			cost, partial = max(0, min(st.Upto, t.Cols[c].Long)-lay.Width[c]), true
		case Add:
			if lay.Show[c] {
				continue
			}
			cost = lay.Sep + t.Cols[c].Short
			if st.Upto > 0 {
				cost = lay.Sep + min(st.Upto, t.Cols[c].Long)
			}
		case Long:
			if !lay.Show[c] || growing[c] || lay.LongForm[c] {
				continue
			}
			cost = t.Cols[c].Long - t.Cols[c].Short
		case Spacing:
			if lay.Sep >= 2 {
				continue
			}
			cost = shown
		}
		if cost > left && !partial {
			held = st.Hold
			break steps
		}
		give := min(cost, max(0, left))
		left -= give
		switch st.Kind {
		case Grow:
			lay.Width[c] += give
		case Add:
			lay.Show[c] = true
			shown++
			lay.Width[c] = t.Cols[c].Short
			if st.Upto > 0 {
				growing[c], lay.Width[c] = true, min(st.Upto, t.Cols[c].Long)
			}
		case Long:
			lay.LongForm[c], lay.Width[c] = true, t.Cols[c].Long
		case Spacing:
			lay.Sep = 2
		}
		if give < cost {
			break steps
		}
	}
	for _, c := range t.Slack {
		if held {
			break
		}
		if more := min(max(0, left), t.Cols[c].Long-lay.Width[c]); lay.Show[c] && more > 0 {
			lay.Width[c] += more
			left -= more
		}
	}
	lay.Used = width - max(0, left)
	return lay
}
