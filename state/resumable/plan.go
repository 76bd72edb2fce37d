package resumable

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"runwatch/model"
	"runwatch/state/safefile"
)

// maxPlanSize bounds what is read of a plan. Real plans are tens of KiB; past this the file is not a plan
// a person reads, and refusing it keeps a hostile PLAN_PATH (a log, an image) from costing memory.
const maxPlanSize = 1 << 20

// Plan is the run's plan as found here: the file at PLAN_PATH, or why none was read.
type Plan struct {
	Key  string // PLAN_PATH as state.env writes it; "" when the state file names none
	Path string // the file read; "" when none was
	Text string
	// Note says, when Path is "", why the plan is no evidence here.
	Note string
}

// planCandidates lists where the plan named by PLAN_PATH may be here, best first. A relative PLAN_PATH is
// taken against REPO_ROOT first (the writers run in the repository, and plans live there), then against the
// run folder. Otherwise it is resolved like LOCK_FILE (relocate): as written, then re-rooted at this run
// folder when the run came from another machine.
func planCandidates(dir, p string, det *model.ResumableDetail) []string {
	var out []string
	if !filepath.IsAbs(p) {
		if repo, _ := det.Value("REPO_ROOT"); filepath.IsAbs(strings.TrimSpace(repo)) {
			out = append(out, filepath.Join(strings.TrimSpace(repo), p))
		}
	}
	for _, c := range relocate(p, dir, det) {
		if len(out) == 0 || out[0] != c {
			out = append(out, c)
		}
	}
	return out
}

// ReadPlan reads the plan of the run whose state file is statePath, given the state file's keys: the first
// candidate place that exists, only if it is a regular file (never a FIFO or device, through
// safefile) of at most maxPlanSize bytes. A plan that is missing or cannot be read is no evidence: Note says
// why, naming the path.
func ReadPlan(statePath string, keys model.KVs) Plan {
	det := &model.ResumableDetail{Keys: keys}
	raw, _ := det.Value("PLAN_PATH")
	pl := Plan{Key: strings.TrimSpace(raw)}
	if pl.Key == "" {
		pl.Note = "state.env names no PLAN_PATH"
		return pl
	}
	candidates := planCandidates(filepath.Dir(statePath), pl.Key, det)
	for _, c := range candidates {
		data, _, err := safefile.Read(c, maxPlanSize)
		var nr *safefile.NotRegularError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case errors.As(err, &nr):
			pl.Note = fmt.Sprintf("the plan %s is %s, so it is not read", c, nr.Kind())
		case errors.Is(err, safefile.ErrTooLarge):
			pl.Note = fmt.Sprintf("the plan %s is not read: %v", c, err)
		case err != nil:
			pl.Note = fmt.Sprintf("the plan %s cannot be read: %v", c, err)
		default:
			pl.Path, pl.Text = c, string(data)
		}
		return pl
	}
	pl.Note = fmt.Sprintf("the plan at PLAN_PATH %s is not on this machine", pl.Key)
	if others := otherThan(candidates, pl.Key); len(others) > 0 {
		pl.Note += " (nor at " + strings.Join(others, ", ") + ")"
	}
	return pl
}

// planChain reads the plan and turns what it says about the order of ids into a chain (nil when it says
// nothing that settles it) and, when it does not, a note saying why.
func planChain(statePath string, det *model.ResumableDetail, ids []string) (*model.OrderChain, string) {
	pl := ReadPlan(statePath, det.Keys)
	if pl.Path == "" {
		if pl.Key == "" {
			return nil, ""
		}
		return nil, pl.Note + ", so it is no evidence of the stage order"
	}
	det.PlanPath = pl.Path
	name := filepath.Base(pl.Path)
	o := model.OrderFromPlan(pl.Text, ids)
	switch {
	case o.Conflict != "":
		return nil, fmt.Sprintf("the plan %s names the stages in two orders (%s), so it settles nothing", name, o.Conflict)
	case o.IDs == nil:
		return nil, fmt.Sprintf("the plan %s names the stages (%s) in no one line or list in one order, so it settles nothing",
			name, strings.Join(ids, ", "))
	}
	return &model.OrderChain{Source: "plan", IDs: o.IDs, Checked: true,
		Says: fmt.Sprintf("order from the plan %s, %s", name, o.Where())}, ""
}

func otherThan(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
