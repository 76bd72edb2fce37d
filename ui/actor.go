// The Actor the dashboard and the subcommands plan actions with: app.ActionRequest turned into a
// state/action plan, re-checked against the files when it is applied.

package ui

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"runwatch/model"
	"runwatch/state/action"
	"runwatch/state/journal"
	"runwatch/ui/app"
	"runwatch/ui/text"
)

// NewActor plans dashboard actions with the state/action package: the same code path as the subcommands.
// env is called per plan, so lock verdicts and audit timestamps use the time of the key press.
func NewActor(opts action.Options, env func() model.Env) ClosingActor {
	return &stateActor{opts: opts, env: env, flight: &inFlight{}}
}

// ClosingActor is an actor whose applies the dashboard's end waits for.
type ClosingActor interface {
	app.Actor
	// Close refuses applies from now on and returns once those under way have finished. An apply runs in a
	// command the program does not wait for: when the terminal closed just after a confirmation, the demo
	// removed its workspace while the unlock was writing, and the journal and its pending/ were made again
	// in a folder nobody would remove.
	Close()
}

type stateActor struct {
	opts   action.Options
	env    func() model.Env
	flight *inFlight
	undo   undoCache
}

// undoCache keeps NothingToUndo's answers while the journal is unchanged (its size and time): the footer
// asks on every frame.
type undoCache struct {
	mu      sync.Mutex
	size    int64
	mod     time.Time
	answers map[string]string
}

// NothingToUndo asks the journal what the undo plan asks it first (journal.FindUndoable): no action on
// the run is "nothing to undo", with the plan's words.
func (a *stateActor) NothingToUndo(run model.Run) string {
	path := a.opts.JournalPath
	if path == "" {
		var err error
		if path, err = journal.DefaultPath(os.Getenv); err != nil {
			return ""
		}
	}
	var size int64
	var mod time.Time
	if fi, err := os.Stat(path); err == nil {
		size, mod = fi.Size(), fi.ModTime()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	c := &a.undo
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers == nil || c.size != size || !c.mod.Equal(mod) {
		c.answers, c.size, c.mod = map[string]string{}, size, mod
	}
	if why, ok := c.answers[run.StatePath]; ok {
		return why
	}
	why := ""
	if e, _, err := journal.FindUndoable(path, run.StatePath); err == nil && e == nil {
		why = fmt.Sprintf("undo refused: the journal %s has no action on %s to undo", path, text.Sanitize(run.ID))
	}
	c.answers[run.StatePath] = why
	return why
}

func (a *stateActor) Close() { a.flight.close() }

// inFlight counts the applies under way.
type inFlight struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func (f *inFlight) begin() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.wg.Add(1)
	return true
}

func (f *inFlight) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.wg.Wait()
}

func (a *stateActor) Plan(req app.ActionRequest) (app.Planned, error) {
	p, err := a.plan(req)
	if err != nil {
		return nil, err
	}
	return statePlan{p: p, replan: func() (*action.Plan, error) { return a.plan(req) }, flight: a.flight}, nil
}

func (a *stateActor) plan(req app.ActionRequest) (*action.Plan, error) {
	opts := a.opts
	if a.env != nil {
		opts.Env = a.env()
	}
	p, err := req.Request.Plan(opts)
	if err != nil {
		return nil, fmt.Errorf("%s refused: %w", req.Act, err)
	}
	return p, nil
}

// statePlan is a plan shown in the dialog. replan computes it again when the person answers, so the audit
// line and timestamps carry the time of the answer, not of the key that opened the dialog.
type statePlan struct {
	p      *action.Plan
	replan func() (*action.Plan, error)
	flight *inFlight
}

func (s statePlan) Summary() string  { return s.p.Summary }
func (s statePlan) Preview() string  { return s.p.Preview() }
func (s statePlan) Question() string { return s.p.Question() }
func (s statePlan) TypedConfirmation() string {
	if s.p.Confirm.Kind == action.ConfirmTyped {
		return s.p.Confirm.Word
	}
	return ""
}
func (s statePlan) Apply(typed string) (string, error) {
	if s.flight != nil {
		if !s.flight.begin() {
			return "", fmt.Errorf("%s not applied: the dashboard is closing", s.p.Action)
		}
		defer s.flight.wg.Done()
	}
	p := s.p
	if s.replan != nil {
		// The fresh plan is used only when it starts from exactly the bytes the person saw; otherwise the
		// shown plan is applied, and its own preconditions report "changed on disk since you looked".
		if fresh, err := s.replan(); err == nil && sameStart(fresh, s.p) {
			p = fresh
		}
	}
	err := action.Apply(p, action.ApplyOptions{Typed: typed})
	// What Apply found and finished of earlier actions a crash cut short (a torn journal line, an intent
	// left behind) is said with the outcome, as the subcommands say it on stderr: the footer shows what fits
	// and `i` the whole message.
	recovered := ""
	if len(p.Recovered) > 0 {
		recovered = " · recovered: " + strings.Join(p.Recovered, "; ")
	}
	if len(p.Raced) > 0 {
		// A writer landed during the rename; its change was kept and ours made on it.
		recovered += " · raced: " + strings.Join(p.Raced, "; ")
	}
	switch {
	case action.Applied(err):
		// Made, but with something the person must know (audit line missing, a concurrent write replaced).
		return "done, but: " + err.Error() + recovered, nil
	case err != nil:
		return "", fmt.Errorf("%s: %w%s", p.Action, err, recovered)
	}
	return "done: " + p.Summary + recovered, nil
}

func sameStart(a, b *action.Plan) bool {
	if a.Action != b.Action || a.RunPath != b.RunPath || len(a.Files) != len(b.Files) || a.Confirm != b.Confirm {
		return false
	}
	for i := range a.Files {
		fa, fb := a.Files[i], b.Files[i]
		if fa.Path != fb.Path || fa.Remove != fb.Remove || !bytes.Equal(fa.Old, fb.Old) || fa.Snap != fb.Snap {
			return false
		}
	}
	return true
}
