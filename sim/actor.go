package sim

import (
	"errors"
	"time"
)

// An actor is one writer: it performs one write at a time and says how long to wait before the next, in
// simulated seconds at speed 1. The same actor drives a live run (real clock, real sleeps scaled by the speed
// factor) and builds a run's history at workspace creation (a fake clock, no sleeping), so every file a
// scenario holds was produced by the same writer code the live simulation uses.
type actor interface {
	// step performs the next write at time at. It returns the pause before the following step, or done.
	step(at time.Time) (pause time.Duration, done bool, err error)
}

// errHeld means the actor must wait without writing (its run is paused on disk, or someone else holds the
// run's lock) and try the same step again later.
var errHeld = errors.New("run held")

// replay drives an actor to completion on a fake clock starting at start, with pauses multiplied by scale.
// It returns the clock after the last step.
func replay(a actor, start time.Time, scale float64) (time.Time, error) {
	at := start
	for {
		pause, done, err := a.step(at)
		if err != nil {
			return at, err
		}
		if done {
			return at, nil
		}
		at = at.Add(time.Duration(float64(pause) * scale))
	}
}

// writeStep is one write of an actor; it returns the pause before the next.
type writeStep func(at time.Time) (time.Duration, error)

// steps is the queue both actors work from: they queue the writes of one phase or invocation at a time, and
// plan the next batch (from what is on disk by then) when the queue runs dry.
type steps struct {
	queue []writeStep
	ended bool
}

func (q *steps) then(f writeStep) { q.queue = append(q.queue, f) }

// next runs the head of the queue, calling plan first when it is empty. A failed step stays at the head, so
// a held actor retries the same write.
func (q *steps) next(at time.Time, plan func()) (time.Duration, bool, error) {
	if q.ended {
		return 0, true, nil
	}
	if len(q.queue) == 0 {
		plan()
		if q.ended || len(q.queue) == 0 {
			q.ended = true
			return 0, true, nil
		}
	}
	pause, err := q.queue[0](at)
	if err != nil {
		return 0, false, err
	}
	q.queue = q.queue[1:]
	return pause, false, nil
}
