// The one rule that says whether a key can act where the person is: the footer leaves out the keys it
// refuses, help marks them "(not here)", and the key itself, pressed, is refused with its reason. Before
// it, each kept its own list, and on a jonggrang run with no locks help marked only R while U, space and I
// were refused when pressed.

package app

import (
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"

	"runwatch/model"
	"runwatch/state/launch"
	"runwatch/ui/keys"
	"runwatch/ui/text"
)

// RuledKeys are the keys NotHere decides: those that act on the selected run (the change keys on Detail's
// selection), and install, which acts on a host.
var RuledKeys = []string{keys.ActOpen, keys.ActCopy, keys.ActBrief, keys.ActUnlock, keys.ActStep, keys.ActTick,
	keys.ActRetry, keys.ActPause, keys.ActUndo, keys.ActInstall, keys.ActAgent}

// NotHere says why act cannot act on the selected run with Detail's focused row sel, or "" when it can. It
// knows only what the run as read shows (its kind, locks, stages, hosts); the plan behind a key that passes
// still reads the files and may refuse, with the files' reason.
func (a *App) NotHere(act string, sel RowID) string {
	if act == keys.ActInstall {
		if InstallTarget(a) == "" {
			return "no host needs runwatch installed (install is for a host whose line says runwatch install)"
		}
		return ""
	}
	run, ok := a.SelectedRun()
	if !ok {
		for _, k := range RuledKeys {
			if k == act {
				return "no run selected"
			}
		}
		return ""
	}
	id := text.Sanitize(run.ID)
	switch act {
	case keys.ActAgent:
		if a.Opts.FindAgent == nil {
			return "agent: this dashboard cannot look for agents' panes"
		}
		if !run.LiveHolder() {
			// The finder looks only for a live holder's pane: without one it has nothing to look for.
			return fmt.Sprintf("agent: %s has no live process of its own (no live lock or running worker) whose pane to find", id)
		}
	case keys.ActUndo:
		if u, ok := a.Actor.(UndoKnower); ok {
			return u.NothingToUndo(run)
		}
	case keys.ActTick:
		if run.Kind != model.KindResumable {
			return fmt.Sprintf("tick: %s is a jonggrang run; checklists belong to resumable runs", id)
		}
		if sel.Kind != RowItem {
			return fmt.Sprintf("tick: move to a checklist item in Detail first (%s, then %s/%s)",
				a.Keys.First(keys.ActNextPane), a.Keys.First(keys.ActDown), a.Keys.First(keys.ActUp))
		}
		if st := run.Stage(sel.Stage); st != nil && (st.Status == model.StageCompleted || st.Status == model.StageSkipped) {
			return fmt.Sprintf("tick: stage %s is done; its items are its record", text.Sanitize(st.Key))
		}
	case keys.ActUnlock:
		if len(run.Locks) == 0 {
			return fmt.Sprintf("unlock: %s holds no lock files", id)
		}
		for _, l := range run.Locks {
			if sel.Kind == RowLock && l.Path == sel.Key {
				if l.Verdict == model.VerdictLive {
					return "unlock: this lock is live: its holder still runs"
				}
				return ""
			}
		}
		for _, l := range run.Locks {
			if l.Verdict == model.VerdictStale {
				return ""
			}
		}
		return fmt.Sprintf("unlock: %s has no stale lock; an unknown one is cleared by selecting it in Detail", id)
	case keys.ActRetry:
		if run.Kind != model.KindJonggrang {
			return fmt.Sprintf("retry: %s is a resumable run; its agent resumes a failed stage", id)
		}
		if RetryStage(run, sel) == "" {
			return fmt.Sprintf("retry: %s has no failed %s", id, run.Kind.StageWord())
		}
	case keys.ActPause:
		if run.Kind != model.KindJonggrang {
			return fmt.Sprintf("pause: %s is a resumable run; between invocations it is already paused", id)
		}
		if run.Status == model.StatusCompleted || run.Archived {
			return fmt.Sprintf("pause: %s is %s; nothing to pause", id, run.Status)
		}
	case keys.ActStep:
		if run.Status == model.StatusCompleted || run.Archived {
			return fmt.Sprintf("step: %s is %s; nothing to step", id, run.Status)
		}
		if run.Kind == model.KindJonggrang {
			if st := run.Stage(run.CurrentStage); st != nil && !model.JonggrangSteppable(run.RawStatus, string(st.Status), st.ErrorText()) {
				return fmt.Sprintf("step: needs a paused run or a phase awaiting input; %s is %q and phase %s is %q",
					id, text.Sanitize(run.RawStatus), text.Sanitize(st.Key), st.Status)
			}
		}
		return a.lockedAgainst(run, "step")
	}
	if act == keys.ActTick {
		return a.lockedAgainst(run, "tick")
	}
	return ""
}

// lockedAgainst says why a resumable run's lock refuses a change to its files, as the plan does
// (state/action's refuseIfLocked): a live lock holds the run, or its lock is stale or unknown and is cleared
// first (U). runwatch's own lock, left by a crash, is taken over by the change itself, so it does not count.
// On a stalled run whose lock a dead pid holds, S was offered and then refused with "clear the lock first".
func (a *App) lockedAgainst(run model.Run, verb string) string {
	if run.Kind != model.KindResumable {
		return ""
	}
	for _, l := range run.Locks {
		switch {
		case l.Shared:
		case l.Verdict == model.VerdictLive:
			return fmt.Sprintf("%s: a live lock holds %s: its holder still runs", verb, text.Sanitize(run.ID))
		case !runwatchsOwn(l):
			return fmt.Sprintf("%s: %s's lock is %s; clear the lock first: press %s", verb, text.Sanitize(run.ID), l.Verdict, a.Keys.First(keys.ActUnlock))
		}
	}
	return ""
}

// runwatchsOwn reports a lock runwatch itself wrote (tool "runwatch" in its JSON).
func runwatchsOwn(l model.Lock) bool {
	var own struct {
		Tool string `json:"tool"`
	}
	return json.Unmarshal([]byte(strings.TrimSpace(l.Raw)), &own) == nil && own.Tool == "runwatch"
}

// NotHereSet is NotHere for every ruled key: the set the footer leaves out and help marks.
func (a *App) NotHereSet(sel RowID) map[string]bool {
	no := map[string]bool{}
	for _, act := range RuledKeys {
		if a.NotHere(act, sel) != "" {
			no[act] = true
		}
	}
	return no
}

// RetryStage is the stage R retries: the focused one when it failed, else the run's first failed one.
func RetryStage(run model.Run, sel RowID) string {
	if st := run.Stage(sel.Stage); st != nil && st.Status == model.StageFailed {
		return st.Key
	}
	return firstFailedStage(run)
}

// AttentionBinding is the key that settles the run's attention as the footer and Detail offer it. X with no
// resume command configured for the run's convention launches nothing: it shows how to configure one, and
// is offered as that (the demo's footer said "X launch", and X then said "no resume command configured").
func AttentionBinding(a *App, run model.Run) (key.Binding, bool) {
	b, ok := keys.AttentionBinding(a.Keys, run.Attention.Action)
	if ok && run.Attention.Action == model.ActionResume && !launch.Configured(a.Opts.ResumeCommand, run.Kind) {
		b = key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, "how to launch"))
	}
	return b, ok
}
