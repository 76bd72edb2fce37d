// What the root reads of the runs pane for its header (counts, sort, hide-done) and its selection. Tests
// outside the package read what it draws instead. Getters only, so nothing outside changes its state.

package runs

// Cursor is the index in the list of the selected run.
func (p *Pane) Cursor() int { return p.cursor }

// Hidden is how many runs hide-done leaves out.
func (p *Pane) Hidden() int { return p.hidden }

// HideDone is whether finished runs are left out.
func (p *Pane) HideDone() bool { return p.hideDone }

// NeedYou counts the runs (all, not only those listed) that need a person.
func (p *Pane) NeedYou() int { return p.needYou }

// SortBy is the sort in force.
func (p *Pane) SortBy() sortKey { return p.sortBy }
