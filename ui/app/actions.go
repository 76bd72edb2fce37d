// Action requests: what a mutating key asks for, the Planned change it becomes and the Actor that plans
// it, and the requests the root makes from a key (RequestAction, RequestInstall).

package app

import (
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/state/action"
	"runwatch/ui/keys"
	"runwatch/ui/text"
)

// ActionRequest is what a mutating key asks for: the key's action, which names it to the person, and the
// verb it does on the run (state/action), which the Actor plans, so the dashboard, the subcommands and the
// tests share one code path. Launch and install change no run file: their Verb is empty.
type ActionRequest struct {
	Act string // the key's action (keys.ActTick for check and uncheck alike)
	action.Request
	Host string // install: the host (its label) to copy this runwatch to
}

// Planned is an action computed but not yet written.
type Planned interface {
	// Summary says in one line what will happen.
	Summary() string
	// Preview is the exact change: a unified diff plus any log line to be appended.
	Preview() string
	// Question is what the confirmation asks: what the change writes, or starts, and where ("Remove
	// lock/active.lock and append to run.log?").
	Question() string
	// TypedConfirmation is the word the user must type (for locks whose liveness is unknown), or "" when
	// y/N suffices.
	TypedConfirmation() string
	// Apply writes the change, re-checking that the files are still what the preview showed. typed is what
	// the person typed for a typed confirmation.
	Apply(typed string) (string, error)
}

// Actor plans actions. A nil Actor (read-only) means no action can be planned.
type Actor interface {
	Plan(req ActionRequest) (Planned, error)
}

// UndoKnower is an actor that can say, without planning, that a run has nothing to undo: the journal holds
// no action on it. NotHere asks it, so Z is left out of the footer and marked in help where it is refused.
type UndoKnower interface {
	// NothingToUndo is the refusal when the journal has no action on run to undo, "" when it has one or
	// cannot tell (the plan then decides).
	NothingToUndo(run model.Run) string
}

// RequestAction plans a mutating action on the selected run in a command; sel is Detail's focused row,
// which says which item to tick, which lock to clear, which phase to retry.
func RequestAction(a *App, act string, sel RowID) tea.Cmd {
	run, ok := a.SelectedRun()
	if !ok {
		a.Note("no run selected")
		return nil
	}
	if a.Actor == nil || a.Keys.ReadOnly {
		a.Fail(fmt.Errorf("read-only: %s is disabled", act))
		return nil
	}
	if a.Applying[run.Key()] {
		a.Fail(fmt.Errorf("%s: an action on %s is still being applied; wait for its outcome", act, text.Sanitize(run.ID)))
		return nil
	}
	if why := a.NotHere(act, sel); why != "" {
		a.Fail(errors.New(why))
		return nil
	}
	verbs := keys.VerbsOf(act)
	if len(verbs) == 0 {
		a.Fail(fmt.Errorf("%s changes no run", act))
		return nil
	}
	req := ActionRequest{Act: act, Request: action.Request{Verb: verbs[0], Run: run}}
	// What the selection says: which of the two verbs a toggling key does, and the word the verb acts on.
	switch req.Verb {
	case action.ActRetry:
		req.Word = RetryStage(run, sel)
	case action.ActCheck:
		req.Word = sel.Key
		if checklistValue(run, sel.Stage, sel.Key) {
			req.Verb = action.ActUncheck
		}
	case action.ActUnlock:
		if sel.Kind == RowLock {
			req.Word = sel.Key
		}
	case action.ActPause:
		if run.Status == model.StatusPaused {
			req.Verb = action.ActResume
		}
	}
	actor := a.Actor
	return func() tea.Msg {
		p, err := actor.Plan(req)
		return PlanMsg{Req: req, Planned: p, Err: err}
	}
}

// NeedsInstall reports whether a host's health says it lacks runwatch or has an older one: its message
// names `runwatch install` (remote.InstallHint).
func NeedsInstall(h model.HostHealth) bool {
	return h.State != model.HostLive && strings.Contains(h.Error, "runwatch install ")
}

// RequestInstall plans copying this runwatch to the host that needs it: the selected run's host when it
// does, else the first one whose health line says so.
func RequestInstall(a *App) tea.Cmd {
	if a.Actor == nil || a.Keys.ReadOnly {
		a.Fail(fmt.Errorf("read-only: install is disabled"))
		return nil
	}
	if why := a.NotHere(keys.ActInstall, RowID{}); why != "" {
		a.Note(why)
		return nil
	}
	target := InstallTarget(a)
	a.Note("asking " + target + " what it is…")
	req, actor := ActionRequest{Act: keys.ActInstall, Host: target}, a.Actor
	return func() tea.Msg {
		p, err := actor.Plan(req)
		return PlanMsg{Req: req, Planned: p, Err: err}
	}
}

// InstallTarget is the host install acts on: the selected run's host when it needs runwatch, else the
// first one whose health line says so; "" when none does.
func InstallTarget(a *App) string {
	var target string
	for _, h := range a.Hosts {
		if NeedsInstall(h) && target == "" {
			target = h.Host
		}
	}
	if run, ok := a.SelectedRun(); ok && run.Remote != nil {
		for _, h := range a.Hosts {
			if h.Host == run.Remote.Host && NeedsInstall(h) {
				target = h.Host
			}
		}
	}
	return target
}

func firstFailedStage(run model.Run) string {
	for _, s := range run.Stages {
		if s.Status == model.StageFailed {
			return s.Key
		}
	}
	return ""
}

func checklistValue(run model.Run, stage, key string) bool {
	if st := run.Stage(stage); st != nil {
		for _, it := range st.Checklist {
			if it.Key == key {
				return it.Done
			}
		}
	}
	return false
}

type rowKind int

const (
	RowText rowKind = iota
	RowStage
	RowItem
	RowLock
	RowOutput
	RowFold // the one line that stands for the completed stages
)

// RowID names a focusable detail row by what it shows, so a live update that inserts rows above it does not
// move the focus to another item.
type RowID struct {
	Kind  rowKind
	Stage string
	Key   string
}
