// The action vocabulary: every change runwatch makes to a run is one Verb, asked of one run by a Request,
// planned here, and done on another machine by RemoteArgv. The subcommands, the dashboard's keys, remote
// calls, help and completion all take the verbs from Verbs, so none of them keeps a list of its own.

package action

import (
	"fmt"
	"path/filepath"
	"slices"

	"runwatch/model"
)

// Verb is one kind of change to a run: the name of its subcommand, and the action of its journal entries and
// audit lines.
type Verb string

// The verbs a run's attention can suggest are spelt once, by model (which cannot import this package):
// what a run suggests is the verb that does it.
const (
	ActUnlock       = Verb(model.ActionUnlock)
	ActStep         = Verb(model.ActionStep)
	ActCheck        = Verb(model.ActionCheck)
	ActUncheck Verb = "uncheck"
	ActRetry        = Verb(model.ActionRetry)
	ActPause   Verb = "pause"
	ActResume       = Verb(model.ActionResume)
	ActUndo    Verb = "undo"
)

// verbs says, for each verb in the order help lists them, what it does and what it takes after RUN.
var verbs = []struct {
	verb    Verb
	summary string
	// word names what the verb acts on within the run (LOCK, ITEM, PHASE); need says it must be given.
	word string
	need bool
}{
	{ActUnlock, "clear a run's stale locks (or the named LOCK); never a live one", "LOCK", false},
	{ActStep, "mark the current stage done and move to the next, when its gate allows", "", false},
	{ActCheck, "tick a checklist item CB_<STAGE>_<ITEM> of a resumable run", "ITEM", true},
	{ActUncheck, "untick a checklist item (refused for a stage already marked done)", "ITEM", true},
	{ActRetry, "reset a failed jonggrang phase to pending and the run to in_progress", "PHASE", false},
	{ActPause, "set a jonggrang run's status to paused", "", false},
	{ActResume, "lift a jonggrang run's pause (in_progress; running under a live agent)", "", false},
	{ActUndo, "restore the bytes the run's last action replaced, if nothing changed them since", "", false},
}

// Verbs is every verb, in the order help lists them.
func Verbs() []Verb {
	out := make([]Verb, len(verbs))
	for i, v := range verbs {
		out[i] = v.verb
	}
	return out
}

// Known says v is one of Verbs.
func (v Verb) Known() bool { return slices.Contains(Verbs(), v) }

// Summary is what v does, in one line.
func (v Verb) Summary() string {
	for _, s := range verbs {
		if s.verb == v {
			return s.summary
		}
	}
	return ""
}

// Word names what v acts on within the run, given after RUN ("" when it takes nothing), and whether it must
// be given (an ITEM must; without a LOCK every stale lock is cleared, without a PHASE the failed one retried).
func (v Verb) Word() (name string, required bool) {
	for _, s := range verbs {
		if s.verb == v {
			return s.word, s.need
		}
	}
	return "", false
}

// TakesTo says v takes a stage to move to (Request.To): step, where the run's files leave the order open.
func (v Verb) TakesTo() bool { return v == ActStep }

// Words are what v can act on in run, for completion: open items to check, ticked ones to uncheck, failed
// phases to retry, the file names of locks not live to unlock. nil when v takes no word.
func (v Verb) Words(run model.Run) []string {
	var out []string
	switch v {
	case ActCheck, ActUncheck:
		for _, s := range run.Stages {
			for _, it := range s.Checklist {
				if it.Done == (v == ActUncheck) {
					out = append(out, it.Key)
				}
			}
		}
	case ActRetry:
		for _, s := range run.Stages {
			if s.Status == model.StageFailed {
				out = append(out, s.Key)
			}
		}
	case ActUnlock:
		for _, l := range run.Locks {
			if l.Verdict != model.VerdictLive {
				out = append(out, filepath.Base(l.Path))
			}
		}
	}
	return out
}

// Request is one verb asked of one run.
type Request struct {
	Verb Verb
	Run  model.Run
	// Word is what the verb acts on (see Verb.Word): the checklist item to check or uncheck, the phase to
	// retry, the lock to clear; empty where the verb takes none or it is left to the run's files.
	Word string
	// To is the stage step moves a resumable run to, where its files leave the order open (TakesTo).
	To string
}

// Plan plans the request: the one place a verb becomes its Plan* call.
func (r Request) Plan(opts Options) (*Plan, error) {
	if r.To != "" && !r.Verb.TakesTo() {
		return nil, fmt.Errorf("%s takes no stage to move to", r.Verb)
	}
	switch r.Verb {
	case ActUnlock:
		return PlanUnlock(r.Run, r.Word, opts)
	case ActStep:
		return PlanStep(r.Run, r.To, opts)
	case ActCheck, ActUncheck:
		return PlanCheck(r.Run, r.Word, r.Verb == ActCheck, opts)
	case ActRetry:
		return PlanRetry(r.Run, r.Word, opts)
	case ActPause:
		return PlanPause(r.Run, opts)
	case ActResume:
		return PlanResume(r.Run, opts)
	case ActUndo:
		return PlanUndo(r.Run, opts)
	}
	return nil, fmt.Errorf("unknown action %q", r.Verb)
}

// RemoteArgv is the command line the runwatch on a run's host is given to do r there, run being the run as
// that host names it: the verb, its own flags (--to) and flags, then `--`, then the run and the word. The run
// and the word come from the host's own files or from a person, so after `--` none of them can be read as an
// option there: a phase called -h is retried, not the help shown as a plan.
func (r Request) RemoteArgv(run string, flags ...string) []string {
	argv := []string{string(r.Verb)}
	if r.To != "" {
		argv = append(argv, "--to="+r.To)
	}
	argv = append(append(argv, flags...), "--", run)
	if r.Word != "" {
		argv = append(argv, r.Word)
	}
	return argv
}
