package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// pagerMsg opens a pager overlay: a resume brief, a message read whole, how to set a resume command.
type pagerMsg struct {
	title, text string
	copyable    bool
}

// pager is an overlay that shows one bounded text whole, scrolled with the movement keys; y copies it.
type pager struct {
	app      *app
	title    string
	text     string
	copyable bool
	view     scrollView
	w, h     int
	done     bool
}

func newPager(a *app, title, text string, copyable bool) *pager {
	return &pager{app: a, title: title, text: text, copyable: copyable, view: newScrollView(SanitizeLines(trimNL(text)), true)}
}

func trimNL(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}

func (p *pager) SetSize(w, h int) {
	p.w, p.h = w, h
	p.view.SetSize(max(1, w-borderCells), max(1, h-borderCells))
}

func (p *pager) Done() bool { return p.done }

func (p *pager) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	switch act := p.app.keys.Of(km); act {
	case ActBack, ActHelp, ActBrief, ActMessage:
		p.done = true
	case ActQuit:
		return quitCmd()
	case ActCopy:
		if p.copyable {
			return copyText(p.app, p.text)
		}
	default:
		p.view.key(act)
	}
	return nil
}

func (p *pager) ShortHelp() []key.Binding {
	k := p.app.keys
	out := k.bindings(ActDown, ActUp, ActPageDown)
	if p.copyable {
		out = append(out, k.bindings(ActCopy)...)
	}
	return append(out, key.NewBinding(key.WithKeys("esc"), key.WithHelp(k.First(ActBack), "close")))
}

func (p *pager) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }

func (p *pager) View() string {
	return box(p.app.theme, Sanitize(p.title), p.view.lines(), p.w, p.h, true, p.view.scroll())
}
