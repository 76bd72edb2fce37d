// What can be read of Detail from outside the package (the dashboard's tests, which drive it through keys):
// getters only, so nothing outside changes its state.

package detail

// Top is how far Detail is scrolled: the first of its rows shown below the pinned first line.
func (p *Pane) Top() int { return p.top }
