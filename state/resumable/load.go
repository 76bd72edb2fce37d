// Package resumable reads runs of the "resumable-execution" convention (docs/FORMATS.md Convention B): a run
// folder holding state.env, checklist.state.env, run.log, artifacts/ and a lock at the path in LOCK_FILE.
//
// Load never panics and never reads a whole run.log: it takes the log's size and the bounded scan of its stage
// entries (runlog.ReadStageEvidence). Everything it cannot read or understand
// becomes a problem on the run.
package resumable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"runwatch/model"
	"runwatch/state/envfile"
	"runwatch/state/runlog"
	"runwatch/state/safefile"
)

// runFiles are the paths of one run, derived from the state file's name (docs/FORMATS.md B.1).
type runFiles struct {
	id         string
	dir        string
	state      string
	checklists []string // candidates, first existing wins
	log        string
	// variant is true for <name>.state.env, whose siblings' names are less settled than state.env's.
	variant bool
	// defaultLocks are tried when LOCK_FILE is unset.
	defaultLocks []string
}

func filesFor(statePath string) runFiles {
	dir := filepath.Dir(statePath)
	base := filepath.Base(statePath)
	if name, ok := strings.CutSuffix(base, ".state.env"); ok && base != "state.env" && name != "" {
		return runFiles{
			id: name, dir: dir, state: statePath, variant: true,
			checklists: []string{
				model.ChildPath(dir, name+".checklist.state.env"),
				model.ChildPath(dir, name+"-checklist.state.env"),
				model.ChildPath(dir, "checklist.state.env"),
			},
			log:          model.ChildPath(dir, name+".log"),
			defaultLocks: []string{model.ChildPath(dir, name+".state.lock"), model.ChildPath(dir, name+".lock")},
		}
	}
	return runFiles{
		id: filepath.Base(dir), dir: dir, state: statePath,
		checklists:   []string{model.ChildPath(dir, "checklist.state.env")},
		log:          model.ChildPath(dir, "run.log"),
		defaultLocks: []string{model.ChildPath(dir, "run.lock")},
	}
}

