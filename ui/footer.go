// The footer: the status segments (watch mode, updated, hosts, messages) and the focused component's keys.

package ui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"github.com/charmbracelet/x/ansi"

	"runwatch/model"
	"runwatch/ui/app"
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
	app      *app.App
	help     help.Model
	segments []Segment
	width    int
}

func newFooter(a *app.App) *footer {
	f := &footer{app: a, help: help.New()}
	f.help.ShortSeparator = " · "
	return f
}

func (f *footer) SetSize(w, _ int) { f.width = w; f.help.SetWidth(w) }

func (m Model) defaultSegments() []Segment {
	a := m.app
	return []Segment{
		{Name: "health", Render: func() string {
			mode := a.Health.Mode
			if mode == "" {
				mode = "static"
			}
			if a.Health.Err != "" {
				return a.Theme.Bad.Render("✗ " + mode + " error")
			}
			return a.Theme.Good.Render("● ") + mode
		}},
		{Name: "fresh", Render: func() string {
			if a.LastChange.IsZero() {
				return "no data yet"
			}
			return "updated " + a.Age(a.Now(), a.LastChange) + " ago"
		}},
		{Name: "hosts", Render: func() string { return hostsSegment(a) }},
		{Name: "focus", Render: func() string { return a.Theme.Dim.Render("focus " + a.Focus.String()) }},
		{Name: "notify", Render: a.NotifySegment},
	}
}

// view draws the footer for the focused component c; lineInput, when c is reading text, replaces the
// message line.
func (f *footer) view(c app.Component) string {
	a := f.app
	t := a.Theme
	line1 := f.segmentsLine()
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
	if li, ok := c.(interface{ LineInput() string }); ok && li.LineInput() != "" {
		line2 = li.LineInput()
	} else if msg, ok := a.Msgs.Current(a.Now()); ok {
		a.ChangesAt(a.Msgs.Until()) // it leaves the footer then
		txt := msg.Text
		style := t.Dim
		if msg.Err {
			txt, style = "✗ "+txt, t.Bad
		}
		if text.VisibleWidth(txt) > f.width {
			// A long message is cut, and says how to read it whole: its paths shortened to their last
			// parts first, then its middle, so its start (what failed) and its end (the item or lock
			// it names) both stay.
			more := " · " + a.Keys.First(keys.ActMessage) + " reads all"
			name := ""
			if run, ok := a.SelectedRun(); ok {
				name = text.Sanitize(run.ID)
			}
			txt = cutMessage(shortPaths(txt), max(1, f.width-text.VisibleWidth(more)), name) + more
		}
		line2 = style.Render(txt)
	}
	return text.Truncate(line1, f.width) + "\n" + text.Truncate(line2, f.width)
}

// giveWay is the order segments leave the status line in when it is wider than the pane: what matters
// least first, so the watcher's health and a host's trouble with its way out ("I install") are not cut.
var giveWay = []string{"focus", "notify", "fresh"}

// segmentsLine is the footer's status line: every segment that has something to say, less those that give
// way while the line is wider than the pane (what still does not fit is cut at its end).
func (f *footer) segmentsLine() string {
	type part struct{ name, txt string }
	var parts []part
	for _, s := range f.segments {
		if txt := s.Render(); txt != "" {
			parts = append(parts, part{s.Name, txt})
		}
	}
	sep := f.app.Theme.Dim.Render(" · ")
	join := func() string {
		txts := make([]string, len(parts))
		for i, p := range parts {
			txts[i] = p.txt
		}
		return strings.Join(txts, sep)
	}
	line := join()
	for _, name := range giveWay {
		if f.width <= 0 || text.VisibleWidth(line) <= f.width {
			break
		}
		parts = slices.DeleteFunc(parts, func(p part) bool { return p.name == name })
		line = join()
	}
	return line
}

// hostsSegment is each remote host's connection: live, connecting, reconnecting with the time to the next
// try, failed. The reason of a failure is in the footer's message line (and in status).
func hostsSegment(a *app.App) string {
	if len(a.Hosts) == 0 {
		return ""
	}
	t := a.Theme
	var parts []string
	for _, h := range a.Hosts {
		name := text.Sanitize(h.Host)
		switch h.State {
		case model.HostLive:
			parts = append(parts, t.Good.Render("●")+" "+name)
		case model.HostReconnecting:
			in := ""
			if h.RetryAt != nil {
				in = " in " + a.Countdown(a.Now(), *h.RetryAt)
			}
			parts = append(parts, t.Warn.Render("⚠ "+name+" reconnecting"+in))
		case model.HostFailed:
			parts = append(parts, t.Bad.Render("✗ "+name+" failed"))
		default:
			parts = append(parts, t.Dim.Render("… "+name+" connecting"))
		}
		if app.NeedsInstall(h) {
			// The way out, on the line that shows the trouble.
			parts[len(parts)-1] += " " + t.Dim.Render(a.Keys.First(keys.ActInstall)+" install")
		}
	}
	return strings.Join(parts, " ")
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
// Neither side is cut inside a word (an item's name cut to "CY_TOKENS=0" or "fo" named nothing): a tail with
// no whole word in its room goes (a path's end stays), and the message is cut at its end instead; i reads it
// whole. The run the message names (name, the selected run's) is never cut: the tail starts at it when the
// cut would fall inside it, and where that leaves no room, the message starts with it.
func cutMessage(s string, w int, name string) string {
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
	if at := strings.LastIndex(s, name); name != "" && at >= 0 {
		from, toEnd, minHead := text.VisibleWidth(s[:at]), text.VisibleWidth(s[at:]), min(16, w/3)
		switch {
		case from+text.VisibleWidth(name) <= w-3-tail || toEnd <= tail:
			// In the start or the end that stay.
		case toEnd <= w-3-minHead:
			tail = toEnd
		case text.VisibleWidth(name)+4+10 <= w:
			mark, before := "", s[:at]
			if strings.HasPrefix(before, "✗ ") {
				mark, before = "✗ ", before[len("✗ "):] // an error's mark stays first
			}
			rest := strings.Join(strings.Fields(before+s[at+len(name):]), " ")
			return mark + name + ": " + cutMessage(rest, w-text.VisibleWidth(mark+name)-2, "")
		default:
			return ansi.Truncate(name, w, "…")
		}
	}
	end := ansi.TruncateLeft(s, text.VisibleWidth(s)-tail, "")
	if first, _, _ := strings.Cut(end, " "); !strings.HasPrefix(s[len(s)-len(end)-1:], " ") && !strings.Contains(first, "/") {
		// The tail starts inside a word: it keeps its whole words only (a path keeps its last parts).
		_, end, _ = strings.Cut(end, " ")
	}
	if end == "" {
		return wordStart(ansi.Truncate(s, w-2, "")) + " …"
	}
	return wordStart(ansi.Truncate(s, w-3-text.VisibleWidth(end), "")) + " … " + end
}

// wordStart is head, a message's start, without the word it cuts at its end.
func wordStart(head string) string {
	if i := strings.LastIndex(head, " "); i > 0 {
		return strings.TrimRight(head[:i], " ")
	}
	return head
}
