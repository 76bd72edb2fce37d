package state

import (
	"fmt"
	"path/filepath"
	"runtime/debug"

	"runwatch/model"
	"runwatch/state/jonggrang"
	"runwatch/state/resumable"
)

// Load reads one run. It never panics and never drops a run: whatever could not be read becomes a problem on
// the run. A reader bug is caught here too, so one odd file cannot take the whole dashboard down.
func Load(loc Location, env model.Env) (run model.Run) {
	defer func() {
		if r := recover(); r != nil {
			run = model.Run{
				ID: filepath.Base(loc.Dir), Kind: loc.Kind, Dir: loc.Dir, StatePath: loc.StatePath,
				ProjectRoot: loc.ProjectRoot, Archived: loc.Archived,
			}
			run.AddProblem(model.SeverityError, model.CodeStateUnparsable, loc.StatePath,
				fmt.Sprintf("%s: reading this run crashed runwatch's reader (%v); please report it with the file\n%s",
					loc.StatePath, r, debug.Stack()))
			model.FinalizeRun(&run)
		}
	}()
	switch loc.Kind {
	case model.KindJonggrang:
		run = jonggrang.Load(loc.Dir, env)
		if run.ProjectRoot == "" {
			run.ProjectRoot = loc.ProjectRoot
		}
	default:
		run = resumable.Load(loc.StatePath, env)
	}
	if loc.Archived && !run.Archived {
		run.Archived = true
	}
	if run.StatePath == "" {
		run.StatePath = loc.StatePath
	}
	if run.Dir == "" {
		run.Dir = loc.Dir
	}
	return run
}

// LoadAll loads every location.
func LoadAll(locs []Location, env model.Env) []model.Run {
	runs := make([]model.Run, 0, len(locs))
	for _, loc := range locs {
		runs = append(runs, Load(loc, env))
	}
	return runs
}
