package colfit

import "testing"

// TestFitGrowsWithTheWidth: at every width the table uses no more than the width; a shown column that does
// not grow is exactly its natural width in its form; and a wider table shows every column a narrower one
// showed, in the same form or a longer one (a slack column may give back what it was lent when a column
// comes in). Past the natural width everything is shown whole and long.
func TestFitGrowsWithTheWidth(t *testing.T) {
	const lead, status, stage, age, reason = 0, 1, 2, 3, 4
	table := Table{
		Cols: []Natural{lead: {Long: 30, Short: 30}, status: {Long: 16, Short: 5}, stage: {Long: 22, Short: 4},
			age: {Long: 3, Short: 3}, reason: {Long: 90, Short: 90}},
		Lead: lead, Sep: 1, Slack: []int{reason, lead},
		Steps: []Step{
			{Kind: Grow, Col: lead, Upto: 12}, {Kind: Add, Col: status}, {Kind: Add, Col: reason, Upto: 6},
			{Kind: Grow, Col: lead, Upto: 30}, {Kind: Spacing}, {Kind: Add, Col: stage}, {Kind: Add, Col: age},
			{Kind: Long, Col: status}, {Kind: Grow, Col: reason, Upto: 24}, {Kind: Long, Col: stage},
			{Kind: Grow, Col: reason, Upto: 90},
		},
	}
	var prev Layout
	for width := 0; width <= 200; width++ {
		lay := table.Fit(width)
		used := lay.Width[lead]
		for c, n := range table.Cols {
			if c == lead || !lay.Show[c] {
				continue
			}
			used += lay.Sep + lay.Width[c]
			if c != reason {
				if want := map[bool]int{true: n.Long, false: n.Short}[lay.LongForm[c]]; lay.Width[c] != want {
					t.Errorf("width %d: column %d is %d wide, not its natural %d", width, c, lay.Width[c], want)
				}
			}
			if width > 0 && prev.Show[c] && (!lay.Show[c] || prev.LongForm[c] && !lay.LongForm[c]) {
				t.Errorf("width %d: column %d shrank or went from %+v to %+v", width, c, prev, lay)
			}
		}
		if used > width || used != lay.Used {
			t.Errorf("width %d: the table takes %d cells, says %d", width, used, lay.Used)
		}
		if width >= 30+1*0+2*4+16+90+22+3 {
			for c := range table.Cols {
				if !lay.Show[c] || c != lead && c != reason && !lay.LongForm[c] && table.Cols[c].Long != table.Cols[c].Short {
					t.Errorf("width %d: column %d not shown whole: %+v", width, c, lay)
				}
			}
		}
		prev = lay
	}
}

// What a step cannot pay for stops the rule there, and what is left goes to the slack columns in order.
func TestFitGivesWhatIsLeftToTheSlack(t *testing.T) {
	table := Table{
		Cols: []Natural{{Long: 20, Short: 20}, {Long: 10, Short: 10}, {Long: 50, Short: 50}},
		Lead: 0, Sep: 2, Slack: []int{2, 0},
		Steps: []Step{{Kind: Grow, Col: 0, Upto: 20}, {Kind: Add, Col: 2, Upto: 6}, {Kind: Add, Col: 1}},
	}
	// 20 + 2+6 = 28; the next column needs 12 more: at 35 it is left out and the reason takes the 7 left.
	lay := table.Fit(35)
	if lay.Show[1] || lay.Width[2] != 13 || lay.Width[0] != 20 || lay.Used != 35 {
		t.Errorf("at 35: %+v", lay)
	}
	// Too narrow for the reason: the lead takes what there is.
	if lay := table.Fit(15); lay.Show[2] || lay.Width[0] != 15 {
		t.Errorf("at 15: %+v", lay)
	}
}
