// What can be read of the runs pane from outside the package: the root's header (counts, sort, hide-done)
// and the dashboard's tests, which drive it through keys and look at the table it laid out. Getters only,
// so nothing outside changes its state.

package runs

// Cursor is the index in Order of the selected run.
func (p *Pane) Cursor() int { return p.cursor }

// Hidden is how many runs hide-done leaves out.
func (p *Pane) Hidden() int { return p.hidden }

// HideDone is whether finished runs are left out.
func (p *Pane) HideDone() bool { return p.hideDone }

// NeedYou counts the runs (all, not only those listed) that need a person.
func (p *Pane) NeedYou() int { return p.needYou }

// Order is the listed runs' keys in display order.
func (p *Pane) Order() []string { return p.order }

// SortBy is the sort in force.
func (p *Pane) SortBy() sortKey { return p.sortBy }

// W is the pane's width.
func (p *Pane) W() int { return p.w }

// Form is which of the column's forms is shown (FormLong or the short one).
func (c *shownCol) Form() int { return c.form }

// ID is the column shown.
func (c *shownCol) ID() ColID { return c.id }

// Width is the column's width in cells.
func (c *shownCol) Width() int { return c.width }

// Gap is the cells between the column and the one before it.
func (c *shownCol) Gap() int { return c.gap }

// Cols is the columns shown, left to right.
func (lay *tableLayout) Cols() []shownCol { return lay.cols }

// NameW is the width the names get.
func (lay *tableLayout) NameW() int { return lay.nameW }

// WhyW is the width WHY gets.
func (lay *tableLayout) WhyW() int { return lay.whyW }

// WhyGap is the cells between WHY and the column before it.
func (lay *tableLayout) WhyGap() int { return lay.whyGap }

// Sorts counts the re-sorts (a batch that moves nothing must not re-sort).
func (p *Pane) Sorts() int { return p.sorts }
