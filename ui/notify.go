package ui

import (
	"fmt"
	"strings"

	"runwatch/notify"
	"runwatch/ui/keys"
)

// Notifier is what the dashboard needs of the notifier (package notify, run beside the program by cli): a
// mute for the session and the status to show. Notifications themselves never pass through the ui; their
// status arrives as a notify.Status message.
type Notifier interface {
	SetMuted(bool)
	Status() notify.Status
}

// notifyState is the footer's copy of the notifier's status, and the failure it last reported.
type notifyState struct {
	status    notify.Status
	errShown  string
	noteShown bool
}

func (a *app) notifyStatus(s notify.Status) {
	a.notify.status = s
	if s.Err != "" && s.Err+s.ErrAt.String() != a.notify.errShown {
		a.notify.errShown = s.Err + s.ErrAt.String()
		a.fail(fmt.Errorf("notify: %s", s.Err))
	}
	if s.Note != "" && !a.notify.noteShown {
		a.notify.noteShown = true
		a.note(s.Note)
	}
}

// toggleMute mutes or unmutes notifications for this session.
func (a *app) toggleMute() {
	n := a.opts.Notifier
	if n == nil || !a.notify.status.On() {
		a.note("notifications are off: set channels under notify: in the config, or --bell, --desktop, --notify-command")
		return
	}
	muted := !a.notify.status.Muted
	n.SetMuted(muted)
	a.notify.status.Muted = muted
	if muted {
		a.note("notifications muted for this session (" + a.keys.First(keys.ActMute) + " unmutes)")
	} else {
		a.note("notifications on: " + strings.Join(a.notify.status.Channels, ", "))
	}
}

// notifySegment is the footer's word on notifications: which channels are on, muted, how many went out.
func (a *app) notifySegment() string {
	s := a.notify.status
	if !s.On() {
		return ""
	}
	t := a.theme
	if s.Muted {
		txt := "notify muted"
		if s.Held > 0 {
			txt += fmt.Sprintf(" · %d held", s.Held)
		}
		return t.Warn.Render(txt)
	}
	txt := "notify " + strings.Join(s.Channels, " ")
	if s.Sent > 0 {
		txt += fmt.Sprintf(" · %d sent", s.Sent)
	}
	return t.Dim.Render(txt)
}
