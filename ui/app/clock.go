// The dashboard's clock: the one wake-up per frame at the earliest moment something drawn changes by time
// alone, and the ages, countdowns and ETAs worded from it.

package app

import (
	"fmt"
	"sync"
	"time"

	"runwatch/model"
)

// Clock is the dashboard's one source of time: what time it is, and a wake-up when time passing changes
// what is drawn. Nothing in ui reads the system clock or starts a timer of its own for what it shows.
//
// How the dashboard stays idle: whatever draws text that time alone changes (an age, a countdown, a message
// that expires, a verdict that flips when a run has been quiet long enough) says when that text will read
// differently, with app.changesAt, while it draws. After each frame one alarm is set for the earliest such
// instant, on this clock, and nothing else: a screen of ages in minutes wakes once a minute, one with nothing
// that time changes never wakes, and a re-judging rule as coarse as an hour costs one wake-up an hour.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed; stop keeps it from being called if it has
	// not been yet.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now() }
func (SystemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// alarm is the one pending wake-up: a tickMsg sent into the program at the earliest instant something drawn
// in the last frame changes.
type alarm struct {
	mu   sync.Mutex
	at   time.Time
	stop func() bool
	// wanted is the earliest change the frame being drawn registered; zero while none did.
	wanted time.Time
}

// ChangesAt says that something being drawn reads differently from at on. Only draws call it.
func (a *App) ChangesAt(at time.Time) { a.ChangesWithin(at, 0) }

// ChangesWithin is changesAt for a text that may be drawn up to slack late. One wake-up then serves every
// text whose change fell due before it: a screen of ages in seconds, each with its own phase within the
// second, wakes at most twice a second, not once per age.
func (a *App) ChangesWithin(at time.Time, slack time.Duration) {
	if at.IsZero() {
		return
	}
	due := at.Add(slack)
	if w := a.alarm.wanted; w.IsZero() || due.Before(w) {
		a.alarm.wanted = due
	}
}

// AgeChanges registers an age of d (now) shown by HumanAge: it reads differently at the end of its unit
// (under a minute, at the minute), and may lag by half a unit. (Not a whole one: woken just before its next
// change, it would wake again just after, and a count of minutes would step by two.)
func (a *App) AgeChanges(now time.Time, d time.Duration) {
	a.ChangesWithin(now.Add(model.HumanAgeGrows(d)), model.HumanDurationUnit(d)/2)
}

// Age is HumanAge of the time since t, registered to be drawn again when it reads differently.
func (a *App) Age(now, t time.Time) string { return a.Growing(now, now.Sub(t), true) }

// Growing is a duration that grows with the clock while running (a stage not yet completed): HumanAge while
// it grows, registered to be drawn again when it reads differently; HumanDuration once it has stopped.
func (a *App) Growing(now time.Time, d time.Duration, running bool) string {
	if running {
		a.AgeChanges(now, d)
		return model.HumanAge(d)
	}
	return model.HumanDuration(d)
}

// Countdown is HumanAge of the time left until t (never below 0), registered likewise: under a minute it
// reads "<1m" and does not change. A host reconnecting in a countdown of seconds drew a frame each second
// for as long as it stayed down (what that cost, measured by bench/fleet, is in docs/BENCHMARKS.md).
func (a *App) Countdown(now, t time.Time) string {
	d := max(0, t.Sub(now))
	if d >= time.Minute {
		a.ChangesWithin(now.Add(model.HumanDurationShrinks(d)), model.HumanDurationUnit(d)/2)
	}
	return model.HumanAge(d)
}

// BeginFrame forgets what the last frame registered; endFrame sets the alarm for what this one did.
func (a *App) BeginFrame() { a.alarm.wanted = time.Time{} }

func (a *App) EndFrame() {
	send := a.Opts.Send
	if send == nil {
		return // no program to wake (tests drive the model by hand)
	}
	al := &a.alarm
	al.mu.Lock()
	defer al.mu.Unlock()
	want := al.wanted
	if want.Equal(al.at) {
		return
	}
	if al.stop != nil {
		al.stop()
		al.stop = nil
	}
	al.at = want
	if want.IsZero() {
		return
	}
	clock := a.Opts.Clock
	al.stop = clock.AfterFunc(max(0, want.Sub(clock.Now())), func() {
		al.mu.Lock()
		fired := al.at.Equal(want)
		if fired {
			al.at, al.stop = time.Time{}, nil
		}
		al.mu.Unlock()
		if fired {
			send(TickMsg(want))
		}
	})
}

// ETAText words an ETA with what it rests on: "~25m left by 9 past runs".
func ETAText(left time.Duration, runs int) string {
	by := fmt.Sprintf("%d past runs", runs)
	if runs == 1 {
		by = "1 past run"
	}
	return "~" + model.HumanDuration(left) + " left by " + by
}
