package ui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"github.com/charmbracelet/x/ansi"

	"runwatch/model"
	"runwatch/ui/keys"
	"runwatch/ui/text"
)

// Segment is one part of the footer's status line, drawn by whoever owns the fact it shows (watcher
// health, freshness, focus; a feature adds its own with one append in defaultSegments). An empty string
// hides the segment.
type Segment struct {
	Name   string
	Render func() string
}

// footer is two lines: the segments on the left with the focused component's keys (bubbles help, from the
// keymap) on the right, and below them a line input or the newest message.
type footer struct {
	app      *app
	help     help.Model
	segments []Segment
	width    int
}

func newFooter(a *app) *footer {
	f := &footer{app: a, help: help.New()}
	f.help.ShortSeparator = " · "
	return f
}

func (f *footer) SetSize(w, _ int) { f.width = w; f.help.SetWidth(w) }

func (m Model) defaultSegments() []Segment {
	a := m.app
	return []Segment{
		{Name: "health", Render: func() string {
			mode := a.health.Mode
			if mode == "" {
				mode = "static"
			}
			if a.health.Err != "" {
				return a.theme.Bad.Render("✗ " + mode + " error")
			}
			return a.theme.Good.Render("● ") + mode
		}},
		{Name: "fresh", Render: func() string {
			if a.lastChange.IsZero() {
				return "no data yet"
			}
			return "updated " + a.age(a.now(), a.lastChange) + " ago"
		}},
		{Name: "hosts", Render: func() string { return hostsSegment(a) }},
		{Name: "focus", Render: func() string { return a.theme.Dim.Render("focus " + a.focus.String()) }},
		{Name: "notify", Render: a.notifySegment},
	}
}

// view draws the footer for the focused component c; lineInput, when c is reading text, replaces the
// message line.
func (f *footer) view(c component) string {
	a := f.app
	t := a.theme
	var parts []string
	for _, s := range f.segments {
		if txt := s.Render(); txt != "" {
			parts = append(parts, txt)
		}
	}
	line1 := strings.Join(parts, t.Dim.Render(" · "))
	f.help.Styles.ShortKey = t.Bold
	f.help.Styles.ShortDesc = t.Dim
	f.help.Styles.ShortSeparator = t.Dim
	f.help.Styles.Ellipsis = t.Dim
	// The keys go right of the segments; where that leaves too little room (a narrow pane) they take the
	// second line whenever no message or input needs it.
	var hintsBelow string
	if room := f.width - text.VisibleWidth(line1) - 2; room >= 30 {
		f.help.SetWidth(room)
		if hints := f.help.ShortHelpView(c.ShortHelp()); hints != "" {
			line1 += strings.Repeat(" ", max(2, f.width-text.VisibleWidth(line1)-text.VisibleWidth(hints))) + hints
		}
	} else {
		f.help.SetWidth(f.width)
		hintsBelow = f.help.ShortHelpView(c.ShortHelp())
	}
	line2 := hintsBelow
	if li, ok := c.(interface{ lineInput() string }); ok && li.lineInput() != "" {
		line2 = li.lineInput()
	} else if msg, ok := a.msgs.current(a.now()); ok {
		a.changesAt(a.msgs.until()) // it leaves the footer then
		txt := msg.text
		style := t.Dim
		if msg.err {
			txt, style = "✗ "+txt, t.Bad
		}
		if text.VisibleWidth(txt) > f.width {
			// A long message is cut, and says how to read it whole: its paths shortened to their last
			// parts first, then its middle, so its start (what failed) and its end (the item or lock
			// it names) both stay.
			more := " · " + a.keys.First(keys.ActMessage) + " reads all"
			txt = cutMessage(shortPaths(txt), max(1, f.width-text.VisibleWidth(more))) + more
		}
		line2 = style.Render(txt)
	}
	return text.Truncate(line1, f.width) + "\n" + text.Truncate(line2, f.width)
}

// hostsSegment is each remote host's connection: live, connecting, reconnecting with the time to the next
// try, failed. The reason of a failure is in the footer's message line (and in status).
func hostsSegment(a *app) string {
	if len(a.hosts) == 0 {
		return ""
	}
	t := a.theme
	var parts []string
	for _, h := range a.hosts {
		name := text.Sanitize(h.Host)
		switch h.State {
		case model.HostLive:
			parts = append(parts, t.Good.Render("●")+" "+name)
		case model.HostReconnecting:
			in := ""
			if h.RetryAt != nil {
				in = " in " + a.countdown(a.now(), *h.RetryAt)
			}
			parts = append(parts, t.Warn.Render("⚠ "+name+" reconnecting"+in))
		case model.HostFailed:
			parts = append(parts, t.Bad.Render("✗ "+name+" failed"))
		default:
			parts = append(parts, t.Dim.Render("… "+name+" connecting"))
		}
		if needsInstall(h) {
			// The way out, on the line that shows the trouble.
			parts[len(parts)-1] += " " + t.Dim.Render(a.keys.First(keys.ActInstall)+" install")
		}
	}
	return strings.Join(parts, " ")
}

// reasonFirst moves the paths of a Go error chain ("pause: /…/MANIFEST.yaml: yaml: line 3: …") after its
// reason ("pause: yaml: line 3: … (/…/MANIFEST.yaml)"): a path first pushed the reason out of the footer.
// A segment is moved when it is a bare absolute path, or an operation and a path ("open /x/y").
func reasonFirst(msg string) string {
	parts := strings.Split(msg, ": ")
	if len(parts) < 3 {
		return msg
	}
	var kept, paths []string
	for i, p := range parts {
		last := i == len(parts)-1
		switch {
		case !last && isPath(p):
			paths = append(paths, p)
		case !last && i > 0 && strings.Count(p, " ") == 1 && isPath(p[strings.IndexByte(p, ' ')+1:]):
			op := p[:strings.IndexByte(p, ' ')]
			kept = append(kept, op)
			paths = append(paths, p[len(op)+1:])
		default:
			kept = append(kept, p)
		}
	}
	if len(paths) == 0 || len(kept) < 2 {
		return msg
	}
	return strings.Join(kept, ": ") + " (" + strings.Join(paths, ", ") + ")"
}

func isPath(s string) bool {
	return len(s) > 1 && s[0] == '/' && !strings.ContainsAny(s, " \t")
}

// shortPaths writes each absolute path of a message as its last two parts ("…/f/MANIFEST.yaml").
func shortPaths(msg string) string {
	words := strings.Split(msg, " ")
	for i, w := range words {
		core := strings.TrimLeft(w, "(")
		if !strings.HasPrefix(core, "/") {
			continue
		}
		segs := strings.Split(core, "/")
		if len(segs) > 3 {
			words[i] = w[:len(w)-len(core)] + "…/" + strings.Join(segs[len(segs)-2:], "/")
		}
	}
	return strings.Join(words, " ")
}

// cutMessage fits plain text into w cells by cutting its middle: the end keeps the message's last part
// (after its last ": ", the items or the lock it names) when that takes at most half the room, else a third.
func cutMessage(s string, w int) string {
	if text.VisibleWidth(s) <= w {
		return s
	}
	if w < 8 {
		return ansi.Truncate(s, w, "")
	}
	tail := (w - 3) / 3
	if i := strings.LastIndex(s, ": "); i >= 0 {
		if last := text.VisibleWidth(s[i+2:]); last <= (w-3)/2 {
			tail = max(tail, last)
		}
	}
	head := w - 3 - tail
	return ansi.Truncate(s, head, "") + " … " + ansi.TruncateLeft(s, text.VisibleWidth(s)-tail, "")
}
