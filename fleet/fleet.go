// Package fleet opens "the runs under these roots", local and remote alike, for every command that reads
// runs: which roots (the command line's, else the config's, else the defaults), the same checks and errors
// for each, the flags each host's runwatch is given, and then one read (status) or a watch (the dashboard,
// events, notify). cli fills Options from the config and the flags: config is a layer above.
package fleet

import (
	"context"
	"strconv"
	"time"

	"runwatch/model"
	"runwatch/remote"
	"runwatch/state"
	"runwatch/watch"
)

// Options are what opening the runs takes.
type Options struct {
	// Paths are the command line's roots; without any, Roots (the config's), else state.DefaultPaths of
	// Getenv, the environment the command runs in.
	Paths, Roots []string
	Getenv       func(string) string
	MaxDepth     int
	Poll         time.Duration
	StaleAfter   time.Duration
	Liveness     model.LivenessRules
	StageOrders  []model.StageOrderRule
	SSH          remote.SSH
	// Given are the flags given on the command line that change which runs are found or how they are
	// judged; every host's runwatch is given them too, so a fleet is judged alike (its own config decides
	// the rest).
	Given Given
}

// Given are the command line's flags that a host's runwatch is given; zero is not given.
type Given struct {
	StaleAfter, OrphanAfter, QuietAfter time.Duration
	MaxDepth                            int
	// Poll is given to a watch only: a one-off read has nothing to poll.
	Poll time.Duration
}

// args are the flags as a host's runwatch takes them; watching adds --poll.
func (g Given) args(watching bool) []string {
	var out []string
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--stale-after", g.StaleAfter}, {"--orphan-after", g.OrphanAfter}, {"--quiet-after", g.QuietAfter}} {
		if d.v > 0 {
			out = append(out, d.flag, d.v.String())
		}
	}
	if g.MaxDepth > 0 {
		out = append(out, "--max-depth", strconv.Itoa(g.MaxDepth))
	}
	if watching && g.Poll > 0 {
		out = append(out, "--poll", g.Poll.String())
	}
	return out
}

// Env is the environment runs here are judged in, without the machines runwatch reaches (Roots.Env).
func (o Options) Env() model.Env {
	env := state.NewEnv(o.StaleAfter)
	env.StageOrders = o.StageOrders
	env.Liveness = o.Liveness
	return env
}

// Scanned are the roots to open: the command line's, else the config's, else the defaults.
func (o Options) Scanned() []string {
	if len(o.Paths) > 0 {
		return o.Paths
	}
	if len(o.Roots) > 0 {
		return o.Roots
	}
	return state.DefaultPaths(o.Getenv)
}

// JudgeEvery is how old an answer about a process on another machine may be when a watch judges a lock by
// it: about the local watcher's own liveness tick, so a holder exiting there shows as soon as one here.
const JudgeEvery = 2 * time.Second

// Roots are the roots of a command, split and checked.
type Roots struct {
	opts Options
	// Scanned are the roots as given (Options.Scanned); Local and Remote the same, split.
	Scanned []string
	Local   []string
	Remote  []remote.Root
	reach   *remote.Elsewhere
}

// Open splits the roots into local paths and remote roots and checks them all before any run is read: a
// remote root that does not parse, a local one missing or a file that is no run's. Its error is the
// person's to fix (a usage error).
func Open(o Options) (*Roots, error) {
	scanned := o.Scanned()
	local, roots, err := Check(scanned)
	if err != nil {
		return nil, err
	}
	return &Roots{opts: o, Scanned: scanned, Local: local, Remote: roots, reach: o.Reaching(roots)}, nil
}

// Check splits roots into local paths and remote roots and checks them, without reading a run: a remote
// root that does not parse, a local one missing (a *state.RootError) or a file that is no run's. It is
// what a root may be, for Open and for the roots a command only looks in for one RUN (--root).
func Check(roots []string) (local []string, remotes []remote.Root, err error) {
	local, remotes, err = remote.Split(roots)
	if err != nil {
		return nil, nil, err
	}
	// Said at once: over 100,000 runs a mistyped path would otherwise wait for all of them.
	if err := state.CheckRoots(local); err != nil {
		return nil, nil, err
	}
	return local, remotes, nil
}

// Reaching asks the machines runwatch reaches (roots' and the config's remote roots) about their processes,
// so a lock here that names one of them is judged there; nil when there are none.
func (o Options) Reaching(roots []remote.Root) *remote.Elsewhere {
	all := append([]remote.Root{}, roots...)
	if _, fromConfig, err := remote.Split(o.Roots); err == nil {
		all = append(all, fromConfig...)
	}
	if len(all) == 0 {
		return nil
	}
	return remote.NewElsewhere(o.SSH, all)
}

