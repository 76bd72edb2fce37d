// Tests of the notifier's status and mute in the footer.

package ui

import (
	"strings"
	"sync"
	"testing"
	"time"

	"runwatch/notify"
	"runwatch/ui/app"
)

// fakeNotifier records what the mute key asked for.
type fakeNotifier struct {
	mu     sync.Mutex
	status notify.Status
	muted  []bool
}

func (f *fakeNotifier) SetMuted(m bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.muted = append(f.muted, m)
	f.status.Muted = m
}

func (f *fakeNotifier) Status() notify.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status
}

func theFooter(m Model) (string, string) {
	lines := strings.Split(plain(m), "\n")
	return lines[len(lines)-2], lines[len(lines)-1]
}

func TestFooterShowsNotificationsAndTheKeyMutesThem(t *testing.T) {
	t.Parallel()
	n := &fakeNotifier{status: notify.Status{Channels: []string{"bell", "osc777", "tmux", "hook"}}}
	m := newTestModel(t, 160, 30, sampleRuns(), app.Options{Notifier: n})
	if l1, _ := theFooter(m); !strings.Contains(l1, "notify bell osc777 tmux hook") {
		t.Fatalf("footer does not show the channels: %q", l1)
	}
	m = send(t, m, notify.Status{Channels: n.status.Channels, Sent: 2})
	if l1, _ := theFooter(m); !strings.Contains(l1, "notify bell osc777 tmux hook · 2 sent") {
		t.Errorf("footer after two notifications: %q", l1)
	}

	m = send(t, m, press("m"))
	l1, l2 := theFooter(m)
	if len(n.muted) != 1 || !n.muted[0] || !strings.Contains(l1, "notify muted") || !strings.Contains(l2, "m unmutes") {
		t.Fatalf("after m: muted %v, footer %q / %q", n.muted, l1, l2)
	}
	m = send(t, m, press("m"))
	if l1, _ := theFooter(m); len(n.muted) != 2 || n.muted[1] || strings.Contains(l1, "muted") {
		t.Errorf("second m: muted %v, footer %q", n.muted, l1)
	}
}

func TestNotifyFailuresAndNoteReachTheFooterOnce(t *testing.T) {
	t.Parallel()
	n := &fakeNotifier{status: notify.Status{Channels: []string{"hook"}}}
	m := newTestModel(t, 160, 30, sampleRuns(), app.Options{Notifier: n})
	at := testNow
	m = send(t, m, notify.Status{Channels: []string{"hook"}, Err: "notify.command notify-send: exit status 1: no display", ErrAt: at})
	if _, l2 := theFooter(m); !strings.Contains(l2, "✗ notify: notify.command notify-send: exit status 1") {
		t.Fatalf("hook failure not in the footer: %q", l2)
	}
	m = send(t, m, press("j")) // a key clears the error
	m = send(t, m, notify.Status{Channels: []string{"hook"}, Err: "notify.command notify-send: exit status 1: no display", ErrAt: at, Sent: 1})
	if _, l2 := theFooter(m); strings.Contains(l2, "notify.command") {
		t.Errorf("the same failure was shown again: %q", l2)
	}
	m = send(t, m, notify.Status{Channels: []string{"hook"}, Err: "notify.command notify-send: killed after 10s", ErrAt: at.Add(time.Minute)})
	if _, l2 := theFooter(m); !strings.Contains(l2, "killed after 10s") {
		t.Errorf("a new failure is not shown: %q", l2)
	}
	m = send(t, m, notify.Status{Channels: []string{"hook"}, Note: "desktop notifications (osc9) need tmux passthrough: tmux set -g allow-passthrough on"})
	if _, l2 := theFooter(m); !strings.Contains(l2, "allow-passthrough on") {
		t.Errorf("the passthrough note is not shown: %q", l2)
	}
}

func TestMuteWithoutChannelsSaysHowToTurnThemOn(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 160, 30, sampleRuns(), app.Options{})
	if l1, _ := theFooter(m); strings.Contains(l1, "· notify") {
		t.Errorf("footer claims notifications without a notifier: %q", l1)
	}
	m = send(t, m, press("m"))
	if _, l2 := theFooter(m); !strings.Contains(l2, "notifications are off") {
		t.Errorf("m without channels: %q", l2)
	}
}
