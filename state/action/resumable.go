package action

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"runwatch/model"
	"runwatch/plural"
	"runwatch/shellword"
	"runwatch/state/atomicfile"
	"runwatch/state/envfile"
	"runwatch/state/resumable"
	"runwatch/suggest"
	"runwatch/termsafe"
)

// resumableState is what a resumable action read: state.env (and checklist.state.env when needed).
type resumableState struct {
	statePath, checklistPath string
	stateData, checkData     []byte
	stateSnap, checkSnap     atomicfile.Snapshot
	state, checklist         *envfile.File
}

func (p *Plan) readResumable(run model.Run, withChecklist bool) (*resumableState, error) {
	if run.Kind != model.KindResumable {
		return nil, refusef("%s is a %s run; this action needs a resumable (state.env) run", run.ID, run.Kind)
	}
	rs := &resumableState{}
	var err error
	if rs.statePath, rs.stateData, rs.stateSnap, err = p.readForEdit(run.StatePath); err != nil {
		return nil, err
	}
	if rs.state, err = parseEnv(run.StatePath, rs.stateData); err != nil {
		return nil, err
	}
	if withChecklist {
		cp := filepath.Join(run.Dir, "checklist.state.env")
		if run.Resumable != nil && run.Resumable.ChecklistPath != "" {
			cp = run.Resumable.ChecklistPath
		}
		if rs.checklistPath, rs.checkData, rs.checkSnap, err = p.readForEdit(cp); err != nil {
			return nil, err
		}
		if rs.checklist, err = parseEnv(cp, rs.checkData); err != nil {
			return nil, err
		}
	}
	p.LockPath, err = p.resumableLockPath(run, rs.state)
	if err != nil {
		return nil, err
	}
	p.lockRunID, _ = rs.state.Get("RUN_ID")
	p.LogPath = logPathOf(run)
	return rs, nil
}

// parseEnv refuses a file with any malformed line: editing it would mean guessing.
func parseEnv(path string, data []byte) (*envfile.File, error) {
	f, err := envfile.Parse(data)
	if err != nil {
		return nil, refusef("%s cannot be edited safely: %v", path, err)
	}
	return f, nil
}

// resumableLockPath is where this run's lock lives: the lock the reader found, else the first place the
// reader would look (resumable.LockCandidates) that can hold it, so the lock we take is the lock every reader
// sees. A place can hold it when its folder exists, or when the folder would lie inside the run folder: the
// mining tool's LOCK_FILE is <run>/lock/active.lock, and lock/ exists only while it runs (git carries no
// empty folder), so taking the next candidate whose folder happens to exist (the run folder itself) would put
// our lock where that tool never looks. Such a folder is created by Apply (p.lockDir) and taken back after.
// The path comes from file content, so it must resolve inside the run root: we create it.
func (p *Plan) resumableLockPath(run model.Run, state *envfile.File) (string, error) {
	for _, l := range run.Locks {
		if l.Kind == model.KindResumable && l.Path != "" {
			return atomicfile.Resolve(p.Root, l.Path)
		}
	}
	runDir := filepath.Dir(run.StatePath)
	candidates := resumable.LockCandidates(run.StatePath, model.PackKVs(state.Entries()))
	for _, c := range candidates {
		dir := filepath.Dir(c)
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return atomicfile.Resolve(p.Root, c)
		}
		if rel, err := filepath.Rel(runDir, c); err == nil && dir != runDir && atomicfile.Within(runDir, dir) {
			realRun, err := atomicfile.Resolve(p.Root, runDir)
			if err != nil {
				return "", err
			}
			path := filepath.Join(realRun, rel)
			p.lockDir = filepath.Dir(path)
			return path, nil
		}
	}
	lf, _ := state.Get("LOCK_FILE")
	return "", refusef("LOCK_FILE %q: none of the folders it may live in exists here (%s)", lf, strings.Join(candidates, ", "))
}

// editEnv is how an action writes an env file: the keys it sets plus the file's own bookkeeping keys
// (stampSets), so that no runwatch write leaves them behind.
// The redo is the same edit for a writer's newer bytes (raced.go); it reads f before the edit changes it.
func (p *Plan) editEnv(path string, f *envfile.File, sets []model.KV) ([]byte, redoFunc, error) {
	sets = append(sets, p.stampSets(path, f)...)
	redo := envRedo(path, f, sets)
	out, err := editEnv(path, f, sets)
	return out, redo, err
}

