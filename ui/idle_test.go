// Tests that an idle dashboard wakes only when what it shows changes with time.

package ui

import (
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/ui/app"

	tea "charm.land/bubbletea/v2"
)

// fakeClock is a Clock whose time moves only when the test says, and which counts every wake-up asked of it.
type fakeClock struct {
	mu        sync.Mutex
	now       time.Time
	pending   []*fakeAlarm
	scheduled int
}

type fakeAlarm struct {
	at      time.Time
	f       func()
	stopped bool
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := &fakeAlarm{at: c.now.Add(d), f: f}
	c.pending = append(c.pending, a)
	c.scheduled++
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !a.stopped
		a.stopped = true
		return was
	}
}

// next takes the earliest alarm still set, nil when there is none.
func (c *fakeClock) next() *fakeAlarm {
	c.mu.Lock()
	defer c.mu.Unlock()
	var live []*fakeAlarm
	for _, a := range c.pending {
		if !a.stopped {
			live = append(live, a)
		}
	}
	sort.Slice(live, func(i, j int) bool { return live[i].at.Before(live[j].at) })
	if len(live) == 0 {
		c.pending = nil
		return nil
	}
	c.pending = live[1:]
	return live[0]
}

// An idle dashboard wakes only when what it shows changes with time, and never otherwise: each wake-up it
// schedules draws a different frame, and no frame stays on screen more than half a unit of what it shows
// after it went out of date (an age in seconds at most half a second late, in minutes half a minute: one
// wake-up serves every age that changed meanwhile). A dashboard ticking each second wakes 10,800 times in
// 3 hours.
func TestIdleDashboardWakesOnlyWhenWhatItShowsChanges(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: testNow}
	var sent []tea.Msg
	var sentMu sync.Mutex
	m := newTestModel(t, 160, 40, sampleRuns(), app.Options{Clock: clock, Now: clock.Now, Send: func(msg tea.Msg) {
		sentMu.Lock()
		sent = append(sent, msg)
		sentMu.Unlock()
	}})
	frame := plain(m)
	drawnAt := clock.Now()

	// wakes fires every alarm up to until; unit(t) is the finest unit shown at t (an eighth of it is the
	// step at which the frame's going out of date is looked for).
	wakes := func(until time.Time, unit func(time.Time) time.Duration) int {
		n := 0
		for {
			a := clock.next()
			if a == nil || a.at.After(until) {
				if a != nil {
					clock.mu.Lock()
					clock.pending = append(clock.pending, a)
					clock.mu.Unlock()
				}
				return n
			}
			// The first probe instant at which the frame on screen no longer tells the truth (probing draws
			// frames the program never would: they must not move the alarm).
			keep := m.app.Opts.Send
			m.app.Opts.Send = nil
			probe := unit(drawnAt) / 8
			for at := drawnAt.Add(probe); at.Before(a.at); at = at.Add(probe) {
				clock.set(at)
				if plain(m) != frame {
					if late := a.at.Sub(at); late > unit(at)/2+probe {
						t.Fatalf("the frame drawn at %v was out of date by %v and the wake-up came %v later (unit %v)",
							drawnAt.Sub(testNow), at.Sub(testNow), late, unit(at))
					}
					break
				}
			}
			m.app.Opts.Send = keep
			clock.set(a.at)
			a.f()
			sentMu.Lock()
			msgs := sent
			sent = nil
			sentMu.Unlock()
			if len(msgs) != 1 {
				t.Fatalf("a wake-up sent %d messages, want 1 tick", len(msgs))
			}
			m = send(t, m, msgs[0])
			got := plain(m)
			if got == frame {
				t.Fatalf("the wake-up at %v drew the same frame: nothing shown had changed\n%s", a.at.Sub(testNow), got)
			}
			frame, drawnAt = got, a.at
			n++
		}
	}

	// The footer says "updated <1m ago" (an age under a minute has no seconds to count), and every age shown
	// reads in minutes (four rows, the footer, the detail's running stage and lock, each with its own phase
	// in the minute). The first minute after a change, when a screen of seconds would wake each second (and
	// Bubble Tea's renderer tick thirty frames after each), wakes only as those minutes turn.
	minute := func(time.Time) time.Duration { return time.Minute }
	if early := wakes(testNow.Add(time.Minute), minute); early > 4 {
		t.Errorf("the first minute after a change took %d wake-ups; ages in minutes need at most 4", early)
	}
	first := wakes(testNow.Add(3*time.Hour), minute)
	if limit := 2 * 3 * 60; first > limit {
		t.Errorf("3 idle hours took %d wake-ups; ages in minutes need at most %d", first, limit)
	}
	// Three days on, everything shown is days and hours old: at most twice an hour.
	clock.set(testNow.Add(72 * time.Hour))
	m = send(t, m, app.TickMsg(clock.Now()))
	frame, drawnAt = plain(m), clock.Now()
	hour := func(time.Time) time.Duration { return time.Hour }
	if later := wakes(testNow.Add(72*time.Hour+24*time.Hour), hour); later > 2*24+1 {
		t.Errorf("a day of ages in days took %d wake-ups, want at most %d (two an hour)", later, 2*24+1)
	}
}

// Before any run is read nothing on screen changes with time: no wake-up is set at all.
func TestDashboardShowingNothingTimedSetsNoAlarm(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: testNow}
	m := New(app.Options{Clock: clock, Theme: "mono", Send: func(tea.Msg) {}})
	m = send(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	for range 3 {
		_ = plain(m)
	}
	if clock.scheduled != 0 {
		t.Errorf("a dashboard scanning its roots set %d alarms; nothing it shows changes with time", clock.scheduled)
	}
}

// A host reconnecting counts down to its next try in the footer: in seconds that drew a frame a second for
// as long as the host stayed down (what that cost, measured by bench/fleet, is in docs/BENCHMARKS.md).
// Under a minute the countdown reads "<1m": its 45 seconds set no alarm.
func TestReconnectingHostSetsNoAlarmASecond(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: testNow}
	m := newTestModel(t, 160, 40, nil, app.Options{Clock: clock, Now: clock.Now, Send: func(tea.Msg) {}})
	retry := testNow.Add(45 * time.Second)
	m = send(t, m, app.BatchMsg{At: testNow, Health: app.Health{Mode: "inotify"},
		Hosts: []model.HostHealth{{Host: "gpu2", State: model.HostReconnecting, RetryAt: &retry}}})
	if frame := plain(m); !strings.Contains(frame, "gpu2 reconnecting in <1m") {
		t.Fatalf("the footer does not say gpu2 is reconnecting:\n%s", frame)
	}
	for a := clock.next(); a != nil && a.at.Before(retry); a = clock.next() {
		t.Errorf("an alarm at +%v while gpu2 reconnects in under a minute", a.at.Sub(testNow))
	}
}
