package colfit

import (
	"fmt"
	"slices"
	"testing"
)

// A table shaped as the runs table: a lead, columns with two forms, a reason that grows, a widening gap
// and a pad.
const lead, status, stage, age, reason = 0, 1, 2, 3, 4

func runsLike() Table {
	return Table{
		Cols: []Natural{lead: {Long: 30, Short: 30}, status: {Long: 16, Short: 5}, stage: {Long: 22, Short: 15},
			age: {Long: 7, Short: 7}, reason: {Long: 90, Short: 90}},
		Lead: lead, Sep: 1,
		Steps: []Step{
			{Kind: Grow, Col: lead, Upto: LeadMin}, {Kind: Add, Col: status}, {Kind: Add, Col: stage},
			{Kind: Add, Col: reason, Upto: ReasonMin, Min: 3}, {Kind: Spacing}, {Kind: Grow, Col: lead, Upto: 30},
			{Kind: Add, Col: age}, {Kind: Long, Col: status}, {Kind: Grow, Col: reason, Upto: 40},
			{Kind: Long, Col: stage}, {Kind: Grow, Col: reason, Upto: 90}, {Kind: Pad, Col: stage, Upto: 26},
		},
	}
}

// TestFitGrowsWithTheWidth: at every width the table uses no more than the width and says what it uses; a
// shown column that does not grow is its natural width in its form (padded only by the last step); and one
// cell more never takes anything back: no column, form, width or gap decreases (issue 36 point 7: the name
// was lent the cells a reason waited for and cut again when it came in). Past the natural width everything
// is shown whole, long and padded.
func TestFitGrowsWithTheWidth(t *testing.T) {
	t.Parallel()
	table := runsLike()
	var prev Layout
	for width := 0; width <= 260; width++ {
		lay := table.Fit(width)
		used := 0
		for c, n := range table.Cols {
			if !lay.Show[c] {
				continue
			}
			used += lay.Gap[c] + lay.Width[c]
			want := map[bool]int{true: n.Long, false: n.Short}[lay.LongForm[c]]
			if c == stage && lay.LongForm[c] {
				want = max(want, min(26, lay.Width[c]))
			}
			if c != reason && c != lead && lay.Width[c] != want {
				t.Errorf("width %d: column %d is %d wide, not its natural %d", width, c, lay.Width[c], want)
			}
			if width > 0 && (prev.Show[c] && !lay.Show[c] || prev.LongForm[c] && !lay.LongForm[c] ||
				lay.Width[c] < prev.Width[c] || lay.Gap[c] < prev.Gap[c]) {
				t.Errorf("width %d: column %d shrank: %+v → %+v", width, c, prev, lay)
			}
		}
		if used > width || used != lay.Used {
			t.Errorf("width %d: the table takes %d cells, says %d", width, used, lay.Used)
		}
		if width >= 30+2*4+16+90+26+7 {
			for c := range table.Cols {
				if !lay.Show[c] || lay.Width[c] != map[int]int{lead: 30, status: 16, stage: 26, age: 7, reason: 90}[c] {
					t.Errorf("width %d: column %d not shown whole: %+v", width, c, lay)
				}
			}
		}
		prev = lay
	}
}

// TestFitLeavesNoCellTheNextChangeCouldUse: where the table leaves cells blank, the next change one cell
// wider shows something those cells could not hold: a whole column, or a form, waiting for its room. Every
// other width is filled by the growing columns and the gaps.
func TestFitLeavesNoCellTheNextChangeCouldUse(t *testing.T) {
	t.Parallel()
	table := runsLike()
	whole := table.Fit(1 << 20)
	blank := 0
	for width := 0; width <= 260; width++ {
		lay := table.Fit(width)
		if lay.Used == width || lay.Used == whole.Used {
			continue
		}
		blank++
		next := width + 1
		for ; next < 1000 && fmt.Sprint(table.Fit(next)) == fmt.Sprint(lay); next++ {
		}
		if nl := table.Fit(next); nl.Used <= width {
			t.Errorf("width %d leaves %d cells blank, and what %d adds takes %d: it fitted", width, width-lay.Used, next, nl.Used-lay.Used)
		}
	}
	if blank == 0 {
		t.Error("no width left a cell blank: the test proves nothing")
	}
}

// The gaps widen one at a time, in the order the columns came in, and a column that comes in after them
// has the wide gap.
func TestFitWidensGapsInTurn(t *testing.T) {
	t.Parallel()
	table := runsLike()
	// 16 + 1+5 + 1+15 + 1+24 = 63: the reason at ReasonMin; then the three gaps, then the lead.
	for width, want := range map[int][]int{63: {0, 1, 1, 0, 1}, 64: {0, 2, 1, 0, 1}, 66: {0, 2, 2, 0, 2}} {
		if lay := table.Fit(width); !slices.Equal(lay.Gap, want) || lay.Width[lead] != LeadMin {
			t.Errorf("at %d: gaps %v, lead %d; want %v, %d", width, lay.Gap, lay.Width[lead], want, LeadMin)
		}
	}
	if lay := table.Fit(66 + 14 + 2 + 7); !lay.Show[age] || lay.Gap[age] != 2 {
		t.Errorf("a column after the gaps widened: %+v", lay)
	}
}

// A growing column comes in with Min cells, not fewer; until then what is left stays blank.
func TestFitGrowingColumnComesInAtMin(t *testing.T) {
	t.Parallel()
	table := runsLike()
	// 16 + 1+5 + 1+15 = 38: the reason needs 1+3.
	if lay := table.Fit(41); lay.Show[reason] || lay.Used != 38 {
		t.Errorf("at 41: %+v", lay)
	}
	if lay := table.Fit(42); !lay.Show[reason] || lay.Width[reason] != 3 || lay.Used != 42 {
		t.Errorf("at 42: %+v", lay)
	}
	// Too narrow for the status: the lead takes what there is, up to LeadMin.
	if lay := table.Fit(10); lay.Show[status] || lay.Width[lead] != 10 {
		t.Errorf("at 10: %+v", lay)
	}
}
