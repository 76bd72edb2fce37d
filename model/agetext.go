package model

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unique"
)

// ageText is a text that holds one age ("age 24m is within 30m", "acquired_at is 3m in the future", "12m
// ago"), kept as the words before and after the age and the instant it counts from, so a screen renders it
// for the instant it draws instead of showing the age the files had when they were read. Plain values, so
// the structs holding one stay comparable.
type ageText struct {
	head, tail string
	// from, the instant the age counts from, is an instant's fields in line, so ahead fits beside them.
	fromSec  int64
	fromNsec int32
	// ahead: the age is the time left until from (a timestamp in the future), which shrinks.
	ahead bool
	// was is the text as rendered when it was judged: how it is found inside longer texts built from it.
	was string
	// least, when set, is the threshold the age has passed to be said at all: an age that whole minutes
	// would word shorter than it (90 s reads "1m") reads "over 90s", so the text never contradicts the
	// rule that raised it.
	least time.Duration
}

// newAgeText builds the text for the instant now.
func newAgeText(head string, from time.Time, tail string, ahead bool, now time.Time) ageText {
	a := ageText{head: head, tail: tail, ahead: ahead}
	a.setFrom(from)
	a.was = a.render(now, HumanDuration)
	return a
}

func (a ageText) set() bool { return a.fromSec != 0 || a.fromNsec != 0 }

func (a *ageText) setFrom(t time.Time) {
	i := instantOf(t)
	a.fromSec, a.fromNsec = i.sec, i.nsec
}

// from is the instant the age counts from.
func (a ageText) from() time.Time { return instant{a.fromSec, a.fromNsec}.time() }

// newAgeTextPast is newAgeText for an age said because it passed least.
func newAgeTextPast(head string, from time.Time, tail string, least time.Duration, now time.Time) ageText {
	a := ageText{head: head, tail: tail, least: least}
	a.setFrom(from)
	a.was = a.render(now, HumanDuration)
	return a
}

// aged is an aged text held by a handle, where the text in line made every run's Attention longer though
// few runs' reasons hold an age: the dashboard holds 10,000 runs (issue 35). Equal texts share one handle,
// so an Attention holding one compares as it did with the text in line.
type aged struct{ h unique.Handle[ageText] }

func agedOf(a ageText) aged {
	if a == (ageText{}) {
		return aged{}
	}
	return aged{unique.Make(a)}
}

// get is the text (the zero text when none is held).
func (a aged) get() ageText {
	if a == (aged{}) {
		return ageText{}
	}
	return a.h.Value()
}

// instant is a time as its seconds since year 1 and its nanoseconds, smaller than a time.Time: an ageText
// holds its ahead beside them, and a run (its Attention), a lock and a problem fit a smaller size class
// (issue 35). The zero instant is the zero time. A time's location and monotonic reading are not kept:
// only the instant is read.
type instant struct {
	sec  int64
	nsec int32
}

// unixOfYear1 is the Unix seconds of the zero time.
var unixOfYear1 = time.Time{}.Unix()

func instantOf(t time.Time) instant {
	if t.IsZero() {
		return instant{}
	}
	return instant{sec: t.Unix() - unixOfYear1, nsec: int32(t.Nanosecond())}
}

// time is the instant as a time (UTC); the zero instant is the zero time.
func (i instant) time() time.Time {
	if i == (instant{}) {
		return time.Time{}
	}
	return time.Unix(i.sec+unixOfYear1, int64(i.nsec)).UTC()
}

