package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"runwatch/model"
	"runwatch/state/envfile"
)

// ErrNoRun and ErrAmbiguousRun say why FindRun found no one run, so callers can choose exit codes.
var (
	ErrNoRun        = errors.New("no such run")
	ErrAmbiguousRun = errors.New("ambiguous run")
)

// FindRun finds RUN (arg), given as a run directory, a state file, or a unique prefix of a run id under
// roots (the config's roots, else the defaults), walked to maxDepth as Discover walks. An exact id beats a
// prefix; an ambiguous prefix lists the candidates. It also returns the runs of roots when it walked them
// to find RUN (nil when RUN was a path).
func FindRun(arg string, roots []string, maxDepth int) (Location, []Location, error) {
	if st, err := os.Stat(arg); err == nil {
		locs, err := Discover([]string{arg}, 1)
		if err != nil && len(locs) == 0 {
			return Location{}, nil, err
		}
		if st.IsDir() {
			// A run dir holds its own state file; a project root yields its features.
			abs, _ := filepath.Abs(arg)
			var own []Location
			for _, l := range locs {
				if l.Dir == abs {
					own = append(own, l)
				}
			}
			if len(own) > 0 {
				locs = own
			}
		}
		loc, err := PickRun(arg, locs, nil)
		return loc, nil, err
	}
	searched := append([]string(nil), roots...)
	locs, err := Discover(searched, maxDepth)
	pick := matchRun(locs, arg)
	if len(pick) == 0 {
		// Standing in a run's folder (or above it), its id works even when the config names other roots.
		if cwd, cerr := os.Getwd(); cerr == nil && !coveredBy(cwd, searched) {
			searched = append(searched, cwd)
			more, merr := Discover([]string{cwd}, maxDepth)
			// Standing in a folder inside a run's (its lock/, a report's folder), the run around it.
			more = append(more, runAround(cwd)...)
			locs, pick = append(locs, more...), matchRun(more, arg)
			err = errors.Join(err, merr)
		}
	}
	if len(locs) == 0 && err != nil {
		return Location{}, nil, err
	}
	loc, err := PickRun(arg, pick, searched)
	if len(pick) == 0 && arg != "" {
		if near := runsContaining(locs, arg); len(near) > 0 {
			err = fmt.Errorf("%w; did you mean %s?", err, strings.Join(near, " or "))
		}
	}
	return loc, locs, err
}

// runAround is the run whose folder holds dir below it: the nearest folder above dir that is a run's.
func runAround(dir string) []Location {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		locs, _ := Discover([]string{d}, 1)
		for _, l := range locs {
			if l.Dir == d {
				return []Location{l}
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// runsContaining are the ids (at most three) of the runs whose id holds arg anywhere, as the dashboard's
// filter finds them: RUN is the start of an id, and `brief billing` should point at new-billing-page-….
func runsContaining(locs []Location, arg string) []string {
	const most = 3
	var ids []string
	lower := strings.ToLower(arg)
	for _, l := range locs {
		if id := LocationID(l); strings.Contains(strings.ToLower(id), lower) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if len(ids) > most {
		ids = append(ids[:most], "…")
	}
	return ids
}

// coveredBy says dir is one of roots (as given or absolute), so a walk of roots already saw it.
func coveredBy(dir string, roots []string) bool {
	for _, r := range roots {
		if abs, err := filepath.Abs(r); err == nil && abs == dir {
			return true
		}
	}
	return false
}

// RunName is what RUN is matched against of a run: its id, its folder and state file, and the RUN_ID its
// state file says (resumable runs; "" for others), asked only when no id is RUN exactly (nil: not asked).
type RunName struct {
	ID, Dir, StatePath string
	RunID              func() string
}

// MatchRun is the runs of cands that RUN (arg) names, by the one rule of every command that takes RUN: those
// whose id is arg, or whose folder or state file is path (arg as found on disk, absolute; "" when it is
// not), else those whose RUN_ID is arg (the id the run's own files and log lines use, docs/FORMATS.md B.1,
// which is not always the end of the folder's name), else those whose id starts with arg.
func MatchRun[T any](cands []T, arg, path string, name func(T) RunName) []T {
	var exact, prefix []T
	names := make([]RunName, len(cands))
	for i, c := range cands {
		n := name(c)
		names[i] = n
		switch {
		case n.ID == arg || path != "" && (n.Dir == path || n.StatePath == path):
			exact = append(exact, c)
		case strings.HasPrefix(n.ID, arg):
			prefix = append(prefix, c)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	var byRunID []T
	for i, c := range cands {
		if names[i].RunID == nil {
			continue
		}
		if id := names[i].RunID(); id != "" && id == arg {
			byRunID = append(byRunID, c)
		}
	}
	if len(byRunID) > 0 {
		return byRunID
	}
	return prefix
}

// matchRun is MatchRun over locations, reading a resumable run's RUN_ID from its state file.
func matchRun(locs []Location, arg string) []Location {
	return MatchRun(locs, arg, "", func(l Location) RunName {
		return RunName{ID: LocationID(l), Dir: l.Dir, StatePath: l.StatePath, RunID: func() string {
			if l.Kind != model.KindResumable {
				return ""
			}
			if f := readStateEnv(l.StatePath); f != nil {
				v, _ := f.Get("RUN_ID")
				return strings.TrimSpace(v)
			}
			return ""
		}}
	})
}

// RunNameOf is what RUN is matched against of a run read (model.Run).
func RunNameOf(r *model.Run) RunName {
	return RunName{ID: r.ID, Dir: r.Dir, StatePath: r.StatePath, RunID: func() string {
		if r.Resumable == nil {
			return ""
		}
		return strings.TrimSpace(r.Resumable.RunID)
	}}
}

// readStateEnv is a resumable run's state file, nil when it cannot be read; a file with a line that does not
// parse still gives the keys it holds.
func readStateEnv(path string) *envfile.File {
	f, err := envfile.ReadFile(path)
	if err != nil && !errors.As(err, new(*envfile.ParseError)) {
		return nil
	}
	return f
}

// LocationID is the run id as the readers set it, known without reading the run: the feature folder is
// named by feature_id, and a resumable run by its folder (or <name> of <name>.state.env).
func LocationID(l Location) string {
	base := filepath.Base(l.StatePath)
	if l.Kind == model.KindResumable && base != "state.env" {
		return strings.TrimSuffix(base, ".state.env")
	}
	return filepath.Base(l.Dir)
}

// PickRun is the one run of locs, or why not; searched are the roots RUN was looked for under, which "no
// such run" names (nil: RUN was a path).
func PickRun(arg string, locs []Location, searched []string) (Location, error) {
	switch len(locs) {
	case 0:
		if len(searched) == 0 {
			return Location{}, fmt.Errorf("%w: %q is neither a run directory nor the start of a run id", ErrNoRun, arg)
		}
		where := make([]string, len(searched))
		for i, r := range searched {
			where[i] = r
			if abs, err := filepath.Abs(r); err == nil && abs != r {
				where[i] = r + " (" + abs + ")"
			}
		}
		return Location{}, fmt.Errorf("%w: %q is neither a run directory nor the start of a run id under %s; "+
			"--root DIR looks elsewhere", ErrNoRun, arg, strings.Join(where, ", "))
	case 1:
		return locs[0], nil
	}
	names := make([]string, 0, len(locs))
	for _, l := range locs {
		names = append(names, LocationID(l)+" ("+l.Dir+")")
	}
	sort.Strings(names)
	return Location{}, fmt.Errorf("%w: %q matches %d runs:\n  %s", ErrAmbiguousRun, arg, len(locs), strings.Join(names, "\n  "))
}
