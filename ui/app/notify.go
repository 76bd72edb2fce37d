// The notifier's mute for the session (m) and the footer segment that says it is muted.

package app

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
	Status    notify.Status
	errShown  string
	noteShown bool
}

func (a *App) NotifyStatus(s notify.Status) {
	a.Notify.Status = s
	if s.Err != "" && s.Err+s.ErrAt.String() != a.Notify.errShown {
		a.Notify.errShown = s.Err + s.ErrAt.String()
		a.Fail(fmt.Errorf("notify: %s", s.Err))
	}
	if s.Note != "" && !a.Notify.noteShown {
		a.Notify.noteShown = true
		a.Note(s.Note)
	}
}

// ToggleMute mutes or unmutes notifications for this session.
func (a *App) ToggleMute() {
	n := a.Opts.Notifier
	if n == nil || !a.Notify.Status.On() {
		a.Note("notifications are off: set channels under notify: in the config, or --bell, --desktop, --notify-command")
		return
	}
	muted := !a.Notify.Status.Muted
	n.SetMuted(muted)
	a.Notify.Status.Muted = muted
	if muted {
		a.Note("notifications muted for this session (" + a.Keys.First(keys.ActMute) + " unmutes)")
	} else {
		a.Note("notifications on: " + strings.Join(a.Notify.Status.Channels, ", "))
	}
}

// NotifySegment is the footer's word on notifications: which channels are on, muted, how many went out.
func (a *App) NotifySegment() string {
	s := a.Notify.Status
	if !s.On() {
		return ""
	}
	t := a.Theme
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
