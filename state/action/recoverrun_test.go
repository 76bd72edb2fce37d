package action

import (
	"path/filepath"

	"runwatch/model"
	"runwatch/state/atomicfile"
	"runwatch/termsafe"
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

// releaseOwnDeadLock removes runwatch's own lock whose process is gone, logging the payload first as the
// convention's unlock does.
func (p *Plan) releaseOwnDeadLock() {
	held, snap, err := p.root.Read(p.LockPath)
	if err != nil || !snap.Exists {
		return
	}
	why, dead := p.ownDeadLock(held)
	if !dead {
		return
	}
	line := logLine(p.opts.now(), "stale_lock_cleared", "payload="+termsafe.Plain(string(held), 4096), kv("lock", relTo(filepath.Dir(p.RunPath), p.LockPath)),
		"tool=runwatch", kv("user", p.opts.user()), kv("why", why))
	if err := p.root.RemoveIfUnchanged(snap, atomicfile.NewClaimName(filepath.Base(p.LockPath)), func() error {
		return p.root.Append(p.LogPath, []byte(line), !p.opts.Force)
	}); err == nil {
		p.Recovered = append(p.Recovered, "cleared "+p.LockPath+": "+why)
	}
}
