package state

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

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
		run = jonggrang.LoadFound(loc.Dir, loc.StatePath, env)
		if run.ProjectRoot == "" {
			run.ProjectRoot = loc.ProjectRoot
		}
	default:
		run = resumable.Load(loc.StatePath, env)
	}
	if loc.Archived && !run.Archived {
		run.Archived = true
	}
	// The location's paths are kept by the watcher too: a run's own spelling of the same path is a second
	// copy of it (issue 35).
	if run.StatePath == "" || run.StatePath == loc.StatePath {
		run.StatePath = loc.StatePath
	}
	if run.Dir == "" || run.Dir == loc.Dir {
		run.Dir = loc.Dir
	}
	return run
}

// LoadEach loads every location, on every core (reading many runs is bound by parsing and by one syscall
// after another per file, and the runs share nothing but caches that lock), and hands each run to each as
// soon as it is read, from several goroutines at once, so a caller that needs one run at a time (status,
// streaming its document) never holds them all.
func LoadEach(locs []Location, env model.Env, each func(i int, r model.Run)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(locs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(locs) {
					return
				}
				each(i, Load(locs[i], env))
			}
		}()
	}
	wg.Wait()
}

// LoadEachFound finds the runs under paths as DiscoverEach does and loads each as soon as it is found, on
// every core, handing each run to each from several goroutines at once: it holds neither the list of
// locations nor the runs (status over 100,000 runs held 22 MB of locations while it read them). The runs
// come in no set order. The error is Discover's.
func LoadEachFound(paths []string, maxDepth int, env model.Env, each func(model.Run)) error {
	locs := make(chan Location, 64)
	var err error
	go func() {
		defer close(locs)
		err = DiscoverEach(paths, maxDepth, func(loc Location) { locs <- loc })
	}()
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for loc := range locs {
				each(Load(loc, env))
			}
		})
	}
	wg.Wait()
	return err
}