// Load reads the run whose state file is statePath (state.env or <name>.state.env) with its sibling
// checklist, log, lock and artifacts, and judges its lock with env.
func Load(statePath string, env model.Env) model.Run {
	rf := filesFor(statePath)
	run := model.Run{
		ID: rf.id, Kind: model.KindResumable, Dir: rf.dir, Title: rf.id, StatePath: statePath,
		Stages: []model.Stage{}, Flags: []model.Flag{}, Locks: []model.Lock{}, Problems: []model.Problem{},
		Gates: []model.Gate{},
	}
	det := &model.ResumableDetail{Keys: model.PackKVs([]model.KV{}), ChecklistKeys: model.PackKVs([]model.KV{}),
		StageOrderSource: "natural"}
	run.Resumable = det
	if strings.Contains(filepath.Base(rf.dir), ".reset-") || strings.Contains(rf.id, ".reset-") {
		run.Archived = true
		run.AddProblem(model.SeverityInfo, model.CodeArchived, rf.dir,
			"archived run (renamed *.reset-* by the convention's reset); shown for reference only")
	}
	var mtimes []time.Time

	state := readEnv(&run, statePath, envCodes{model.CodeStateMissing, model.CodeStateUnreadable,
		model.CodeStateUnparsable, model.CodeStateTooLarge}, "state file", model.SeverityError)
	if state.mtime != nil {
		mtimes = append(mtimes, *state.mtime)
	}
	if state.file != nil {
		det.Keys = model.PackKVs(state.file.Entries())
	}
	get := func(key string) string { v, _ := det.Value(key); return v }
	det.RunID, det.TaskName = get("RUN_ID"), get("TASK_NAME")
	det.LockFile = get("LOCK_FILE")
	det.ResumeHint, det.ResumeTarget = get("LAST_RESUME_HINT"), get("RESUME_TARGET_STAGE")
	det.LastCompleted = get("LAST_COMPLETED_STAGE")
	if det.TaskName != "" {
		run.Title = det.TaskName
	}
	run.RawStatus = get("STAGE_STATUS")

	checklistPath := rf.checklists[0]
	for _, p := range rf.checklists {
		if len(rf.checklists) == 1 {
			break // the one candidate is read whether it is there or not: no look first
		}
		if _, err := os.Lstat(p); err == nil {
			checklistPath = p
			break
		}
	}
	det.ChecklistPath = checklistPath
	// The generic skill names checklist.state.env; for <name>.state.env variants no public plan says where the
	// checklist lives, so its absence is a warning there rather than a stop condition.
	missingChecklistSeverity := model.SeverityError
	if rf.variant {
		missingChecklistSeverity = model.SeverityWarning
	}
	if state.missing {
		// Both files stay behind when a run folder travels; the missing state already says so.
		missingChecklistSeverity = model.SeverityInfo
	}
	checklist := readEnv(&run, checklistPath, envCodes{model.CodeChecklistMissing, model.CodeChecklistUnreadable,
		model.CodeChecklistUnparsable, model.CodeStateTooLarge}, "checklist", missingChecklistSeverity)
	if checklist.mtime != nil {
		mtimes = append(mtimes, *checklist.mtime)
	}
	if checklist.file != nil {
		det.ChecklistKeys = model.PackKVs(checklist.file.Entries())
	}

	in := stageInputs{stateLoaded: state.file != nil, stateMissing: state.missing, config: env.StageOrders}
	in.schema = loadArtifacts(&run, rf, det, !env.NoArtifactListing)
	if readLogRef(&run, rf.log, &mtimes) {
		// The log's two 1 MiB windows are read only where the order needs them; otherwise its tail says
		// what the latest word on each stage is.
		if !in.stateMissing && orderSettledWithoutLog(run.ID, det, in) {
			in.log, in.logOK = runlog.ReadStageTail(rf.log)
		} else {
			in.log, in.logOK = runlog.ReadStageEvidence(rf.log)
		}
		run.Log.Undone = in.log.Undone
	}

	buildStages(&run, det, in)
	loadLock(&run, rf, env)
	if state.missing {
		currentFromLog(&run, in.log)
	} else {
		markCurrentStage(&run, get("CURRENT_STAGE"))
	}
	attachChecklist(&run, det.ChecklistKeys, checklistPath)
	addFlags(&run, det)
	checkConsistency(&run, checklistPath)
	checkCheckpoints(&run, det)
	checkBlocked(&run, det, in.log)
	checkOrder(&run, det)
	addCurrentGate(&run)

	for _, t := range mtimes {
		if t.After(run.UpdatedAt) {
			run.UpdatedAt = t
		}
	}
	stageTimes(&run, in.log)
	active := run.UpdatedAt
	for _, cp := range det.Checkpoints {
		if cp.Timestamp != nil && cp.Timestamp.After(active) {
			active = *cp.Timestamp
		}
	}
	if !active.IsZero() {
		run.ActiveAt = &active
	}
	capProblems(&run)
	model.FinalizeRun(&run)
	return run
}

// maxProblemsPerCode keeps a hostile file (thousands of malformed lines or open items) from burying the
// problems that matter; the rest are counted, not dropped silently.
const maxProblemsPerCode = 20

func capProblems(run *model.Run) {
	count := map[string]int{}
	kept := run.Problems[:0]
	var overflow []model.Problem
	for _, p := range run.Problems {
		count[p.Code]++
		switch n := count[p.Code]; {
		case n <= maxProblemsPerCode:
			kept = append(kept, p)
		case n == maxProblemsPerCode+1:
			overflow = append(overflow, p)
		}
	}
	for _, p := range overflow {
		p.Message = fmt.Sprintf("… and %d more %s problems like the ones above", count[p.Code]-maxProblemsPerCode, p.Code)
		kept = append(kept, p)
	}
	run.Problems = kept
}

// envCodes are the problem codes for one kind of env file.
type envCodes struct{ missing, unreadable, unparsable, tooLarge string }

type envRead struct {
	file    *envfile.File
	mtime   *time.Time
	missing bool
}

