package ui

import (
	"fmt"

	"runwatch/model"
	"runwatch/state/action"
)

// NewActor plans dashboard actions with the state/action package: the same code path as the subcommands.
// env is called per plan, so lock verdicts and audit timestamps use the time of the key press.
func NewActor(opts action.Options, env func() model.Env) Actor {
	return &stateActor{opts: opts, env: env}
}

type stateActor struct {
	opts action.Options
	env  func() model.Env
}

func (a *stateActor) Plan(req ActionRequest) (Planned, error) {
	opts := a.opts
	if a.env != nil {
		opts.Env = a.env()
	}
	var (
		p   *action.Plan
		err error
	)
	switch req.Action {
	case ActUnlock:
		p, err = action.PlanUnlock(req.Run, req.LockPath, opts)
	case ActStep:
		p, err = action.PlanStep(req.Run, opts)
	case ActTick:
		p, err = action.PlanCheck(req.Run, req.Item, req.Check, opts)
	case ActRetry:
		p, err = action.PlanRetry(req.Run, req.Stage, opts)
	case ActPause:
		if req.Resume {
			p, err = action.PlanResume(req.Run, opts)
		} else {
			p, err = action.PlanPause(req.Run, opts)
		}
	case ActUndo:
		p, err = action.PlanUndo(req.Run, opts)
	default:
		return nil, fmt.Errorf("unknown action %q", req.Action)
	}
	if err != nil {
		return nil, fmt.Errorf("%s refused: %w", req.Action, err)
	}
	return statePlan{p}, nil
}

type statePlan struct{ p *action.Plan }

func (s statePlan) Summary() string { return s.p.Summary }
func (s statePlan) Preview() string { return s.p.Preview() }
func (s statePlan) TypedConfirmation() string {
	if s.p.Confirm.Kind == action.ConfirmTyped {
		return s.p.Confirm.Word
	}
	return ""
}
func (s statePlan) Apply(typed string) (string, error) {
	err := action.Apply(s.p, action.ApplyOptions{Typed: typed})
	switch {
	case action.Applied(err):
		// Made, but with something the person must know (audit line missing, a concurrent write replaced).
		return "done, but: " + err.Error(), nil
	case err != nil:
		return "", fmt.Errorf("%s: %w", s.p.Action, err)
	}
	return "done: " + s.p.Summary, nil
}
