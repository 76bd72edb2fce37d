package action

import (
	"path/filepath"

	"runwatch/model"
)

// Each Plan* function returns the plan and, when the action is refused, the refusal (also in p.Refusal; the
// plan's Summary then says why). run is the run as the person saw it (state.Load): its lock verdicts and
// stage order are used; every value that decides the change is read again from disk.

// PlanUnlock clears stale locks: every stale lock of the run when which is empty, else the named lock
// (path, file name or holder). Unknown locks need ConfirmTyped; live locks are refused.
func PlanUnlock(run model.Run, which string, opts Options) (*Plan, error) {
	return plan(ActUnlock, run, opts, func(p *Plan) error { return planUnlock(p, run, which) })
}

// PlanStep moves a run forward one stage (docs/USAGE.md, "Actions", gives each convention's rule). to names
// the stage a resumable run moves to, for when the files do not settle the order (to may not contradict
// them); empty, the files decide.
func PlanStep(run model.Run, to string, opts Options) (*Plan, error) {
	return plan(ActStep, run, opts, func(p *Plan) error {
		if run.Kind == model.KindJonggrang {
			if to != "" {
				return refusef("--to applies to resumable runs; a jonggrang run's next phase is in its manifest")
			}
			return planJonggrangStep(p, run)
		}
		return planResumableStep(p, run, to)
	})
}

// PlanCheck ticks (done=true) or unticks a resumable checklist item CB_<STAGE>_<ITEM>.
func PlanCheck(run model.Run, key string, done bool, opts Options) (*Plan, error) {
	act := ActCheck
	if !done {
		act = ActUncheck
	}
	return plan(act, run, opts, func(p *Plan) error {
		if run.Kind != model.KindResumable {
			return refusef("%s is a jonggrang run; checklists belong to resumable runs", run.ID)
		}
		return planResumableCheck(p, run, key, done)
	})
}

// PlanRetry resets a failed jonggrang phase (phase may be empty when exactly one phase failed).
func PlanRetry(run model.Run, phase string, opts Options) (*Plan, error) {
	return plan(ActRetry, run, opts, func(p *Plan) error {
		if run.Kind != model.KindJonggrang {
			return refusef("%s is a resumable run; retry applies to jonggrang phases", run.ID)
		}
		return planJonggrangRetry(p, run, phase)
	})
}

// PlanPause sets a jonggrang run's status to paused.
func PlanPause(run model.Run, opts Options) (*Plan, error) {
	return plan(ActPause, run, opts, func(p *Plan) error {
		if run.Kind != model.KindJonggrang {
			return refusef("%s is a resumable run; between invocations it is already paused", run.ID)
		}
		return planJonggrangStatus(p, run, "paused")
	})
}

// PlanResume sets a paused jonggrang run's status to running.
func PlanResume(run model.Run, opts Options) (*Plan, error) {
	return plan(ActResume, run, opts, func(p *Plan) error {
		if run.Kind != model.KindJonggrang {
			return refusef("%s is a resumable run; resume it by starting its agent", run.ID)
		}
		return planJonggrangStatus(p, run, "running")
	})
}

// PlanUndo reverts the run's last action recorded in the journal, if its files still hold what it wrote.
func PlanUndo(run model.Run, opts Options) (*Plan, error) {
	return plan(ActUndo, run, opts, func(p *Plan) error { return planUndo(p, run) })
}

func plan(act Verb, run model.Run, opts Options, build func(*Plan) error) (*Plan, error) {
	p, err := newPlan(act, run, opts)
	if err != nil {
		return p, err
	}
	err = build(p)
	if err == nil {
		err = p.checkExpect()
	}
	if err != nil {
		p.Files = nil
		p.LogLine = ""
		return p, p.refuse(err)
	}
	return p, nil
}

func logPathOf(run model.Run) string {
	if run.Log != nil && run.Log.Path != "" {
		return run.Log.Path
	}
	if name, ok := variantName(run.StatePath); ok && run.Kind == model.KindResumable {
		return filepath.Join(run.Dir, name+".log")
	}
	return filepath.Join(run.Dir, "run.log")
}
