package state

import (
	"path/filepath"
	"strings"

	"runwatch/model"
	"runwatch/state/jonggrang"
)

// TaskHistory learns how long the stages of run's task usually take from the runs the dashboard would read:
// those of roots, the local roots of the config or the defaults (rootRuns when the caller has walked them
// already, else found again to maxDepth), and the folder holding the run (loc) when it lies under none of
// them. Only runs that may be of the task are read: a resumable run's TASK_NAME is in its state file, a few
// lines; a jonggrang feature's work_type is on a line of its manifest (a feature whose line does not say is
// read). They are loaded with env; their locks are judged here only, as env's Elsewhere says.
func TaskHistory(run model.Run, loc Location, rootRuns []Location, roots []string, maxDepth int, env model.Env) *model.History {
	h := model.NewHistory()
	h.Observe(&run)
	if rootRuns == nil {
		rootRuns, _ = Discover(roots, maxDepth) // a folder that cannot be read holds no history
	}
	under := false
	for _, root := range roots {
		if abs, err := filepath.Abs(root); err == nil && (loc.Dir == abs || strings.HasPrefix(loc.Dir, abs+string(filepath.Separator))) {
			under = true
		}
	}
	if !under {
		near, _ := Discover([]string{filepath.Dir(loc.Dir)}, 1)
		rootRuns = append(rootRuns, near...)
	}
	task, workType := "", ""
	if run.Resumable != nil {
		task = strings.TrimSpace(run.Resumable.TaskName)
	}
	if run.Jonggrang != nil {
		workType = strings.TrimSpace(run.Jonggrang.WorkType)
	}
	seen := map[string]bool{loc.StatePath: true}
	var same []Location
	for _, l := range rootRuns {
		if seen[l.StatePath] || l.Kind != loc.Kind {
			continue
		}
		seen[l.StatePath] = true
		if l.Kind == model.KindResumable {
			f := readStateEnv(l.StatePath)
			if f == nil {
				continue
			}
			if v, _ := f.Get("TASK_NAME"); strings.TrimSpace(v) != task {
				continue
			}
		}
		if l.Kind == model.KindJonggrang {
			if wt, ok := jonggrang.WorkTypeOf(l.StatePath); ok && !strings.EqualFold(wt, workType) {
				continue
			}
		}
		same = append(same, l)
	}
	LoadEach(same, env, func(_ int, r model.Run) { h.Observe(&r) })
	return h
}