// Env is Options.Env with the machines runwatch reaches, each lock asked about afresh.
func (r *Roots) Env() model.Env {
	env := r.opts.Env()
	if r.reach != nil {
		env.Elsewhere = r.reach
	}
	return env
}

// Read is what a one-off read found beside the runs: the local folders it could not list, and each host's
// health (a host that could not answer is failed, with why, and its runs are absent).
type Read struct {
	Unreadable []*state.UnreadableDirError
	Hosts      []model.HostHealth
}

// Read reads every run once: each local one, judged in env, to local as soon as it is read (in no set
// order), then each host's, judged by its host, to remote.
func (r *Roots) Read(ctx context.Context, env model.Env, local, remoteRun func(model.Run)) (Read, error) {
	var out Read
	if len(r.Local) > 0 || len(r.Remote) == 0 {
		unreadable, err := state.SplitUnreadable(state.LoadEachFound(r.Local, r.opts.MaxDepth, env, local))
		if err != nil {
			return out, err
		}
		out.Unreadable = unreadable
	}
	if len(r.Remote) > 0 {
		var runs []model.Run
		runs, out.Hosts = remote.Snapshot(ctx, r.opts.SSH, r.Remote, r.opts.Given.args(false), r.reach, r.opts.StaleAfter)
		for _, run := range runs {
			remoteRun(run)
		}
	}
	return out, nil
}

// Watch follows the runs under the roots: Local watches the local paths (nil with remote roots alone),
// Remote follows the hosts (nil without remote roots).
type Watch struct {
	Local  *watch.Watcher
	Remote *remote.Watcher
}

// Watch starts following the roots. progressive is watch.Options.Progressive: the local runs arrive
// through the updates as they are read, and the snapshot is empty.
func (r *Roots) Watch(progressive bool) (*Watch, error) {
	w := &Watch{}
	if len(r.Local) > 0 || len(r.Remote) == 0 {
		var elsewhere model.Elsewhere
		if r.reach != nil {
			elsewhere = r.reach.Watching(JudgeEvery)
		}
		lw, err := watch.New(watch.Options{
			Paths: r.Local, MaxDepth: r.opts.MaxDepth, Poll: r.opts.Poll, StaleAfter: r.opts.StaleAfter,
			Liveness: r.opts.Liveness, StageOrders: r.opts.StageOrders, Elsewhere: elsewhere, Progressive: progressive,
			// The dashboard is the one progressive watch; its panes show no artifacts' listing, while events'
			// lines and status carry it.
			NoArtifactListing: progressive,
		})
		if err != nil {
			return nil, err
		}
		w.Local = lw
	}
	if len(r.Remote) > 0 {
		w.Remote = remote.Watch(r.opts.SSH, r.Remote, remote.Options{Args: r.opts.Given.args(true), Elsewhere: r.reach,
			JudgeEvery: JudgeEvery, StaleAfter: r.opts.StaleAfter})
	}
	return w, nil
}

// Snapshot is the local runs as first read (none with remote roots alone, or a progressive watch).
func (w *Watch) Snapshot() []model.Run {
	if w.Local == nil {
		return nil
	}
	return w.Local.Snapshot()
}

// LocalUpdates are the local watcher's batches; nil (never ready) without one.
func (w *Watch) LocalUpdates() <-chan watch.Update {
	if w.Local == nil {
		return nil
	}
	return w.Local.Updates()
}

// RemoteUpdates are the hosts' batches; nil (never ready) without remote roots.
func (w *Watch) RemoteUpdates() <-chan remote.Update {
	if w.Remote == nil {
		return nil
	}
	return w.Remote.Updates()
}

// Close stops following: the hosts first, then the local watcher.
func (w *Watch) Close() {
	if w.Remote != nil {
		w.Remote.Close()
	}
	if w.Local != nil {
		w.Local.Close()
	}
}

// Unreached is the host of hosts that failed before it was ever reached, and why: a command that
// cannot show a host's state as it goes (notify) stops on it, as status does, rather than watch nothing.
func Unreached(hosts []model.HostHealth) (model.HostHealth, bool) {
	for _, h := range hosts {
		if h.Error != "" && h.LastSeen == nil && (h.State == model.HostReconnecting || h.State == model.HostFailed) {
			return h, true
		}
	}
	return model.HostHealth{}, false
}
