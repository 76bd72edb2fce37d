package action

import (
	"runwatch/model"
	"runwatch/state/atomicfile"
)

// recoverRun settles, for run, what killed actions left: it finishes or reports each interrupted action (its
// intent is pending and its owner dead), removes dead owners' temp and quarantine files beside the run's
// files, and clears runwatch's own lock when the process that took it is gone (with a run.log line). It
// writes nothing else. Apply does the same before every action; the crash tests call it alone, to see what recovery does by itself.
func recoverRun(run model.Run, opts Options) ([]string, error) {
	p, err := newPlan("recover", run, opts)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	jp, err := p.journalPath()
	if err != nil {
		return nil, err
	}
	p.recoverPending(jp)
	paths := []string{}
	for _, path := range []string{run.StatePath, logPathOf(run)} {
		if real, err := atomicfile.Resolve(p.Root, path); err == nil {
			paths = append(paths, real)
		}
	}
	for _, l := range run.Locks {
		if real, err := atomicfile.Resolve(p.Root, l.Path); err == nil {
			paths = append(paths, real)
		}
	}
	if run.Kind == model.KindResumable {
		if _, err := p.readResumable(run, false); err == nil && p.LockPath != "" {
			paths = append(paths, p.LockPath, p.LogPath)
			p.releaseOwnDeadLock()
		}
	}
	p.removeLeftovers(paths...)
	return p.Recovered, nil
}
