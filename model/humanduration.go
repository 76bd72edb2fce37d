package model

import "time"

// When HumanDuration's text changes. A screen that shows "3h12m ago" needs drawing again in under a minute,
// "45s ago" in under a second and "3d4h ago" in under an hour; one that wakes more often than what it shows
// changes costs power for nothing, and one that wakes less shows a wrong age. These say exactly when.

// HumanDurationUnit is the smallest step HumanDuration shows for a duration of d: a second, a minute or
// an hour. A screen may show such a text up to one unit late and still be as right as the text can be.
func HumanDurationUnit(d time.Duration) time.Duration {
	if d < 0 {
		d = -d
	}
	return humanUnit(d)
}

// humanUnit is the smallest step HumanDuration shows for a duration of d (d ≥ 0).
func humanUnit(d time.Duration) time.Duration {
	switch {
	case d < time.Minute:
		return time.Second
	case d < 48*time.Hour:
		return time.Minute
	}
	return time.Hour
}

// HumanDurationGrows is how long a growing duration (an age) of d takes to read differently in
// HumanDuration: the rest of its current unit. Every unit's range starts at a multiple of the unit below it,
// so the step into the next range is the end of a unit too.
func HumanDurationGrows(d time.Duration) time.Duration {
	if d < 0 {
		// HumanDuration shows |d|: a negative one shrinks towards 0 as it grows.
		return HumanDurationShrinks(-d)
	}
	u := humanUnit(d)
	return u - d%u
}

// HumanDurationShrinks is how long a shrinking duration (a countdown) of d takes to read differently: just
// past the start of its current unit. Under a second it reads "0s" down to 0 and never changes: 0.
func HumanDurationShrinks(d time.Duration) time.Duration {
	if d < time.Second {
		return 0
	}
	return d%humanUnit(d) + 1
}

// HumanAge is how the dashboard words an age, the time since something was seen: HumanDuration, except
// that under a minute it reads "<1m". What an age tells (fresh, or gone quiet) the seconds do not; and a
// text that changes every second costs the terminal a frame every second (Bubble Tea's renderer then ticks
// half a second after each, thirty frames for one), in the first minute after every change. status, a
// snapshot, keeps its seconds.
func HumanAge(d time.Duration) string {
	if d >= 0 && d < time.Minute {
		return "<1m"
	}
	return HumanDuration(d)
}

// HumanAgeGrows is how long an age of d takes to read differently in HumanAge (HumanDurationGrows for it).
func HumanAgeGrows(d time.Duration) time.Duration {
	switch {
	case d >= 0 && d < time.Minute:
		return time.Minute - d
	case d < 0 && d > -time.Second:
		return -d // "0s" until it reaches 0 and reads "<1m"
	}
	return HumanDurationGrows(d)
}

// humanWidth is len(HumanDuration(d)) without building the text.
func humanWidth(d time.Duration) int {
	if d < 0 {
		d = -d
	}
	switch {
	case d < time.Minute:
		return digits(int64(d/time.Second)) + 1
	case d < time.Hour:
		return digits(int64(d/time.Minute)) + 1
	case d < 48*time.Hour:
		return digits(int64(d/time.Hour)) + digits(int64(d%time.Hour/time.Minute)) + 2
	}
	return digits(int64(d/(24*time.Hour))) + digits(int64(d%(24*time.Hour)/time.Hour)) + 2
}

func digits(n int64) int {
	w := 1
	for n >= 10 {
		n /= 10
		w++
	}
	return w
}

// widthStep is how long a growing duration d ≥ 0 takes to reach the next instant at which humanWidth may
// change: a digit more or fewer in one of its numbers, or the next unit's range.
func widthStep(d time.Duration) time.Duration {
	next := func(at time.Duration) time.Duration { return at - d }
	switch {
	case d < 10*time.Second:
		return next(10 * time.Second)
	case d < time.Minute:
		return next(time.Minute)
	case d < 10*time.Minute:
		return next(10 * time.Minute)
	case d < time.Hour:
		return next(time.Hour)
	case d < 48*time.Hour:
		h := d.Truncate(time.Hour)
		if d-h < 10*time.Minute {
			return next(h + 10*time.Minute)
		}
		return next(h + time.Hour)
	}
	const day = 24 * time.Hour
	dd := d.Truncate(day)
	if d-dd < 10*time.Hour {
		return next(dd + 10*time.Hour)
	}
	return next(dd + day)
}

// HumanWidthGrows is how long a growing duration of d takes until HumanDuration's text has another width
// (a column sized to its widest cell may change), at most limit.
func HumanWidthGrows(d, limit time.Duration) time.Duration {
	return humanWidthUntil(d, limit, func(w0, w int) bool { return w != w0 })
}

// HumanWidthExceeds is how long a growing duration of d takes until HumanDuration's text is wider than w;
// ok is false when that is not within limit.
func HumanWidthExceeds(d time.Duration, w int, limit time.Duration) (time.Duration, bool) {
	t := humanWidthUntil(d, limit, func(_, now int) bool { return now > w })
	return t, t < limit
}

func humanWidthUntil(d, limit time.Duration, done func(was, now int) bool) time.Duration {
	if d < 0 {
		return 0 // a negative age is shown as its size; rare enough (clock skew) to look again at once
	}
	w0 := humanWidth(d)
	var waited time.Duration
	for waited < limit {
		step := widthStep(d)
		d += step
		waited += step
		if done(w0, humanWidth(d)) {
			return min(waited, limit)
		}
	}
	return limit
}
