package notify

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"runwatch/model"
)

// Notification is what one delivery says: one transition, or a summary of several.
type Notification struct {
	At    time.Time
	Items []Transition
}

// Summary reports whether the notification covers several runs.
func (n Notification) Summary() bool { return len(n.Items) > 1 }

// maxListed runs are named in a summary's body; the rest are counted.
const maxListed = 5

// Title is one short line: "runwatch: irm-x needs you", "runwatch: 12 runs need you". Plain text, safe
// for any channel (see Plain).
func (n Notification) Title() string {
	if len(n.Items) == 1 {
		it := n.Items[0]
		if it.Kind == KindCompleted {
			return "runwatch: " + Plain(it.Run.ID) + " completed"
		}
		return "runwatch: " + Plain(it.Run.ID) + " needs you"
	}
	need, done := n.counts()
	var parts []string
	if need > 0 {
		parts = append(parts, fmt.Sprintf("%d %s you", need, plural(need, "run needs", "runs need")))
	}
	if done > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", done, plural(done, "run completed", "runs completed")))
	}
	return "runwatch: " + strings.Join(parts, ", ")
}

// Body says why: the run's reason and what settles it, or for a summary the first runs and their reasons.
func (n Notification) Body() string {
	if len(n.Items) == 1 {
		it := n.Items[0]
		if it.Kind == KindCompleted {
			return Plain(it.Run.Title)
		}
		body := Plain(it.Run.Attention.Reason)
		if c := it.Run.Attention.Command; c != "" {
			body += " — " + Plain(c)
		}
		return body
	}
	var parts []string
	for i, it := range n.Items {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(n.Items)-maxListed))
			break
		}
		parts = append(parts, Plain(it.Run.ID)+" ("+itemWord(it)+")")
	}
	return strings.Join(parts, ", ")
}

// Line is the notification as one line of text: "irm-x needs you: lock held by dead pid 4242 (3s) — runwatch
// unlock irm-x". The headless notifier prints it and the footer shows the last one.
func (n Notification) Line() string {
	return strings.TrimPrefix(n.Title(), "runwatch: ") + ": " + n.Body()
}

func (n Notification) counts() (need, done int) {
	for _, it := range n.Items {
		if it.Kind == KindCompleted {
			done++
		} else {
			need++
		}
	}
	return need, done
}

func itemWord(it Transition) string {
	if it.Kind == KindCompleted {
		return "completed"
	}
	return strings.ReplaceAll(it.Run.Attention.Code, "-", " ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// maxPlain bounds a field in a notification: desktop popups and status lines show a line or two.
const maxPlain = 300

// Plain makes untrusted text (a run id, a reason read from run files) fit to travel inside an escape
// sequence or a tmux message: escape sequences are removed, every other control character (C0, DEL, C1,
// including BEL and ST that end an OSC) and bidi control becomes a space, runs of blanks become one, and the
// text is cut to maxPlain runes. The result has no byte below 0x20, no 0x7f and no U+0080–U+009F, so it can
// neither end the sequence it travels in nor start another. ui.Sanitize keeps such characters visible in
// caret notation for the screen; a notification has no grid to show them in, so they go.
func Plain(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.ContainsAny(s, "\x1b\u009b\u009d\u0090\u0098\u009e\u009f") {
		s = ansi.Strip(s)
	}
	var b strings.Builder
	n, space := 0, false
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) || isBidi(r) {
			space = b.Len() > 0
			continue
		}
		if n == maxPlain {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

func isBidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// Event is a transition as a line of `runwatch events` (type "attention") and of `runwatch notify --json`.
type Event struct {
	Type string    `json:"type"`
	At   time.Time `json:"at"`
	// Transition is "entered" (the run needs a person, for attention.code) or "completed".
	Transition string          `json:"transition"`
	ID         string          `json:"id"`
	StatePath  string          `json:"state_path"`
	Dir        string          `json:"dir"`
	Status     model.RunStatus `json:"status"`
	Attention  model.Attention `json:"attention"`
}

// EventOf is the events line of a transition.
func EventOf(tr Transition) Event {
	word := "entered"
	if tr.Kind == KindCompleted {
		word = "completed"
	}
	return Event{Type: "attention", At: tr.At.UTC(), Transition: word, ID: tr.Run.ID, StatePath: tr.Run.StatePath,
		Dir: tr.Run.Dir, Status: tr.Run.Status, Attention: tr.Run.Attention}
}