// exactly words a threshold without rounding it: 90 s is "90s", where HumanDuration reads "1m".
func exactly(d time.Duration) string {
	if d%time.Minute != 0 && d < time.Hour {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return HumanDuration(d)
}

// at is the text for a screen drawn at now: an age reads as HumanAge words it, a time left in full.
func (a ageText) at(now time.Time) string {
	if a.ahead {
		return a.render(now, HumanDuration)
	}
	return a.render(now, HumanAge)
}

// render words the age with how; the text as judged (was, what status prints) keeps its seconds.
func (a ageText) render(now time.Time, how func(time.Duration) string) string {
	d := now.Sub(a.from())
	if a.ahead {
		d = -d
	}
	if a.least > 0 && d >= a.least && d >= time.Minute && d.Truncate(time.Minute) < a.least {
		return a.head + "over " + exactly(a.least) + a.tail
	}
	return a.head + how(max(0, d)) + a.tail
}

// within is a for a longer text s built from a's text as judged (a reason quoting a lock's reasons): the
// words around it become part of head and tail. ok is false when s does not hold it.
func (a ageText) within(s string) (ageText, bool) {
	if !a.set() || a.was == "" {
		return ageText{}, false
	}
	i := strings.LastIndex(s, a.was)
	if i < 0 {
		return ageText{}, false
	}
	b := a
	b.head, b.tail, b.was = s[:i]+a.head, a.tail+s[i+len(a.was):], s
	return b, true
}

// renderAt is s with a's age as of now when s holds a's text, else s.
func (a ageText) renderAt(s string, now time.Time) string {
	if b, ok := a.within(s); ok {
		return b.at(now)
	}
	return s
}

// ReasonsAt is the lock's reasons with their age as of now (the dashboard renders them per frame, so "age
// 24m is within 30m" keeps counting). A lock read back from JSON has its reasons as they were written.
func (l Lock) ReasonsAt(now time.Time) []string {
	if !l.age.set() {
		return l.Reasons
	}
	out := make([]string, len(l.Reasons))
	for i, r := range l.Reasons {
		out[i] = l.age.renderAt(r, now)
	}
	return out
}

// MessageAt is the message of the run's problem p with the age it quotes (a lock's reason, a gate's detail)
// as of now. The age is found in the run's locks and gates when asked, not kept in each problem: the
// dashboard holds every run's problems, and renders those of the one run it details (issue 35).
func (r *Run) MessageAt(p Problem, now time.Time) string {
	var age ageText
	for _, l := range r.Locks {
		if l.Path == p.Path {
			if a, ok := l.age.within(p.Message); ok {
				age = a
			}
		}
	}
	for _, g := range r.Gates {
		if a, ok := g.age.within(p.Message); ok {
			age = a
		}
	}
	if !age.set() {
		return p.Message
	}
	return age.at(now)
}

// DetailAt is the gate's detail with its age as of now ("measured 12m ago").
func (g Gate) DetailAt(now time.Time) string {
	if !g.age.set() {
		return g.Detail
	}
	return g.age.at(now)
}

// AgeFrom is the instant the gate detail's age counts from (zero: it holds none).
func (g Gate) AgeFrom() time.Time { return g.age.from() }

// SetDetailAged sets the gate's detail to head + the age of from (as of now) + tail, rendered again at any
// instant by DetailAt.
func (g *Gate) SetDetailAged(head string, from time.Time, tail string, now time.Time) {
	g.age = newAgeText(head, from, tail, from.After(now), now)
	g.Detail = g.age.was
}

// CrashSignsAt is the run's crash signs with the ages they quote (a lock's reasons) as of now.
func (r *Run) CrashSignsAt(now time.Time) []string {
	out := r.CrashSigns
	copied := false
	for _, l := range r.Locks {
		if !l.age.set() || len(out) == 0 {
			continue
		}
		if !copied {
			out, copied = slices.Clone(r.CrashSigns), true
		}
		for i := range out {
			out[i] = l.age.renderAt(out[i], now)
		}
	}
	return out
}

// lockAged lets an attention reason that quotes a lock's reasons render the lock's age at any instant.
func lockAged(at Attention, l Lock) Attention {
	if a, ok := deadPIDAge(l); ok && a.set() && at.Reason == a.was {
		at.age = agedOf(a)
	} else if a, ok := l.age.within(at.Reason); ok {
		at.age = agedOf(a)
	}
	return at
}
