// Package notify tells a person when a run newly needs them: it turns the runs the watcher re-reads into
// transitions (a run entering needing attention, or completing), holds them back while a run flaps,
// collects a burst into one summary, and delivers through the channels configured (terminal bell, desktop
// notification by escape sequence, tmux display-message, a command hook).
//
// Whether a run needs a person is never decided here: it is model.Run.Attention, judged once per read by
// model.FinalizeRun. This package only decides when a change of that judgement is news.
package notify

import (
	"time"

	"runwatch/model"
	"runwatch/watch"
)

// Kind is what a transition tells.
type Kind string

const (
	// KindAttention: the run entered needing a person (run.Attention.NeedsYou), for run.Attention.Code.
	KindAttention Kind = "attention"
	// KindCompleted: the run completed (only when the tracker is asked to report completions).
	KindCompleted Kind = "completed"
)

// DefaultHold is how long a run must stay out of a state before entering it again is news: a run that
// flaps (a lock judged stale, then live, then stale) within it notifies once.
const DefaultHold = 10 * time.Second

// Transition is one run entering a state worth telling someone about.
type Transition struct {
	Kind Kind
	// Run is the run as read when it entered; Run.Attention says why and what settles it.
	Run model.Run
	At  time.Time
}

// Tracker finds transitions in a stream of runs. It is not safe for concurrent use; times are passed in,
// so tests drive it with an invented clock.
type Tracker struct {
	// Hold is the flap window (DefaultHold when zero).
	Hold time.Duration
	// Completions makes a run that completes a transition too.
	Completions bool

	runs map[string]*runState // by Run.Key: two hosts' runs can share a state path
}

// runState remembers, per state code a run was in, when it left it: zero while it is still there. A code
// left longer than Hold ago is forgotten, so entering it again is a new episode. A slice, not a map: a run
// is in a code or two, and a map of one cost ~340 bytes more a run (the dashboard holds 10,000, issue 35).
type runState struct {
	episodes []episode
}

type episode struct {
	code string
	left time.Time
}

// enter records that the run is in code now.
func (s *runState) enter(code string) {
	for i := range s.episodes {
		if s.episodes[i].code == code {
			s.episodes[i].left = time.Time{}
			return
		}
	}
	s.episodes = append(s.episodes, episode{code: code})
}

func (s *runState) left(code string) (time.Time, bool) {
	for _, e := range s.episodes {
		if e.code == code {
			return e.left, true
		}
	}
	return time.Time{}, false
}

func (t *Tracker) hold() time.Duration {
	if t.Hold > 0 {
		return t.Hold
	}
	return DefaultHold
}

// episode is the state code of a run that is worth a notification while it lasts, or "".
func (t *Tracker) episode(r model.Run) (string, Kind) {
	switch {
	case r.Attention.NeedsYou && r.Attention.Code != "":
		return r.Attention.Code, KindAttention
	case t.Completions && r.Attention.Code == model.AttentionCompleted:
		return model.AttentionCompleted, KindCompleted
	}
	return "", ""
}

// Prime records the runs found at start-up as they are, without transitions: what was already wrong
// before runwatch looked is not news (unless the caller asks for it, by observing them instead).
func (t *Tracker) Prime(runs []model.Run, now time.Time) {
	for _, r := range runs {
		st := t.state(r.Key())
		if code, _ := t.episode(r); code != "" {
			st.enter(code)
		}
	}
}

// Observe takes one re-read run and returns the transition it makes, if any. A run not seen before (a new
// run root) that already needs a person is a transition: it was not there when runwatch started.
func (t *Tracker) Observe(r model.Run, now time.Time) (Transition, bool) {
	st := t.state(r.Key())
	code, kind := t.episode(r)
	kept := st.episodes[:0]
	for _, e := range st.episodes {
		switch {
		case e.code == code:
		case e.left.IsZero():
			e.left = now // it left e.code just now
		case now.Sub(e.left) >= t.hold():
			continue // forgotten
		}
		kept = append(kept, e)
	}
	clear(st.episodes[len(kept):])
	st.episodes = kept
	if code == "" {
		return Transition{}, false
	}
	left, seen := st.left(code)
	st.enter(code)
	if seen && (left.IsZero() || now.Sub(left) < t.hold()) {
		return Transition{}, false // still in it, or back within the flap window: the same episode
	}
	return Transition{Kind: kind, Run: r, At: now}, true
}

// Remove forgets a run that went away.
func (t *Tracker) Remove(key string) { delete(t.runs, key) }

// Apply takes one watcher batch in order (removed, then changed) and returns its transitions.
func (t *Tracker) Apply(u watch.Update, now time.Time) []Transition {
	for _, sp := range u.Removed {
		t.Remove(sp)
	}
	var out []Transition
	for _, r := range u.Changed {
		if tr, ok := t.Observe(*r, now); ok {
			out = append(out, tr)
		}
	}
	return out
}

func (t *Tracker) state(sp string) *runState {
	if t.runs == nil {
		t.runs = map[string]*runState{}
	}
	st, ok := t.runs[sp]
	if !ok {
		st = &runState{}
		t.runs[sp] = st
	}
	return st
}
