package watch

import (
	"sync"

	"runwatch/model"
	"runwatch/state/runlog"
)

// outbox hands Updates to the reader without ever blocking the watcher: an Update not yet taken absorbs
// the next one.
type outbox struct {
	mu      sync.Mutex
	pending *Update
	notify  chan struct{}
	taken   chan struct{} // signalled by take, for waitTaken
}

func (o *outbox) put(u Update) {
	o.mu.Lock()
	if o.pending == nil {
		o.pending = &u
	} else {
		o.pending.Merge(u)
	}
	o.mu.Unlock()
	select {
	case o.notify <- struct{}{}:
	default:
	}
}

func (o *outbox) take() (Update, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending == nil {
		return Update{}, false
	}
	u := *o.pending
	o.pending = nil
	select {
	case o.taken <- struct{}{}:
	default:
	}
	return u, true
}

// waitTaken returns once the reader has taken what was put, or done is closed.
func (o *outbox) waitTaken(done <-chan struct{}) {
	for {
		o.mu.Lock()
		empty := o.pending == nil
		o.mu.Unlock()
		if empty {
			return
		}
		select {
		case <-o.taken:
		case <-done:
			return
		}
	}
}

func (w *Watcher) send() {
	defer w.wg.Done()
	for {
		select {
		case <-w.done:
			return
		case <-w.out.notify:
		}
		u, ok := w.out.take()
		if !ok {
			continue
		}
		select {
		case w.updates <- u:
		case <-w.done:
			return
		}
	}
}

// Merge folds a later Update into this one so that applying the result equals applying both in order.
func (u *Update) Merge(later Update) {
	for _, sp := range later.Removed {
		u.Changed = slicesDeleteRun(u.Changed, sp)
		u.Removed = append(u.Removed, sp)
	}
	for _, r := range later.Changed {
		u.Changed = slicesDeleteRun(u.Changed, r.StatePath)
		u.Changed = append(u.Changed, r)
	}
	for _, a := range later.Appended {
		last := -1
		for i := range u.Appended {
			if u.Appended[i].Path == a.Path {
				last = i
			}
		}
		if last < 0 || a.Truncated || a.Rotated {
			// A reset starts a new run of entries; it must stay after what came before it.
			u.Appended = append(u.Appended, a)
			continue
		}
		merged := &u.Appended[last]
		merged.Entries = runlog.Append(merged.Entries, a.Entries)
		merged.Skipped += a.Skipped
		if over := len(merged.Entries) - maxPendingEntries; over > 0 {
			// A reader that stopped reading must not make the watcher's memory grow with the log.
			merged.Entries = append([]model.LogEntry(nil), merged.Entries[over:]...)
			merged.Skipped += over
		}
	}
	u.Health = later.Health
	u.At = later.At
	u.Initial = u.Initial && later.Initial
}

func slicesDeleteRun(runs []*model.Run, sp string) []*model.Run {
	out := runs[:0]
	for _, r := range runs {
		if r.StatePath != sp {
			out = append(out, r)
		}
	}
	return out
}