// editEnv sets keys in an env file keeping every other byte, then parses the result and checks that exactly
// those keys changed.
func editEnv(path string, f *envfile.File, sets []model.KV) ([]byte, error) {
	before := map[string]string{}
	for _, e := range f.Entries() {
		before[e.Key] = e.Value
	}
	for _, s := range sets {
		if IsImmutable(s.Key) {
			return nil, refusef("%s is an immutable-contract key; runwatch never edits it", s.Key)
		}
		if err := f.TrySet(s.Key, s.Value); err != nil {
			return nil, refusef("%s: %v", path, err)
		}
		before[s.Key] = s.Value
	}
	out := f.Bytes()
	check, err := envfile.Parse(out)
	if err != nil {
		return nil, fmt.Errorf("edit check failed for %s, nothing written: result does not parse: %v", path, err)
	}
	after := check.Entries()
	if len(after) != len(before) {
		return nil, fmt.Errorf("edit check failed for %s, nothing written: %d keys, want %d", path, len(after), len(before))
	}
	for _, e := range after {
		if want, ok := before[e.Key]; !ok || want != e.Value {
			return nil, fmt.Errorf("edit check failed for %s, nothing written: %s = %q, want %q", path, e.Key, e.Value, want)
		}
	}
	return out, nil
}

