// The wiring from the watchers to the program: each watch.Update becomes one BatchMsg, so the dashboard
// redraws once per batch.

package ui

import (
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/remote"
	"runwatch/ui/app"
	"runwatch/watch"
)

// Relay is the one goroutine that moves a watcher's runs into a program: the snapshot first, with the health
// the watcher set up (a fallback to polling or a missing root shows from the first frame), then one message
// per batch. It returns when the watcher's Updates channel closes. Each observer (the notifier) sees every
// batch, in order, before the program does; an observer must not block.
func Relay(p *tea.Program, w *watch.Watcher, observers ...func(watch.Update)) {
	p.Send(app.SnapshotMsg{Runs: w.Snapshot(), Health: healthFrom(w.Health()), At: time.Now()})
	for u := range w.Updates() {
		for _, o := range observers {
			o(u)
		}
		p.Send(FromWatch(u))
	}
	// The channel closes when the watcher stops. If the program is still running, what it shows is no
	// longer live, and the footer must say so rather than keep counting "updated Ns ago" as if it were.
	p.Send(app.WatcherStoppedMsg{})
}

// FromWatch converts a watcher batch into the dashboard's message.
func FromWatch(u watch.Update) app.BatchMsg {
	b := app.BatchMsg{
		Changed: u.Changed, Removed: u.Removed, At: u.At,
		Health: healthFrom(u.Health),
	}
	for _, a := range u.Appended {
		b.Appended = append(b.Appended, app.LogAppend{Path: a.Path, Entries: a.Entries, Truncated: a.Truncated, Rotated: a.Rotated})
	}
	return b
}

func healthFrom(h watch.Health) app.Health {
	return app.Health{Mode: h.Mode, Err: h.Err, LastChange: h.LastChange, Watches: h.Watches, Loading: h.Loading}
}

// remoteBatchEvery is how often at most the hosts' batches reach the screen while they keep coming: the
// local watcher's pace too (watch's maxWait).
const remoteBatchEvery = 50 * time.Millisecond

// RelayRemote moves a remote watcher's batches into the program, as Relay does for the local one. Each
// host's failure reaches the footer's message line once, when it first happens.
func RelayRemote(p *tea.Program, w *remote.Watcher, observers ...func(watch.Update)) {
	said := map[string]string{}
	var news []error // the hosts' failures first seen in the batches taken, said after them
	take := func(u remote.Update) {
		for _, o := range observers {
			o(u.Update)
		}
		for _, h := range u.Hosts {
			if h.Error != "" && said[h.Host] != h.Error {
				news = append(news, errors.New(h.Error))
			}
			said[h.Host] = h.Error
		}
	}
	updates := w.Updates()
	var sent time.Time
	for u := range updates {
		take(u)
		// The batches that come while the screen takes one, or less than remoteBatchEvery after the last went,
		// go to it as one: each costs it a re-sort and a frame over every run it holds, the hosts' first runs
		// come a pipe's read at a time (at 8 hosts of 1,000 runs, hundreds of batches of a dozen runs each),
		// and a host whose logs flood sent a batch a line (2,000 a second: a fifth of a core; issue 35). The
		// first batch after a quiet spell goes at once.
		due := time.NewTimer(max(0, time.Until(sent.Add(remoteBatchEvery))))
		for more := true; more; {
			select {
			case v, ok := <-updates:
				if !ok {
					more = false
					break
				}
				take(v)
				u.Merge(v)
			case <-due.C:
				more = false
			}
		}
		due.Stop()
		sent = time.Now()
		b := FromWatch(u.Update)
		b.Health = app.Health{}
		b.Hosts = u.Hosts
		if b.Hosts == nil {
			b.Hosts = []model.HostHealth{}
		}
		p.Send(b)
		for _, err := range news {
			p.Send(app.ErrorMsg{Err: err})
		}
		news = news[:0]
	}
}
