package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Simulator drives the workspace's advancing runs live: the jonggrang feature phase by phase, the resumable
// run one invocation at a time. When either finishes, a new one starts after a pause (a new feature, a new
// run id), and the oldest finished ones beyond keepFinished are deleted so a long demo stays small.
type Simulator struct {
	ws    *Workspace
	speed float64

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	err    error
	steps  int
}

// keepFinished is how many finished generations of each advancing run stay on disk.
const keepFinished = 2

// NewSimulator prepares a simulator on ws. speed scales every pause: 2 runs twice as fast; values <= 0 mean 1.
func NewSimulator(ws *Workspace, speed float64) *Simulator {
	if speed <= 0 {
		speed = 1
	}
	return &Simulator{ws: ws, speed: speed}
}

// Start begins writing in the background. It returns an error if the simulator is already running.
func (s *Simulator) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return errors.New("simulator already started")
	}
	if s.ws.advJ == nil || s.ws.advR == nil {
		return errors.New("simulator: workspace has no advancing runs (already simulated once?)")
	}
	j, r := s.ws.advJ, s.ws.advR
	s.ws.advJ, s.ws.advR = nil, nil
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.runJonggrang(ctx, j) }()
	go func() { defer wg.Done(); s.runResumable(ctx, r) }()
	go func() { wg.Wait(); close(s.done) }()
	return nil
}

// Stop ends the simulation, waits for the writers to finish their current write, and returns the first write
// error the simulation met, if any. A resumable invocation in progress is ended cleanly (its lock released);
// jonggrang agents are left as they are, as when the real CLI is interrupted.
func (s *Simulator) Stop() error {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Steps counts the writes performed so far (tests wait on it instead of on time).
func (s *Simulator) Steps() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.steps
}

func (s *Simulator) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// sleep waits d of simulated time; false when the context ended first.
func (s *Simulator) sleep(ctx context.Context, d time.Duration) bool {
	real := time.Duration(float64(d) / s.speed)
	if real < time.Millisecond {
		real = time.Millisecond
	}
	t := time.NewTimer(real)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// heldPoll is how often a held actor (paused on disk, lock held by someone else) looks again.
const heldPoll = 500 * time.Millisecond

// drive runs an actor live until it is done, the context ends, or it fails.
func (s *Simulator) drive(ctx context.Context, a actor, name string) bool {
	for ctx.Err() == nil {
		pause, done, err := a.step(s.ws.opts.now())
		switch {
		case errors.Is(err, errHeld):
			pause = heldPoll
		case err != nil:
			s.fail(fmt.Errorf("simulating %s: %w", name, err))
			return false
		case done:
			return true
		default:
			s.mu.Lock()
			s.steps++
			s.mu.Unlock()
		}
		if !s.sleep(ctx, pause) {
			return false
		}
	}
	return false
}

// generation is one advancing run: an actor with the folder it writes and a name for errors.
type generation interface {
	actor
	folder() string
	label() string
}

func (a *jonggrangActor) folder() string { return a.dir }
func (a *jonggrangActor) label() string  { return "jonggrang run " + a.feat.Description }
func (a *resumableActor) folder() string { return a.dir }
func (a *resumableActor) label() string  { return "resumable run " + a.plan.Task }

// runGenerations drives one run after another: the next starts a pause after the last finished, and only
// the newest keepFinished finished runs stay on disk.
func (s *Simulator) runGenerations(ctx context.Context, a generation, next func(gen int) generation) {
	var finished []string
	for gen := 1; ; gen++ {
		if !s.drive(ctx, a, a.label()) {
			return
		}
		finished = append(finished, a.folder())
		if len(finished) > keepFinished {
			if err := os.RemoveAll(finished[0]); err != nil {
				s.fail(err)
				return
			}
			finished = finished[1:]
		}
		if !s.sleep(ctx, 5*time.Second) {
			return
		}
		a = next(gen)
	}
}

func (s *Simulator) runJonggrang(ctx context.Context, first *jonggrangActor) {
	rng := s.ws.rng(100)
	s.runGenerations(ctx, first, func(gen int) generation {
		feat := laterFeatures[(gen-1)%len(laterFeatures)]
		return &jonggrangActor{project: s.ws.WebApp, feat: feat, rng: rng, pid: os.Getpid(), live: true}
	})
}

func (s *Simulator) runResumable(ctx context.Context, first *resumableActor) {
	cur := first
	s.runGenerations(ctx, first, func(gen int) generation {
		// The same task again, as a new run (a new run id and folder).
		next := &resumableActor{
			plan: cur.plan, reports: cur.reports, pid: cur.pid, host: cur.host, user: cur.user,
			rng: s.ws.rng(uint64(200 + gen)),
		}
		cur = next
		return next
	})
	// The context ended: end the invocation in progress the way the tool's finally-block does.
	if err := cur.interrupt(s.ws.opts.now()); err != nil {
		s.fail(err)
	}
}

// Paths is what to open a dashboard on: the workspace folder.
func (w *Workspace) Paths() []string { return []string{w.Dir} }
