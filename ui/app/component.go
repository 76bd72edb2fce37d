// The component contract every pane and overlay keeps, and the optional parts the root asks for.

package app

import (
	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
)

// Component is the contract every pane and overlay keeps (soft-serve's shape): it handles the messages the
// root routes to it, draws itself into the size it was given, and names the keys that apply to it now,
// which the footer (short help) and `?` (full help) show.
type Component interface {
	Update(msg tea.Msg) tea.Cmd
	View() string
	SetSize(w, h int)
	help.KeyMap
}

// Overlay is a component drawn over the panes; the root keeps them on a stack, routes keys to the top one
// and pops it when it reports Done.
type Overlay interface {
	Component
	Done() bool
}

// Capturer is a component that is reading a line of text (filter, search): while it does, it gets every
// key, so typing "q" does not quit.
type Capturer interface {
	Capturing() bool
}

// Closer is an overlay that has something to say or undo when closed other than by its own keys (a
// confirmation says nothing was changed); the root closes the top overlay this way when q is pressed.
type Closer interface {
	Close()
}
