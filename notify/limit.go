package notify

import "time"

// Defaults of the Limiter.
const (
	// DefaultSettle is how long transitions are collected before they go out: runs that break together
	// (one liveness check finds fifty dead pids; a script touches fifty runs) arrive within it and become
	// one summary instead of fifty notifications.
	DefaultSettle = time.Second
	// DefaultBurst notifications may go out at once; after that one more every DefaultRefill.
	DefaultBurst  = 3
	DefaultRefill = 20 * time.Second
)

// Limiter turns transitions into notifications a person can bear: it waits Settle after the first pending
// transition, then sends each one by itself when the budget allows, else one summary of all of them. The
// budget is a token bucket (Burst tokens, one back every Refill): a steady trickle of transitions becomes a
// summary every Refill rather than a notification every few seconds. Nothing is ever dropped: a summary
// names every run it covers. Not safe for concurrent use; times are passed in.
type Limiter struct {
	Settle time.Duration
	Burst  int
	Refill time.Duration

	pending    []Transition
	firstAt    time.Time
	tokens     int
	refilledAt time.Time
	started    bool
}

func (l *Limiter) settle() time.Duration {
	if l.Settle > 0 {
		return l.Settle
	}
	return DefaultSettle
}

func (l *Limiter) burst() int {
	if l.Burst > 0 {
		return l.Burst
	}
	return DefaultBurst
}

func (l *Limiter) refill() time.Duration {
	if l.Refill > 0 {
		return l.Refill
	}
	return DefaultRefill
}

// Add queues transitions seen at now.
func (l *Limiter) Add(ts []Transition, now time.Time) {
	if len(ts) == 0 {
		return
	}
	if len(l.pending) == 0 {
		l.firstAt = now
	}
	l.pending = append(l.pending, ts...)
}

// Pending is the number of transitions waiting.
func (l *Limiter) Pending() int { return len(l.pending) }

// Due is when Flush next has something to send; false when nothing is pending.
func (l *Limiter) Due() (time.Time, bool) {
	if len(l.pending) == 0 {
		return time.Time{}, false
	}
	at := l.firstAt.Add(l.settle())
	if l.started && l.tokens == 0 {
		if next := l.refilledAt.Add(l.refill()); next.After(at) {
			at = next
		}
	}
	return at, true
}

func (l *Limiter) topUp(now time.Time) {
	if !l.started {
		l.started, l.tokens, l.refilledAt = true, l.burst(), now
		return
	}
	if l.tokens >= l.burst() {
		l.refilledAt = now
		return
	}
	n := int(now.Sub(l.refilledAt) / l.refill())
	if n <= 0 {
		return
	}
	l.tokens = min(l.burst(), l.tokens+n)
	l.refilledAt = l.refilledAt.Add(time.Duration(n) * l.refill())
}

// Flush returns the notifications due at now: each pending transition alone when the budget covers them
// all, else one summary of them all. Before Due it returns nothing.
func (l *Limiter) Flush(now time.Time) []Notification {
	due, ok := l.Due()
	if !ok || now.Before(due) {
		return nil
	}
	l.topUp(now)
	if l.tokens == 0 {
		return nil
	}
	pending := l.pending
	l.pending = nil
	if len(pending) <= l.tokens {
		l.tokens -= len(pending)
		out := make([]Notification, len(pending))
		for i, tr := range pending {
			out[i] = Notification{At: now, Items: []Transition{tr}}
		}
		return out
	}
	l.tokens--
	return []Notification{{At: now, Items: pending}}
}