// readEnv reads an env file, turning every failure into a problem that names the file. A file with some
// malformed lines still yields its good lines.
func readEnv(run *model.Run, path string, codes envCodes, what string, missingSev model.Severity) envRead {
	var out envRead
	f, fi, err := envfile.ReadFileInfo(path)
	if fi != nil && fi.Mode().IsRegular() {
		t := fi.ModTime()
		out.mtime = &t
	}
	out.file = f
	if err == nil {
		return out
	}
	var pe *envfile.ParseError
	var nr *envfile.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		out.missing = true
		run.AddProblem(missingSev, codes.missing, path, fmt.Sprintf("%s %s is missing", what, path))
	case errors.Is(err, envfile.ErrTooLarge):
		run.AddProblem(model.SeverityError, codes.tooLarge, path, fmt.Sprintf("%s %s was not loaded: %v", what, path, err))
	case errors.As(err, &nr):
		run.AddProblem(model.SeverityError, codes.unreadable, path, fmt.Sprintf("%s %s is %v", what, path, err))
	case errors.As(err, &pe):
		for _, e := range f.Errors() {
			run.AddProblem(model.SeverityError, codes.unparsable, path, fmt.Sprintf("%s %s: %v", what, path, e))
		}
	default:
		run.AddProblem(model.SeverityError, codes.unreadable, path, fmt.Sprintf("%s %s cannot be read: %v", what, path, err))
	}
	return out
}

// readLogRef records the log's size without reading it, and reports whether it is a regular file that may
// be scanned.
func readLogRef(run *model.Run, path string, mtimes *[]time.Time) bool {
	fi, err := safefile.Stat(path)
	var nr *safefile.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false
	case errors.As(err, &nr):
		run.AddProblem(model.SeverityWarning, model.CodeLogUnreadable, path, fmt.Sprintf("log %s is %v; it is not read", path, err))
		return false
	case err != nil:
		run.AddProblem(model.SeverityWarning, model.CodeLogUnreadable, path, fmt.Sprintf("log %s cannot be read: %v", path, err))
		return false
	}
	run.Log = &model.LogRef{Path: path, SizeBytes: fi.Size()}
	*mtimes = append(*mtimes, fi.ModTime())
	return true
}

// stageTimes gives each stage its start and end from run.log (the latest stage_start, the completion entry
// after it) and its checkpoint (the end, when the log has none). A done stage the log never says started
// began when the stage before it ended, as the writers move straight on; an unfinished one has a start only
// when the log says so (a paused run's next stage has not begun).
func stageTimes(run *model.Run, ev runlog.StageEvidence) {
	// Worked out first and made after, so that the times the log gives are one array of the run's, not an
	// object each (issue 35).
	type given struct {
		start, end             time.Time
		newStart, newEnd, drop bool
	}
	gv := make([]given, len(run.Stages))
	var prevEnd time.Time
	hasPrev, made := false, 0
	for i := range run.Stages {
		st, g := &run.Stages[i], &gv[i]
		sp := ev.Spans[strings.ToUpper(st.Key)]
		hasStart, hasEnd := st.StartedAt != nil, st.CompletedAt != nil
		if hasStart {
			g.start = *st.StartedAt
		}
		if hasEnd {
			g.end = *st.CompletedAt
		}
		if !hasStart && !sp.Start.IsZero() {
			g.start, hasStart, g.newStart = sp.Start, true, true
		}
		if st.Status.Done() && !hasEnd && !sp.End.IsZero() {
			g.end, hasEnd, g.newEnd = sp.End, true, true
		}
		if !hasStart && hasPrev && st.Status.Done() {
			g.start, hasStart, g.newStart = prevEnd, true, true
		}
		if hasStart && hasEnd && g.end.Before(g.start) {
			g.drop, g.newStart = true, false // the files disagree: no duration rather than a wrong one
		}
		if hasEnd {
			prevEnd, hasPrev = g.end, true
		}
		if g.newStart {
			made++
		}
		if g.newEnd {
			made++
		}
	}
	times := make([]time.Time, 0, made)
	for i, g := range gv {
		st := &run.Stages[i]
		if g.drop {
			st.StartedAt = nil
		}
		if g.newStart {
			times = append(times, g.start)
			st.StartedAt = &times[len(times)-1]
		}
		if g.newEnd {
			times = append(times, g.end)
			st.CompletedAt = &times[len(times)-1]
		}
	}
}