// refuseIfLocked refuses when a lock other than ours holds the run: live by name, stale or unknown with
// the way out. runwatch's own lock whose process is gone is not in the way: Apply takes it over.
func (p *Plan) refuseIfLocked(run model.Run) error {
	lockPath := p.LockPath
	for _, l := range run.Locks {
		if l.Verdict != model.VerdictLive {
			continue
		}
		// The run was read a moment ago; a lock released since (often runwatch's own, by the action just
		// before this one) is no longer in the way. One taken since is caught when Apply takes the lock.
		if _, err := os.Lstat(l.Path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		return refusef("a live lock holds %s: %s (%s)", run.ID, lockHolder(l), strings.Join(l.Reasons, "; "))
	}
	if lockPath == "" {
		return nil
	}
	if _, err := os.Lstat(lockPath); err == nil {
		for _, l := range run.Locks {
			if sameFile(l.Path, lockPath) {
				if why, dead := p.ownDeadLock([]byte(l.Raw)); dead {
					p.takeover = why
					return nil
				}
				if l.Verdict == model.VerdictUnknown {
					// unlock without --force asks for the holder to be typed, which a script cannot do.
					return first(ActUnlock, refusef("the run lock %s is unknown (%s); if you know its holder is gone, clear it first with: "+
						"runwatch unlock %s %s --force", lockPath, strings.Join(l.Reasons, "; "), shellword.Quote(run.ID), shellword.Quote(lockPath)))
				}
				return first(ActUnlock, refusef("the run lock %s is %s (%s); clear it first with: runwatch unlock %s",
					lockPath, l.Verdict, strings.Join(l.Reasons, "; "), shellword.Quote(run.ID)))
			}
		}
		return refusef("the run lock %s exists; reload the run to judge it, then clear it with unlock if it is stale", lockPath)
	}
	return nil
}

func lockHolder(l model.Lock) string {
	who := l.Holder
	if who == "" {
		who = filepath.Base(l.Path)
	}
	if l.PID > 0 {
		who += fmt.Sprintf(" (pid %d)", l.PID)
	}
	if l.Host != "" && !strings.Contains(l.Holder, l.Host) {
		who += " on " + l.Host
	}
	return termsafe.Plain(who, 200)
}

func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

func stageIDs(run model.Run) []string {
	ids := make([]string, len(run.Stages))
	for i, s := range run.Stages {
		ids[i] = s.Key
	}
	return ids
}

func doneKey(s model.Stage) string {
	if s.DoneKey != "" {
		return s.DoneKey
	}
	return strings.ToUpper(s.Key) + "_DONE"
}

// planResumableStep: gate on the current stage's CB items, then mark it done and move to the next stage. The
// next stage comes from evidence (run.Resumable.StageNext, docs/FORMATS.md C.1) or from the person (to); when
// neither names it the step is refused: no write rests on a guessed order.
func planResumableStep(p *Plan, run model.Run, to string) error {
	rs, err := p.readResumable(run, true)
	if err != nil {
		return err
	}
	if err := p.refuseIfLocked(run); err != nil {
		return err
	}
	cur, ok := rs.state.Get("CURRENT_STAGE")
	if !ok || cur == "" {
		return refusef("%s has no CURRENT_STAGE", run.StatePath)
	}
	idx := -1
	for i, s := range run.Stages {
		if strings.EqualFold(s.Key, cur) {
			idx = i
		}
	}
	if idx < 0 {
		return refusef("CURRENT_STAGE %q is not one of the run's stages (%s)", cur, strings.Join(stageIDs(run), ", "))
	}
	stage := run.Stages[idx]
	ids := stageIDs(run)
	var blockers []string
	items := 0
	for _, e := range rs.checklist.Entries() {
		if st, ok := model.StageForChecklistKey(e.Key, ids); ok && strings.EqualFold(st, stage.Key) {
			items++
			if strings.TrimSpace(e.Value) != "1" {
				blockers = append(blockers, fmt.Sprintf("%s=%s", e.Key, termsafe.Plain(e.Value, 20)))
			}
		}
	}
	if len(blockers) > 0 {
		return refusef("gate not met: %s cannot be marked done while %s %s not 1: %s",
			cur, plural.Count(len(blockers), "checklist item", "checklist items"), plural.Word(len(blockers), "is", "are"), strings.Join(blockers, ", "))
	}
	next, err := nextStage(run, stage, to)
	if err != nil {
		return err
	}
	sets := []model.KV{{Key: doneKey(stage), Value: "1"}}
	if ck := strings.ToUpper(stage.Key) + "_CHECKLIST_DONE"; stage.ChecklistDoneKey != "" || hasKey(rs.state, ck) {
		if stage.ChecklistDoneKey != "" {
			ck = stage.ChecklistDoneKey
		}
		if hasKey(rs.state, ck) {
			sets = append(sets, model.KV{Key: ck, Value: "1"})
		}
	}
	// Only where the writer keeps it: the mining tool does not, and one runwatch added would go stale at that
	// tool's next stage, then claim (LAST_COMPLETED_STAGE → CURRENT_STAGE) a "right after" that is false.
	// The stage_complete line says what this step did.
	if hasKey(rs.state, "LAST_COMPLETED_STAGE") {
		sets = append(sets, model.KV{Key: "LAST_COMPLETED_STAGE", Value: cur})
	}
	if next != "" {
		sets = append(sets, model.KV{Key: "CURRENT_STAGE", Value: next})
		sets = append(sets, hintSets(rs.state, cur, next, p)...)
	}
	newState, redo, err := p.editEnv(run.StatePath, rs.state, sets)
	if err != nil {
		return err
	}
	p.Files = []FileChange{{Path: rs.statePath, Snap: rs.stateSnap, Old: rs.stateData, New: newState, redo: redo}}
	fields := []string{kv("stage", cur)}
	if next != "" {
		fields = append(fields, kv("next", next))
		p.Summary = fmt.Sprintf("mark stage %s done (%s) and move CURRENT_STAGE to %s", cur, itemsAllOne(items), next)
		if to != "" {
			p.Summary += " (the next stage as you named it)"
		}
	} else {
		p.Summary = fmt.Sprintf("mark the last stage %s done (%s); finalization flags remain", cur, itemsAllOne(items))
	}
	if items == 0 {
		p.Summary += "; the stage has no checklist items"
	}
	if d := run.Resumable; d != nil && d.ReopensWithoutCheckpoint && stage.Checkpoint == nil {
		p.Warnings = append(p.Warnings, resumable.ReopenWarning(stage, d)+"; runwatch does not write checkpoints")
	}
	if d := run.Resumable; d != nil && d.Blocked != nil && strings.EqualFold(d.Blocked.Stage, stage.Key) {
		p.Warnings = append(p.Warnings, fmt.Sprintf("run.log's latest word on %s is stage_blocked (failed metrics: %s): "+
			"marking it done says its gate passed", stage.Key, termsafe.Plain(strings.Join(d.Blocked.FailedMetrics, ", "), 200)))
	}
	return p.setLog(p.LogPath, "stage_complete", fields...)
}

// nextStage is the stage CURRENT_STAGE moves to: "" when the current stage is the last (by evidence, or
// because every other stage is done). to, when given, is the person's answer where evidence is silent; it may
// not contradict evidence.
func nextStage(run model.Run, cur model.Stage, to string) (string, error) {
	known, isKnown := run.Resumable.NextStage(cur.Key)
	allOthersDone := true
	var open []string
	for _, s := range run.Stages {
		if !strings.EqualFold(s.Key, cur.Key) && !s.Status.Done() {
			allOthersDone = false
			open = append(open, s.Key)
		}
	}
	if to == "" {
		switch {
		case isKnown:
			return known, nil
		case allOthersDone:
			return "", nil
		}
		return "", refusef("the stage after %s is not known from the files (%s), and runwatch does not guess it: "+
			"choose one of %s: %s", cur.Key, orderEvidence(run), strings.Join(open, ", "), resumable.OrderAdvice(run))
	}
	target := run.Stage(to)
	switch {
	case target == nil:
		return "", refusef("--to %q is not one of the run's stages (%s)", to, strings.Join(stageIDs(run), ", "))
	case strings.EqualFold(target.Key, cur.Key):
		return "", refusef("--to %s names the current stage; name the stage that comes after it", target.Key)
	case target.Status.Done():
		return "", refusef("--to %s: that stage is already marked done; name a stage still to do (%s)", target.Key, strings.Join(open, ", "))
	case isKnown && known == "":
		return "", refusef("--to %s: the files say %s is the last stage", target.Key, cur.Key)
	case isKnown && !strings.EqualFold(known, target.Key):
		return "", refusef("--to %s: the files say the stage after %s is %s (%s); runwatch will not write an order "+
			"that contradicts them", target.Key, cur.Key, known, orderEvidence(run))
	}
	return target.Key, nil
}

func orderEvidence(run model.Run) string {
	if run.Resumable == nil || len(run.Resumable.StageOrderEvidence) == 0 {
		return "no evidence of order"
	}
	return strings.Join(run.Resumable.StageOrderEvidence, "; ")
}

// hintSets keeps LAST_RESUME_HINT and RESUME_TARGET_STAGE true where the state file has them, in their own
// style: the target becomes the next stage; the hint's word naming the stage it pointed at (the current one,
// or the one stage id it names) is replaced by the next stage, so "Resume from M3" becomes "Resume from M4".
func hintSets(state *envfile.File, cur, next string, p *Plan) []model.KV {
	var out []model.KV
	if v, ok := state.Get("RESUME_TARGET_STAGE"); ok && !strings.EqualFold(strings.TrimSpace(v), next) {
		out = append(out, model.KV{Key: "RESUME_TARGET_STAGE", Value: next})
	}
	if v, ok := state.Get("LAST_RESUME_HINT"); ok && strings.TrimSpace(v) != "" {
		if nv, ok := replaceStageWord(v, cur, next); ok {
			if nv != v {
				out = append(out, model.KV{Key: "LAST_RESUME_HINT", Value: nv})
			}
		} else {
			p.Warnings = append(p.Warnings, fmt.Sprintf("LAST_RESUME_HINT %q names no single stage to move on; "+
				"it is left as it is, so update it by hand", termsafe.Plain(v, 120)))
		}
	}
	return out
}

// replaceStageWord replaces, in hint, the word equal to cur (any case) with next; a hint that names another
// single stage-like word (it was stale) has that word replaced instead.
func replaceStageWord(hint, cur, next string) (string, bool) {
	type span struct{ from, to int }
	var words []span
	start := -1
	for i := 0; i <= len(hint); i++ {
		inWord := i < len(hint) && (isWordByte(hint[i]))
		switch {
		case inWord && start < 0:
			start = i
		case !inWord && start >= 0:
			words = append(words, span{start, i})
			start = -1
		}
	}
	for _, w := range words {
		if strings.EqualFold(hint[w.from:w.to], next) {
			return hint, true
		}
	}
	for _, w := range words {
		if strings.EqualFold(hint[w.from:w.to], cur) {
			return hint[:w.from] + next + hint[w.to:], true
		}
	}
	var ids []span
	for _, w := range words {
		if stageLike(hint[w.from:w.to]) {
			ids = append(ids, w)
		}
	}
	if len(ids) == 1 {
		return hint[:ids[0].from] + next + hint[ids[0].to:], true
	}
	return hint, false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// stageLike: an id with a number under a short prefix (S2, M14, EQ1, R9B).
func stageLike(w string) bool {
	i := 0
	for i < len(w) && (w[i] >= 'A' && w[i] <= 'Z' || w[i] >= 'a' && w[i] <= 'z') {
		i++
	}
	j := i
	for j < len(w) && w[j] >= '0' && w[j] <= '9' {
		j++
	}
	return i > 0 && i <= 4 && j > i && len(w)-j <= 2
}

// nearestItems is did-you-mean over every way an item may be named, so a short name a step off
// (M3_NO_LEGACY_TOKENS for CB_M2_NO_LEGACY_TOKENS) is answered as the whole key is: with the whole keys.
func nearestItems(key string, forms map[string]string) []string {
	var out []string
	for _, f := range suggest.Nearest(key, slices.Sorted(maps.Keys(forms))) {
		if !slices.Contains(out, forms[f]) {
			out = append(out, forms[f])
		}
	}
	return out
}

func hasKey(f *envfile.File, key string) bool {
	_, ok := f.Get(key)
	return ok
}

// planResumableCheck sets one CB_ item to 1 or 0.
func planResumableCheck(p *Plan, run model.Run, key string, done bool) error {
	rs, err := p.readResumable(run, true)
	if err != nil {
		return err
	}
	var found *model.KV
	var names []string
	var short []model.KV         // items whose part after CB_<STAGE>_ is key
	forms := map[string]string{} // each way an item may be named (CB_M2_X, M2_X, X) → its key
	for _, e := range rs.checklist.Entries() {
		if strings.HasPrefix(strings.ToUpper(e.Key), "CB_") {
			names = append(names, e.Key)
			forms[e.Key], forms[e.Key[len("CB_"):]] = e.Key, e.Key
			if strings.EqualFold(e.Key, key) {
				e := e
				found = &e
			}
			if st, ok := model.StageForChecklistKey(e.Key, stageIDs(run)); ok {
				forms[e.Key[len("CB_")+len(st)+1:]] = e.Key
				if strings.EqualFold(e.Key[len("CB_")+len(st)+1:], key) {
					short = append(short, e)
				}
			}
		}
	}
	if found == nil && len(short) == 1 {
		found = &short[0]
	}
	if found == nil && len(short) > 1 {
		var keys []string
		for _, e := range short {
			keys = append(keys, e.Key)
		}
		return refusef("%q names %d checklist items of %s (%s): give the whole key", key, len(short), rs.checklistPath, strings.Join(keys, ", "))
	}
	if found == nil {
		hint := ""
		if near := nearestItems(key, forms); len(near) > 0 {
			hint = fmt.Sprintf("; did you mean %s?", strings.Join(near, " or "))
		}
		return refusef("%s has no checklist item %q%s (items: %s)", rs.checklistPath, key, hint, strings.Join(names, ", "))
	}
	// The item is checked first, as it needs no lock: a typo was answered with the stale-lock refusal.
	if err := p.refuseIfLocked(run); err != nil {
		return err
	}
	want := "0"
	if done {
		want = "1"
	}
	if found.Value == want {
		return refusef("%s is already %s", found.Key, want)
	}
	stageKey, inStage := model.StageForChecklistKey(found.Key, stageIDs(run))
	if !done && inStage {
		if st := run.Stage(stageKey); st != nil {
			if v, _ := rs.state.Get(doneKey(*st)); strings.TrimSpace(v) == "1" {
				return refusef("refusing to untick %s: stage %s is already marked done (%s=1)", found.Key, stageKey, doneKey(*st))
			}
		}
	}
	newData, redo, err := p.editEnv(rs.checklistPath, rs.checklist, []model.KV{{Key: found.Key, Value: want}})
	if err != nil {
		return err
	}
	p.Files = []FileChange{{Path: rs.checklistPath, Snap: rs.checkSnap, Old: rs.checkData, New: newData, redo: redo}}
	verb := "tick"
	if !done {
		verb = "untick"
	}
	p.Summary = fmt.Sprintf("%s %s (%s → %s)", verb, found.Key, termsafe.Plain(found.Value, 20), want)
	return p.setLog(p.LogPath, "checklist_update", kv("key", found.Key), kv("old", found.Value), kv("new", want))
}

// variantName is <name> of a <name>.state.env state file.
func variantName(statePath string) (string, bool) {
	base := filepath.Base(statePath)
	name, ok := strings.CutSuffix(base, ".state.env")
	return name, ok && base != "state.env" && name != ""
}

// first marks a refusal as settled by another action first.
func first(act Verb, err error) error {
	if r, ok := err.(*Refused); ok {
		r.First = act
	}
	return err
}

// itemsAllOne says a stage's ticked checklist: "1 checklist item at 1", "3 checklist items all 1".
func itemsAllOne(n int) string {
	return plural.Count(n, "checklist item", "checklist items") + plural.Word(n, " at 1", " all 1")
}
