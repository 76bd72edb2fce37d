package ui

import (
	"sort"
	"sync"
	"testing"
	"time"

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

// An idle dashboard wakes exactly when what it shows changes with time, and never otherwise: each wake-up
// it schedules draws a different frame, and the frame just before each wake-up is still the last one drawn
// (no age shown wrong while it sleeps). Ages in seconds tick each second, then each minute; past two days
// (ages in days and hours) each hour.
func TestIdleDashboardWakesOnlyWhenWhatItShowsChanges(t *testing.T) {
	clock := &fakeClock{now: testNow}
	var sent []tea.Msg
	var sentMu sync.Mutex
	m := newTestModel(t, 160, 40, sampleRuns(), Options{Clock: clock, Now: clock.Now, Send: func(msg tea.Msg) {
		sentMu.Lock()
		sent = append(sent, msg)
		sentMu.Unlock()
	}})
	frame := plain(m)

	wakes := func(until time.Time) int {
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
			clock.set(a.at.Add(-1))
			if got := plain(m); got != frame {
				t.Fatalf("at %v, just before the wake-up set for %v, the frame had already changed: an age was wrong while it slept\nbefore:\n%s\nnow:\n%s",
					a.at.Add(-1).Sub(testNow), a.at.Sub(testNow), frame, got)
			}
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
			frame = got
			n++
		}
	}

	// The footer says "updated 3s ago": seconds until it reads "1m", then each age shown (four rows, the
	// footer, the detail's running stage and lock: each with its own phase within the minute) once a minute.
	// A clock ticking each second would have woken 10,800 times.
	const ages = 7
	first := wakes(testNow.Add(3 * time.Hour))
	if limit := 57 + ages*3*60; first > limit {
		t.Errorf("3 idle hours took %d wake-ups; %d ages in minutes need at most %d", first, ages, limit)
	}
	// Three days on, everything shown is days and hours old: each age once an hour.
	clock.set(testNow.Add(72 * time.Hour))
	m = send(t, m, tickMsg(clock.Now()))
	frame = plain(m)
	if later := wakes(testNow.Add(72*time.Hour + 24*time.Hour)); later > ages*24 {
		t.Errorf("a day of ages in days took %d wake-ups, want at most %d (each age once an hour)", later, ages*24)
	}
	t.Logf("%d alarms set in all", clock.scheduled)
}

// Before any run is read nothing on screen changes with time: no wake-up is set at all.
func TestDashboardShowingNothingTimedSetsNoAlarm(t *testing.T) {
	clock := &fakeClock{now: testNow}
	m := New(Options{Clock: clock, Theme: "mono", Send: func(tea.Msg) {}})
	m = send(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	for range 3 {
		_ = plain(m)
	}
	if clock.scheduled != 0 {
		t.Errorf("a dashboard scanning its roots set %d alarms; nothing it shows changes with time", clock.scheduled)
	}
}
