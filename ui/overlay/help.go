// The `?` overlay: every binding, grouped, with its sentence and the legend, generated from the keymap.

package overlay

import (
	"fmt"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Help is the `?` overlay: every binding of the keymap, grouped, with the sentence for each, and a
// legend of the glyphs and columns. It is generated from the keymap, so what it lists is what works.
type Help struct {
	app *app.App
	// notHere is what cannot apply to the focused item when ? was pressed (the root decides: helpNotHere).
	notHere map[string]bool
	view    scrollView
	w, h    int
	done    bool
}

// NewHelp lists every key, marking "(not here)" the actions in notHere.
func NewHelp(a *app.App, notHere map[string]bool) *Help {
	return &Help{app: a, view: newScrollView(nil, false), notHere: notHere}
}

func (hv *Help) Done() bool { return hv.done }

func (hv *Help) SetSize(w, h int) {
	hv.w, hv.h = w, h
	hv.view.SetSize(max(1, w-theme.BorderCells), max(1, h-theme.BorderCells))
	hv.view.setLines(hv.Content(max(1, w-theme.BorderCells), max(1, h-theme.BorderCells)))
}

func (hv *Help) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	switch act := hv.app.Keys.Of(km); act {
	case keys.ActHelp, keys.ActBack:
		hv.done = true
	case keys.ActQuit:
		return app.QuitCmd()
	default:
		hv.view.key(act)
	}
	return nil
}

func (hv *Help) ShortHelp() []key.Binding {
	k := hv.app.Keys
	return append(k.BindingsOf(keys.ActDown, keys.ActUp), key.NewBinding(key.WithKeys("esc"), key.WithHelp(k.First(keys.ActHelp)+"/"+k.First(keys.ActBack), "close")))
}

func (hv *Help) FullHelp() [][]key.Binding { return [][]key.Binding{hv.ShortHelp()} }

var Legend = []string{
	"Legend",
	"  ▶ running  ‖ paused  ? awaiting input  ⚠ stalled  ✗ failed  ⊘ blocked  ✓ completed  ⌂ archived",
	"  Runs columns: NAME run id (cut in the middle)  STATUS  STAGE current stage  DONE stages done/total",
	"  LOCK most important lock verdict (live / unknown / stale)  KIND jonggrang or resumable",
	"  CHANGED time since the run's files last changed  WHY what the run needs from you",
	"  HOST the run's machine, with several (⚠ cannot be reached: the row as last seen)",
	"  Detail: ○ pending  ▶ running  ✓ done  ✗ failed  ⊘ blocked at its gate  – skipped  ↕ place unknown",
	"    [x] ticked  [ ] open  ◀ current",
	"  Filter: words match id, title, status, stage, folder, reason; !word negates;",
	"    is:STATUS is:needs-you is:archived is:done  kind:resumable kind:jonggrang  host:NAME",
	"    has:lock has:stale-lock has:live-lock has:problem has:error has:log",
}

func (hv *Help) Content(w, h int) []string {
	lines := hv.app.Keys.HelpLines(hv.notHere)
	// A blank cell before the border: a line that filled the width touched it ("(timeline: follow)┃").
	w = max(1, w-1)
	// On a wide terminal the keys go in two columns, split at a blank line between groups, so the keys
	// and the legend fit without scrolling.
	twoColumns := false
	if len(lines)+len(Legend)+1 > h && w >= 100 {
		// Split at the blank line between groups that makes the columns most even, and give the left
		// column the width its longest line needs: split at the middle's first blank, the left column held
		// three groups, cut at half the width, beside a half-empty right one.
		split, best := -1, len(lines)
		for i, l := range lines {
			if l == "" {
				if tall := max(i, len(lines)-i-1); tall < best {
					split, best = i, tall
				}
			}
		}
		if split > 0 {
			left, right := lines[:split], lines[split+1:]
			need := func(ls []string) int {
				n := 0
				for _, l := range ls {
					n = max(n, text.VisibleWidth(l)+2)
				}
				return n
			}
			ln, rn := need(left), need(right)
			colW := ln
			if ln+rn > w {
				// Both cannot be whole on one line: the split that makes help shortest while wrapping
				// least. Height alone let a one-line gain wrap six lines of the left column beside a
				// half-blank right one (at 120 columns), so each line wrapped counts half a line of height.
				best, bestTall := 0, 0
				for c := w / 3; c <= w-w/3; c++ {
					l, r := len(wrapHelp(left, c-2)), len(wrapHelp(right, w-c))
					tall := max(l, r)
					if cost := 2*tall + l + r; best == 0 || cost < best || cost == best && tall < bestTall {
						best, bestTall, colW = cost, tall, c
					}
				}
			}
			left, right = wrapHelp(left, colW-2), wrapHelp(right, w-colW)
			merged := make([]string, 0, max(len(left), len(right)))
			for i := 0; i < len(left) || i < len(right); i++ {
				l, r := "", ""
				if i < len(left) {
					l = left[i]
				}
				if i < len(right) {
					r = right[i]
				}
				merged = append(merged, text.PadRight(l, colW)+r)
			}
			lines, twoColumns = merged, true
		}
	}
	if !twoColumns {
		// One column as wide as the pane: a line is wrapped, never cut (at 80 columns the install key's
		// description and half the legend ended at the border).
		lines = wrapHelp(lines, w)
	}
	lines = append(lines, "")
	for _, l := range Legend {
		// A legend line goes on under its own start.
		lead := len(l) - len(strings.TrimLeft(l, " "))
		lines = append(lines, wrapUnder(l, w, lead+2)...)
	}
	return lines
}

func (hv *Help) View() string {
	k := hv.app.Keys
	title := fmt.Sprintf("Help · %s or %s to close", k.First(keys.ActHelp), k.First(keys.ActBack))
	return theme.Box(hv.app.Theme, title, hv.view.lines(), hv.w, hv.h, true, hv.view.scroll())
}

// helpKeyW is where a help line's description starts ("  ctrl+d/pgdown  half page down").
const helpKeyW = 17

// wrapHelp wraps help lines to w cells, a description's further lines under its start.
func wrapHelp(lines []string, w int) []string {
	var out []string
	for _, l := range lines {
		// A key's description goes on under its start; a note that is no key's ("(not here): …") under
		// its own text.
		indent := helpKeyW
		if !strings.HasPrefix(l, "  ") {
			indent = 2
		}
		out = append(out, wrapUnder(l, w, indent)...)
	}
	return out
}

// wrapUnder wraps one line to w cells, its further lines indented by indent; where that leaves too little
// room it is cut.
func wrapUnder(l string, w, indent int) []string {
	if text.VisibleWidth(l) <= w || w <= indent+8 {
		return []string{text.Truncate(l, w)}
	}
	parts := text.WrapText(l, w)
	out := []string{parts[0]}
	for _, c := range text.WrapText(strings.Join(parts[1:], " "), w-indent) {
		out = append(out, strings.Repeat(" ", indent)+c)
	}
	return out
}
