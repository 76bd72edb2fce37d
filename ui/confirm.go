package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// confirmDialog shows a planned change exactly (the diff and the log line to be appended) and applies it
// only on an explicit yes, or, for a lock whose liveness is unknown, on the typed holder name. Every other
// key keeps the dialog or cancels it; enter in a y/N question means no.
type confirmDialog struct {
	app     *app
	req     ActionRequest
	planned Planned
	preview []string
	view    scrollView
	typed   textinput.Model
	word    string
	w, h    int
	done    bool
}

func newConfirm(a *app, req ActionRequest, p Planned) *confirmDialog {
	c := &confirmDialog{app: a, req: req, planned: p, word: p.TypedConfirmation()}
	c.preview = SanitizeLines(strings.TrimRight(p.Preview(), "\n"))
	var styled []string
	for _, l := range c.preview {
		styled = append(styled, c.diffStyle(l).Render(l))
	}
	c.view = newScrollView(styled, true)
	if c.word != "" {
		c.typed = textinput.New()
		c.typed.Prompt = "> "
		st := c.typed.Styles()
		st.Cursor.Blink = false
		c.typed.SetStyles(st)
		c.typed.Focus()
	}
	return c
}

func (c *confirmDialog) Done() bool { return c.done }

// dialog size: as wide as the screen allows (the diff must show whole), as tall as its content.
func (c *confirmDialog) SetSize(w, h int) {
	c.w, c.h = max(20, w-4), h
	c.view.SetSize(max(10, c.w-4), max(1, h-8))
}

// confirmKeys are the keys the dialog answers itself (Update): apply, cancel, scroll. NewKeyMap refuses them
// for a mutating action, whose key pressed twice would otherwise open the dialog and confirm it.
var confirmKeys = []string{"y", "Y", "n", "N", "q", "enter", "esc", "ctrl+c", "j", "k", "up", "down", "pgup", "pgdown"}

func (c *confirmDialog) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	k := km.String()
	switch k {
	case "esc", "ctrl+c":
		c.cancel()
		return nil
	case "up", "down", "pgup", "pgdown":
		c.view.key(map[string]string{"up": ActUp, "down": ActDown, "pgup": ActPageUp, "pgdown": ActPageDown}[k])
		return nil
	}
	if c.word != "" {
		if k == "enter" {
			if c.typed.Value() != c.word {
				c.app.fail(fmt.Errorf("type %q exactly to confirm, or esc to cancel", Sanitize(c.word)))
				return nil
			}
			return c.apply()
		}
		var cmd tea.Cmd
		c.typed, cmd = c.typed.Update(km)
		return cmd
	}
	switch k {
	case "y", "Y":
		return c.apply()
	case "n", "N", "q", "enter":
		c.cancel()
	case "j", "k":
		c.view.key(map[string]string{"j": ActDown, "k": ActUp}[k])
	}
	return nil
}

func (c *confirmDialog) cancel() {
	c.done = true
	c.app.note("cancelled: nothing was changed")
}

func (c *confirmDialog) apply() tea.Cmd {
	c.done = true
	typed := ""
	if c.word != "" {
		typed = c.typed.Value()
	}
	return applyCmd(c.planned, typed)
}

func (c *confirmDialog) ShortHelp() []key.Binding {
	if c.word != "" {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "confirm typed")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	}
	return []key.Binding{
		key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "apply")),
		key.NewBinding(key.WithKeys("n"), key.WithHelp("n/enter/esc", "cancel")),
		key.NewBinding(key.WithKeys("j"), key.WithHelp("j/k", "scroll")),
	}
}

func (c *confirmDialog) FullHelp() [][]key.Binding { return [][]key.Binding{c.ShortHelp()} }

func (c *confirmDialog) View() string {
	t := c.app.theme
	inner := max(10, c.w-4)
	var lines []string
	lines = append(lines, t.Bold.Render(truncate(Sanitize(c.planned.Summary()), inner)), "")
	lines = append(lines, c.view.lines()...)
	if c.view.total() > len(c.view.lines()) {
		lines = append(lines, t.Dim.Render(fmt.Sprintf("… %d lines, j/k to scroll", c.view.total())))
	}
	lines = append(lines, "")
	if c.word != "" {
		lines = append(lines, t.Warn.Render("⚠ liveness unknown: type "+Sanitize(c.word)+" and press enter"))
		lines = append(lines, c.typed.View())
		lines = append(lines, t.Dim.Render("esc cancel"))
	} else {
		lines = append(lines, t.Bold.Render("Apply this change? [y/N]")+t.Dim.Render("  enter or esc: no"))
	}
	return box(t, "Confirm "+c.req.Action, lines, min(c.w, inner+4), min(c.h, len(lines)+2), true, c.view.scroll())
}

// diffStyle styles a preview line by its unified-diff prefix; the +/- stays visible, so colour only doubles it.
func (c *confirmDialog) diffStyle(s string) lipgloss.Style {
	t := c.app.theme
	switch {
	case strings.HasPrefix(s, "+++"), strings.HasPrefix(s, "---"):
		return t.Bold
	case strings.HasPrefix(s, "+"):
		return t.DiffAdd
	case strings.HasPrefix(s, "-"):
		return t.DiffDel
	case strings.HasPrefix(s, "@@"):
		return t.DiffHunk
	}
	return lipgloss.NewStyle()
}
