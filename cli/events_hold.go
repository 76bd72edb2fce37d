package cli

import (
	"time"

	"runwatch/watch"
)

// updateHold spaces out the local watcher's updates that events writes for a runwatch following it over
// ssh (remote.StdinLinkEnv): the first after a quiet spell goes out at once, the ones within every of the
// last write are merged into one that goes out when every has passed, so a run whose log floods is sent at
// most once an every, in its latest state, with the log's new entries in one line (issue 35: a host whose
// logs took 2,000 lines a second sent a dashboard its runs ~20 times a second each, every line decoded).
type updateHold struct {
	every   time.Duration
	last    time.Time // when an update last went out
	pending *watch.Update
	timer   *time.Timer
}

func newUpdateHold(every time.Duration) *updateHold { return &updateHold{every: every} }

// add takes an update that came at now: it is returned to write now (ok), or held.
func (h *updateHold) add(u watch.Update, now time.Time) (watch.Update, bool) {
	if h.pending == nil && now.Sub(h.last) >= h.every {
		h.last = now
		return u, true
	}
	if h.pending == nil {
		h.pending = &u
		h.timer = time.NewTimer(h.last.Add(h.every).Sub(now))
		return watch.Update{}, false
	}
	h.pending.Merge(u)
	return watch.Update{}, false
}

// due is ready when the held update is to go out (take it with flush); nil, never ready, when none is held.
func (h *updateHold) due() <-chan time.Time {
	if h == nil || h.timer == nil {
		return nil
	}
	return h.timer.C
}

// flush returns the held update, merged, to write now.
func (h *updateHold) flush(now time.Time) watch.Update {
	u := *h.pending
	h.pending, h.timer, h.last = nil, nil, now
	return u
}
