// Package overlay holds the dialogs drawn over the panes: the confirmation of a planned action
// (confirm.go), the choice of stage when a step cannot know it (stepchoice.go) and the `?` help
// (help.go). Each is an app.Overlay: the root pushes it, routes keys to it, and pops it when Done.
// They emit app messages (PlanMsg, AppliedMsg through app.ApplyCmd) and import no other component.
//
// confirm.go: the y/N (or typed) confirmation with the exact diff.
package overlay

import (
	"fmt"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Confirm shows a planned change exactly (the diff and the log line to be appended) and applies it
// only on an explicit yes, or, for a lock whose liveness is unknown, on the typed holder name. Every other
// key keeps the dialog or cancels it; enter in a y/N question means no.
type Confirm struct {
	app     *app.App
	req     app.ActionRequest
	planned app.Planned
	Preview []string
	view    scrollView
	typed   textinput.Model
	word    string
	w, h    int
	done    bool
}

func NewConfirm(a *app.App, req app.ActionRequest, p app.Planned) *Confirm {
	c := &Confirm{app: a, req: req, planned: p, word: p.TypedConfirmation()}
	c.Preview = text.SanitizeLines(strings.TrimRight(p.Preview(), "\n"))
	// Drawn with paths relative to the run's folder (the title names it): at 80x24 the absolute paths
	// wrapped over the lines that were the point, and pushed the changed lines below the fold.
	under := ""
	if req.Run.Dir != "" {
		under = text.Sanitize(req.Run.Dir) + "/"
	}
	var styled []string
	for _, l := range c.Preview {
		shown := l
		if under != "" {
			shown = strings.ReplaceAll(l, under, "")
		}
		styled = append(styled, c.diffStyle(l).Render(shown))
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

func (c *Confirm) Done() bool { return c.done }

// dialog size: as wide as the screen allows (the diff must show whole), as tall as its content. The
// sentence being approved is wrapped whole above the preview; the preview gets the rows left.
func (c *Confirm) SetSize(w, h int) {
	c.w, c.h = max(20, w-4), h
	c.view.SetSize(max(10, c.w-4), max(1, h-7-len(c.summary())-len(c.question())))
}

// summary is the sentence being approved, wrapped to the dialog: cut, it hid the stage a step moves to
// and a lock's verdict.
func (c *Confirm) summary() []string {
	return text.WrapText(text.Sanitize(c.planned.Summary()), max(10, c.w-4))
}

// question is what the dialog asks, wrapped.
func (c *Confirm) question() []string {
	t := c.app.Theme
	if c.word != "" {
		var out []string
		for _, l := range text.WrapText("⚠ liveness unknown: type "+text.Sanitize(c.word)+" and press enter", max(10, c.w-4)) {
			out = append(out, t.Warn.Render(l))
		}
		return append(out, c.typed.View(), t.Dim.Render("esc cancel"))
	}
	q := c.planned.Question()
	var out []string
	for _, l := range text.WrapText(text.Sanitize(q)+" [y/N]", max(10, c.w-4)) {
		out = append(out, t.Bold.Render(l))
	}
	const no = "  enter or esc: no"
	if last := out[len(out)-1]; text.VisibleWidth(last)+len(no) <= max(10, c.w-4) {
		out[len(out)-1] = last + t.Dim.Render(no)
	} else {
		out = append(out, t.Dim.Render(strings.TrimSpace(no)))
	}
	return out
}

func (c *Confirm) Update(msg tea.Msg) tea.Cmd {
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
		c.view.key(map[string]string{"up": keys.ActUp, "down": keys.ActDown, "pgup": keys.ActPageUp, "pgdown": keys.ActPageDown}[k])
		return nil
	}
	if c.word != "" {
		if k == "enter" {
			if c.typed.Value() != c.word {
				c.app.Fail(fmt.Errorf("type %q exactly to confirm, or esc to cancel", text.Sanitize(c.word)))
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
		c.view.key(map[string]string{"j": keys.ActDown, "k": keys.ActUp}[k])
	}
	return nil
}

// Capturing is true while the dialog reads the word that confirms a dangerous change: q is typed there.
func (c *Confirm) Capturing() bool { return c.word != "" }

// Close cancels, as n and esc do.
func (c *Confirm) Close() { c.cancel() }

func (c *Confirm) cancel() {
	c.done = true
	c.app.Note("cancelled: nothing was changed")
}

func (c *Confirm) apply() tea.Cmd {
	c.done = true
	typed := ""
	if c.word != "" {
		typed = c.typed.Value()
	}
	run := ""
	if c.req.Run.Dir != "" && c.req.Act != keys.ActLaunch {
		run = c.req.Run.Key()
		if c.app.Applying == nil {
			c.app.Applying = map[string]bool{}
		}
		c.app.Applying[run] = true
		c.app.Note("applying: " + c.planned.Summary() + "…")
	}
	return app.ApplyCmd(c.planned, typed, run)
}

func (c *Confirm) ShortHelp() []key.Binding {
	if c.word != "" {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "confirm typed")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	}
	b := []key.Binding{
		key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "apply")),
		key.NewBinding(key.WithKeys("n"), key.WithHelp("n/enter/esc", "cancel")),
	}
	if c.view.scrolls() {
		// Only with something to scroll: on a preview that fits, the hint pointed at nothing.
		b = append(b, key.NewBinding(key.WithKeys("j"), key.WithHelp("j/k", "scroll")))
	}
	return b
}

func (c *Confirm) FullHelp() [][]key.Binding { return [][]key.Binding{c.ShortHelp()} }

func (c *Confirm) View() string {
	t := c.app.Theme
	inner := max(10, c.w-4)
	var lines []string
	for _, l := range c.summary() {
		lines = append(lines, t.Bold.Render(l))
	}
	lines = append(lines, "")
	// The viewport pads a short preview to its height: those rows were a gap of blank lines under it.
	shown := c.view.lines()
	shown = shown[:min(len(shown), max(0, c.view.total()-c.view.vp.YOffset()))]
	lines = append(lines, shown...)
	if c.view.vp.YOffset()+len(shown) < c.view.total() {
		// Only while there is more below: scrolled to the end, the hint had nothing left to point at. How
		// much more is the border's "↓ N more" alone: a second count here ("12 lines") read as another.
		lines = append(lines, t.Dim.Render("… more below, j/k to scroll"))
	}
	lines = append(lines, "")
	lines = append(lines, c.question()...)
	title := "Confirm " + c.req.Act
	if c.req.Run.Dir != "" {
		title += " · in " + text.Sanitize(c.req.Run.Dir)
	}
	return theme.Box(t, title, lines, min(c.w, inner+4), min(c.h, len(lines)+2), true, c.view.scroll())
}

// diffStyle styles a preview line by its unified-diff prefix; the +/- stays visible, so colour only doubles it.
func (c *Confirm) diffStyle(s string) lipgloss.Style {
	t := c.app.Theme
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
