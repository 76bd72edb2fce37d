package notify

import (
	"fmt"
	"strings"
	"time"

	"runwatch/model"
	"runwatch/plural"
	"runwatch/termsafe"
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
		parts = append(parts, fmt.Sprintf("%d %s you", need, plural.Word(need, "run needs", "runs need")))
	}
	if done > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", done, plural.Word(done, "run completed", "runs completed")))
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

// maxPlain bounds a field in a notification: desktop popups and status lines show a line or two.
const maxPlain = 300

// Plain makes untrusted text (a run id, a reason read from run files) fit to travel inside an escape
// sequence or a tmux message (termsafe.Plain), cut to maxPlain runes. text.Sanitize keeps such characters
// visible for the screen; a notification has no grid to show them in, so they go.
func Plain(s string) string { return termsafe.Plain(s, maxPlain) }

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
