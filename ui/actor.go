// The Actor the dashboard and the subcommands plan actions with: app.ActionRequest turned into a
// state/action plan, re-checked against the files when it is applied.

package ui

import (
	"bytes"
	"fmt"
	"strings"

	"runwatch/model"
	"runwatch/state/action"
	"runwatch/ui/app"
)

// NewActor plans dashboard actions with the state/action package: the same code path as the subcommands.
// env is called per plan, so lock verdicts and audit timestamps use the time of the key press.
func NewActor(opts action.Options, env func() model.Env) app.Actor {
	return &stateActor{opts: opts, env: env}
}

type stateActor struct {
	opts action.Options
	env  func() model.Env
}

func (a *stateActor) Plan(req app.ActionRequest) (app.Planned, error) {
	p, err := a.plan(req)
	if err != nil {
		return nil, err
	}
	return statePlan{p: p, replan: func() (*action.Plan, error) { return a.plan(req) }}, nil
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
}

func (s statePlan) Summary() string { return s.p.Summary }
func (s statePlan) Preview() string { return s.p.Preview() }
func (s statePlan) TypedConfirmation() string {
	if s.p.Confirm.Kind == action.ConfirmTyped {
		return s.p.Confirm.Word
	}
	return ""
}
func (s statePlan) Apply(typed string) (string, error) {
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
