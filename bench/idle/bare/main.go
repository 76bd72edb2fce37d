// Command bare is the floor under any Bubble Tea v2 dashboard's idle cost: a program whose view never
// changes and which schedules nothing. bench/idle measures it beside runwatch, so what the library's own
// renderer costs (its frame ticker runs at 60 Hz for the program's whole life) is not counted against
// runwatch's code.
package main

import (
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"
)

type still struct{}

func (still) Init() tea.Cmd { return nil }

func (m still) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "q" {
		return m, tea.Quit
	}
	return m, nil
}

func (still) View() tea.View {
	v := tea.NewView("a Bubble Tea program that does nothing (q quits)")
	v.AltScreen = true
	return v
}

func main() {
	if _, err := tea.NewProgram(still{}).Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
