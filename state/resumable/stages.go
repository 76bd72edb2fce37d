package resumable

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"

	"runwatch/model"
	"runwatch/state/runlog"
)

// Stage ids of every scheme in docs/FORMATS.md B.3: S1, M14, M9B, R1B, CR12, EQ0, C6. Underscores never occur in
// them, which is what keeps bookkeeping keys such as PHASE_8_COMMIT4_DONE out.
var stageIDPattern = regexp.MustCompile(`^[A-Za-z]{1,4}[0-9]+[A-Za-z]{0,2}$`)

// Named stages are written S_<NAME>_DONE; CURRENT_STAGE holds the lower-case name.
var stageNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*[A-Za-z0-9]$|^[A-Za-z]$`)

// stageOfFlag recognises <STAGE>_DONE and <STAGE>_CHECKLIST_DONE keys.
func stageOfFlag(key string) (id string, checklist, named, ok bool) {
	stem, found := cutSuffixFold(key, "_DONE")
	if !found {
		return "", false, false, false
	}
	if s, c := cutSuffixFold(stem, "_CHECKLIST"); c {
		stem, checklist = s, true
	}
	if len(stem) > 2 && strings.EqualFold(stem[:2], "S_") && stageNamePattern.MatchString(stem[2:]) {
		return strings.ToLower(stem[2:]), checklist, true, true
	}
	if stageIDPattern.MatchString(stem) {
		return stem, checklist, false, true
	}
	return "", false, false, false
}

func cutSuffixFold(s, suffix string) (string, bool) {
	if len(s) > len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix) {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}

// flagValue reads a 0|1 flag. ok is false for any other value, which then counts as not set.
func flagValue(v string) (set, ok bool) {
	switch strings.TrimSpace(v) {
	case "1":
		return true, true
	case "0":
		return false, true
	}
	return false, false
}

// stageInputs is what the stages of a run are built and ordered from besides state.env's flags.
type stageInputs struct {
	stateLoaded  bool
	stateMissing bool
	log          runlog.StageEvidence
	logOK        bool
	schema       []string // the bootstrap summary's stage_schema
	config       []model.StageOrderRule
}

// buildStages creates one stage per stage id found in <STAGE>_DONE / <STAGE>_CHECKLIST_DONE keys (or, when
// state.env is missing, in checkpoints, run.log and the ledgers), spells each id as the files do, and orders
// them from evidence only (orderStages).
func buildStages(run *model.Run, det *model.ResumableDetail, in stageInputs) {
	index := map[string]int{}
	named := map[string]string{} // upper id → flag stem as spelled, for S_<NAME>_DONE stages
	// Each stage's <STAGE>_DONE value, beside the stages: what a map of every key to its value was kept for.
	doneValues := make([]string, len(run.Stages))
	for _, kv := range det.Keys.All() {
		id, isChecklist, isNamed, ok := stageOfFlag(kv.Key)
		if !ok {
			continue
		}
		i, seen := index[strings.ToUpper(id)]
		if !seen {
			i = len(run.Stages)
			index[strings.ToUpper(id)] = i
			run.Stages = append(run.Stages, model.Stage{Key: id, Name: id, Status: model.StagePending,
				Checklist: []model.ChecklistItem{}})
			doneValues = append(doneValues, "")
		}
		if isNamed {
			stem, _ := cutSuffixFold(kv.Key, "_DONE")
			stem, _ = cutSuffixFold(stem, "_CHECKLIST")
			named[strings.ToUpper(id)] = stem[2:]
		}
		st := &run.Stages[i]
		set, valid := flagValue(kv.Value)
		if !valid {
			run.AddProblem(model.SeverityWarning, model.CodeFlagValue, run.StatePath,
				fmt.Sprintf("%s: %s has value %q; only 0 and 1 are meaningful, so it counts as 0", filepath.Base(run.StatePath), kv.Key, kv.Value))
		}
		if isChecklist {
			st.ChecklistDoneKey = kv.Key
			st.ChecklistDone = &set
		} else {
			st.DoneKey, doneValues[i] = kv.Key, kv.Value
		}
	}
	for i := range run.Stages {
		st := &run.Stages[i]
		done := false
		if st.DoneKey != "" {
			done, _ = flagValue(doneValues[i])
		} else if st.ChecklistDone != nil {
			// Some plans keep only <STAGE>_CHECKLIST_DONE (docs/FORMATS.md B.8, run discovery).
			done = *st.ChecklistDone
		}
		if done {
			st.Status = model.StageCompleted
		}
	}
	if in.stateMissing {
		stagesFromEvidence(run, det, in)
	}
	if in.stateLoaded && len(run.Stages) == 0 {
		run.AddProblem(model.SeverityWarning, model.CodeNoStages, run.StatePath,
			filepath.Base(run.StatePath)+": no <STAGE>_DONE flags, so no stages can be shown")
	}
	spellStages(run, det, in, named)
	attachCheckpoints(run, det)
	orderStages(run, det, in)
}

// stagesFromEvidence builds the stages of a run whose state.env is missing from what travelled with the
// folder: checkpoints (done), run.log stage entries (done once completed) and ledger entries.
func stagesFromEvidence(run *model.Run, det *model.ResumableDetail, in stageInputs) {
	have := map[string]bool{}
	add := func(id string, done bool) {
		id = strings.TrimSpace(id)
		if id == "" || !stageIDPattern.MatchString(id) && !stageNamePattern.MatchString(id) {
			return
		}
		k := strings.ToUpper(id)
		if !have[k] {
			have[k] = true
			run.Stages = append(run.Stages, model.Stage{Key: id, Name: id, Status: model.StagePending,
				Checklist: []model.ChecklistItem{}})
		}
		if done {
			run.Stage(id).Status = model.StageCompleted
		}
	}
	for _, cp := range det.Checkpoints {
		add(cp.Stage, true)
	}
	for _, id := range in.log.Mentioned() {
		add(id, false)
	}
	for _, id := range in.log.Completes {
		add(id, true)
	}
	for _, row := range det.Ledger {
		for _, id := range row.Stages {
			add(id, false)
		}
	}
}

// spellStages keeps each stage id as the files spell it (docs/FORMATS.md C.1): CURRENT_STAGE first, then the other
// state keys that name stages, STAGE_ORDER, run.log and checkpoints. A named stage that nothing spells takes the
// style of the named stages that are spelled (the mining tool's lower case, or the flag's own EQ1), lower case
// when none is.
func spellStages(run *model.Run, det *model.ResumableDetail, in stageInputs, named map[string]string) {
	spelled := map[string]string{}
	fromState := map[string]bool{}
	note := func(ref string) {
		ref = strings.TrimSpace(ref)
		if ref == "" {
			return
		}
		if len(ref) > 2 && strings.EqualFold(ref[:2], "S_") && run.Stage(ref) == nil {
			ref = ref[2:]
		}
		if _, ok := spelled[strings.ToUpper(ref)]; !ok {
			spelled[strings.ToUpper(ref)] = ref
		}
	}
	for _, k := range []string{"CURRENT_STAGE", "LAST_COMPLETED_STAGE", "RESUME_TARGET_STAGE"} {
		v, _ := det.Value(k)
		note(v)
	}
	for k := range spelled {
		fromState[k] = true
	}
	if raw, _ := det.Value("STAGE_ORDER"); raw != "" {
		for _, ref := range splitList(raw) {
			note(ref)
		}
	}
	for _, id := range in.log.Mentioned() {
		note(id)
	}
	for _, cp := range det.Checkpoints {
		note(cp.Stage)
	}
	upper, lower := 0, 0
	for k, stem := range named {
		if ref, ok := spelled[k]; ok {
			switch ref {
			case stem:
				upper++
			case strings.ToLower(stem):
				lower++
			}
		}
	}
	for i := range run.Stages {
		st := &run.Stages[i]
		k := strings.ToUpper(st.Key)
		_, isNamed := named[k]
		// An id flag (M9B_DONE) is itself a spelling; only state.env's own stage keys override it. A named
		// stage's flag is upper case by construction, so the log and checkpoints spell it too.
		if ref, ok := spelled[k]; ok && (isNamed || fromState[k] || !in.stateLoaded) {
			st.Key, st.Name = ref, ref
			continue
		}
		if stem, ok := named[k]; ok && upper > lower {
			st.Key, st.Name = stem, stem
		}
	}
}

// attachCheckpoints puts each checkpoint file on its stage; a done stage's checkpoint is the only record of
// when it completed, since state.env holds no times.
func attachCheckpoints(run *model.Run, det *model.ResumableDetail) {
	for i := range det.Checkpoints {
		// The stage points at the detail's own checkpoint, not a copy of it: neither changes once read.
		cp := &det.Checkpoints[i]
		st := findStage(run, cp.Stage)
		if st == nil || st.Checkpoint != nil {
			continue
		}
		st.Checkpoint = cp
		if st.Status == model.StageCompleted && cp.Timestamp != nil {
			st.CompletedAt = cp.Timestamp
		}
	}
}

func splitList(raw string) []string {
	return strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// naturalID is an id whose number carries its place: S1, M9B, EQ13.
var naturalID = regexp.MustCompile(`^([A-Za-z]+)[0-9]+[A-Za-z]*$`)

// orderSettledWithoutLog reports whether a chain that needs no log (the config, STAGE_ORDER, stage_schema,
// natural ids under one prefix) names every stage of the state file's flags.
func orderSettledWithoutLog(runID string, det *model.ResumableDetail, in stageInputs) bool {
	var ids []string
	seen := map[string]bool{}
	for _, kv := range det.Keys.All() {
		if id, _, _, ok := stageOfFlag(kv.Key); ok && !seen[strings.ToUpper(id)] {
			seen[strings.ToUpper(id)] = true
			ids = append(ids, id)
		}
	}
	if len(ids) <= 1 {
		return true
	}
	covers := func(list []string) bool {
		named := map[string]bool{}
		for _, ref := range list {
			ref = strings.ToUpper(strings.TrimSpace(ref))
			named[ref] = true
			named[strings.TrimPrefix(ref, "S_")] = true
		}
		for _, id := range ids {
			if !named[strings.ToUpper(id)] {
				return false
			}
		}
		return true
	}
	if rule, ok, _ := model.MatchStageOrder(in.config, det.TaskName, runID); ok && covers(rule.Stages) {
		return true
	}
	if raw, _ := det.Value("STAGE_ORDER"); covers(splitList(raw)) {
		return true
	}
	if covers(in.schema) {
		return true
	}
	prefix := ""
	for _, id := range ids {
		m := naturalID.FindStringSubmatch(id)
		if m == nil || prefix != "" && !strings.EqualFold(prefix, m[1]) {
			return false
		}
		prefix = m[1]
	}
	return true
}

// orderStages orders the stages from evidence only (docs/FORMATS.md C.1), never from a guess: a chain that names
// every stage (the config's stage_order, STAGE_ORDER, stage_schema, ids that all carry their number under
// one prefix) settles it; otherwise the relations that run.log, the checkpoints' times and
// LAST_COMPLETED_STAGE → CURRENT_STAGE establish are combined, and the stages whose place they leave open are
// marked OrderUnknown.
func orderStages(run *model.Run, det *model.ResumableDetail, in stageInputs) {
	ids := make([]string, len(run.Stages))
	for i, s := range run.Stages {
		ids[i] = s.Key
	}
	ev := orderEvidence(run, det, in, ids)
	cur, _ := det.Value("CURRENT_STAGE")
	byKey := map[string]model.Stage{}
	for _, s := range run.Stages {
		byKey[strings.ToUpper(s.Key)] = s
	}
	curKey := ""
	if c := findStage(run, cur); c != nil {
		curKey = c.Key
	}
	// The tie-break only places stages nothing orders, for display: done ones first, then the current one.
	rank := func(id string) int {
		switch {
		case byKey[strings.ToUpper(id)].Status.Done():
			return 0
		case id == curKey:
			return 1
		}
		return 2
	}
	order := model.DeriveStageOrder(ids, ev, rank)
	if len(order.Uncertain) > 0 {
		// Only where the other files leave the order open is the plan read: it is prose a person wrote, so
		// it settles the order only where it names every stage in one order and no log line or state key
		// contradicts it.
		chain, note := planChain(run.StatePath, det, ids)
		if chain != nil {
			ev.Chains = append(ev.Chains, *chain)
			order = model.DeriveStageOrder(ids, ev, rank)
			for _, c := range order.Conflicts {
				if strings.HasPrefix(c, chain.Says) {
					note = c
				}
			}
		}
		det.PlanNote = note
	}
	applyOrder(run, det, order, byKey)
}

// applyOrder puts run's stages in the derived order and records what decided it.
func applyOrder(run *model.Run, det *model.ResumableDetail, order model.StageOrder, byKey map[string]model.Stage) {
	for i, k := range order.IDs {
		run.Stages[i] = byKey[strings.ToUpper(k)]
	}
	uncertain := map[string]bool{}
	for _, k := range order.Uncertain {
		uncertain[strings.ToUpper(k)] = true
	}
	for i := range run.Stages {
		run.Stages[i].SetOrderUnknown(uncertain[strings.ToUpper(run.Stages[i].Key)])
	}
	det.StageOrderSource = order.Source
	det.StageOrderUncertain = len(order.Uncertain) > 0
	det.StageOrderEvidence = append(order.Evidence, order.Conflicts...)
	if det.PlanNote != "" && order.Source != "plan" && !planNamed(order.Conflicts) {
		det.StageOrderEvidence = append(det.StageOrderEvidence, det.PlanNote)
	}
	det.StageNext = model.PackStageLinks(order.Next)
	if det.StageOrderUncertain {
		det.StageOrderEvidence = append(det.StageOrderEvidence, "the place of "+strings.Join(order.Uncertain, ", ")+
			" is not settled by the files")
	}
}

// orderEvidence gathers what the files and the config say about the order of ids: chains (the config's
// stage_order, STAGE_ORDER, stage_schema, natural ids), Next edges (run.log's next=, LAST_COMPLETED_STAGE →
// CURRENT_STAGE) and Before edges (stage_start and stage_complete lines, checkpoint times), references
// resolved to stage keys.
func orderEvidence(run *model.Run, det *model.ResumableDetail, in stageInputs, ids []string) model.OrderEvidence {
	var ev model.OrderEvidence
	names := []string{det.TaskName, run.ID}
	if rule, ok, ambiguous := model.MatchStageOrder(in.config, names...); ok {
		ev.Chains = append(ev.Chains, model.OrderChain{Source: "config", IDs: rule.Stages})
	} else if len(ambiguous) > 0 {
		run.AddProblem(model.SeverityWarning, model.CodeStageOrderUnknown, run.StatePath,
			fmt.Sprintf("config stage_order: the patterns %s all match %s but give different orders; none is used",
				strings.Join(ambiguous, ", "), run.ID))
	}
	if raw, _ := det.Value("STAGE_ORDER"); strings.TrimSpace(raw) != "" {
		ev.Chains = append(ev.Chains, model.OrderChain{Source: "STAGE_ORDER", IDs: splitList(raw)})
	}
	if len(in.schema) > 0 {
		ev.Chains = append(ev.Chains, model.OrderChain{Source: "stage_schema", IDs: in.schema})
	}
	groups := map[string][]string{}
	for _, id := range ids {
		if m := naturalID.FindStringSubmatch(id); m != nil {
			p := strings.ToUpper(m[1])
			groups[p] = append(groups[p], id)
		}
	}
	var prefixes []string
	for p := range groups {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	for _, p := range prefixes {
		g := groups[p]
		model.SortNatural(g)
		ev.Chains = append(ev.Chains, model.OrderChain{Source: "natural", IDs: g})
	}
	for _, pr := range in.log.Next {
		ev.Next = append(ev.Next, model.OrderEdge{A: pr[0], B: pr[1], Source: "run.log"})
	}
	cur, _ := det.Value("CURRENT_STAGE")
	last, _ := det.Value("LAST_COMPLETED_STAGE")
	target, _ := det.Value("RESUME_TARGET_STAGE")
	if l := findStage(run, last); l != nil && l.Status.Done() {
		for _, n := range []string{cur, target} {
			if c := findStage(run, n); c != nil && c != l && !c.Status.Done() {
				ev.Next = append(ev.Next, model.OrderEdge{A: l.Key, B: c.Key, Source: "state.env"})
			}
		}
	}
	for _, chain := range [][]string{in.log.Starts, in.log.Completes} {
		for k := 0; k+1 < len(chain); k++ {
			ev.Before = append(ev.Before, model.OrderEdge{A: chain[k], B: chain[k+1], Source: "run.log"})
		}
	}
	var timed []model.Checkpoint
	for _, cp := range det.Checkpoints {
		if cp.Timestamp != nil && findStage(run, cp.Stage) != nil {
			timed = append(timed, cp)
		}
	}
	sort.SliceStable(timed, func(i, j int) bool { return timed[i].Timestamp.Before(*timed[j].Timestamp) })
	for k := 0; k+1 < len(timed); k++ {
		if timed[k].Timestamp.Before(*timed[k+1].Timestamp) {
			ev.Before = append(ev.Before, model.OrderEdge{A: timed[k].Stage, B: timed[k+1].Stage, Source: "checkpoints", Weak: true})
		}
	}

	// References may name a stage by its flag stem (S_BETA) or in another case: resolve them to stage keys.
	for ci := range ev.Chains {
		c := &ev.Chains[ci]
		keys := make([]string, len(c.IDs))
		for i, ref := range c.IDs {
			keys[i] = ref
			if st := findStage(run, ref); st != nil {
				keys[i] = st.Key
			}
		}
		c.IDs = keys
	}
	return ev
}

// planNamed reports whether the conflicts already say why the plan was not used.
func planNamed(conflicts []string) bool {
	for _, c := range conflicts {
		if strings.HasPrefix(c, "order from the plan ") {
			return true
		}
	}
	return false
}

// runIDSuffix is the date-style run id that ends a run folder's name (docs/FORMATS.md B.1).
var runIDSuffix = regexp.MustCompile(`-?[0-9]{8}T[0-9]{6}Z$`)

// OrderAdvice says how a person settles a stage order the files do not: the config key (with the order as
// far as it is known, for the person to correct) or step --to.
func OrderAdvice(run model.Run) string {
	task := runIDSuffix.ReplaceAllString(run.ID, "")
	if run.Resumable != nil && run.Resumable.TaskName != "" {
		task = run.Resumable.TaskName
	}
	keys := make([]string, len(run.Stages))
	for i, s := range run.Stages {
		keys[i] = s.Key
	}
	return fmt.Sprintf("name the order in the config file (stage_order: {%q: [%s]}, with the stages in their real order), "+
		"or name the next stage yourself: runwatch step %s --to STAGE",
		task+"*", strings.Join(keys, ", "), run.ID)
}

// findStage matches a stage reference the way the convention writes them: the id in any case, or for named
// stages either the name or its flag stem S_<NAME>.
func findStage(run *model.Run, ref string) *model.Stage {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil
	}
	if st := run.Stage(ref); st != nil {
		return st
	}
	if len(ref) > 2 && strings.EqualFold(ref[:2], "S_") {
		return run.Stage(ref[2:])
	}
	return nil
}

// finishedWords are CURRENT_STAGE values a finished run may hold instead of a stage id.
var finishedWords = map[string]bool{"done": true, "complete": true, "completed": true, "finished": true, "none": true}

// markCurrentStage resolves CURRENT_STAGE. The current stage runs only while a live lock is held: with
// MAX_STAGES=1 a run normally sits between invocations with nobody working on it.
func markCurrentStage(run *model.Run, cur string) {
	cur = strings.TrimSpace(cur)
	allDone := len(run.Stages) > 0
	for _, s := range run.Stages {
		allDone = allDone && s.Status.Done()
	}
	if cur == "" {
		if len(run.Stages) > 0 && !allDone {
			run.AddProblem(model.SeverityWarning, model.CodeCurrentStageUnknown, run.StatePath,
				filepath.Base(run.StatePath)+": CURRENT_STAGE is not set; the earliest stage not done is where a resume would start")
		}
		return
	}
	run.CurrentStage = cur
	st := findStage(run, cur)
	if st == nil {
		if len(run.Stages) == 0 || (allDone && finishedWords[strings.ToLower(cur)]) {
			return
		}
		keys := make([]string, len(run.Stages))
		for i, s := range run.Stages {
			keys[i] = s.Key
		}
		run.AddProblem(model.SeverityError, model.CodeCurrentStageUnknown, run.StatePath,
			fmt.Sprintf("%s: CURRENT_STAGE %q is not one of the run's stages (%s)", filepath.Base(run.StatePath), cur, strings.Join(keys, ", ")))
		return
	}
	run.CurrentStage = st.Key
	if st.Status.Done() {
		return
	}
	for _, l := range run.Locks {
		if l.Verdict == model.VerdictLive {
			st.Status = model.StageRunning
			return
		}
	}
}

// attachChecklist puts every CB_<STAGE>_* item under its stage: the longest stage id that, followed by "_",
// prefixes the part after CB_, case-insensitively (model.StageForChecklistKey's rule). It looks the candidate
// prefixes up in a map instead of scanning every stage per item, because a hostile 1 MiB pair of files with
// tens of thousands of stages and items would otherwise take minutes. Items of no known stage, and
// bookkeeping keys, stay visible in ResumableDetail.ChecklistKeys only.
func attachChecklist(run *model.Run, keys model.KVs, path string) {
	index := make(map[string]int, len(run.Stages))
	for i, s := range run.Stages {
		index[strings.ToUpper(s.Key)] = i
	}
	// The items of all stages in one array, each stage's at its exact length: the watcher keeps every run's,
	// and a list grown by append per stage held spare room and an object each (issue 35).
	count := make([]int, len(run.Stages))
	total := 0
	for _, kv := range keys.All() {
		if i, ok := checklistStage(kv.Key, index); ok {
			count[i]++
			total++
		}
	}
	if total == 0 {
		return
	}
	items := make([]model.ChecklistItem, total)
	all := items
	for i := range run.Stages {
		if count[i] > 0 {
			run.Stages[i].Checklist, items = items[:0:count[i]], items[count[i]:]
		}
	}
	for _, kv := range keys.All() {
		i, ok := checklistStage(kv.Key, index)
		if !ok {
			continue
		}
		item := model.ChecklistItem{Key: kv.Key}
		done, valid := flagValue(kv.Value)
		item.Done = done
		if !valid {
			item.Raw = kv.Value
			run.AddProblem(model.SeverityWarning, model.CodeChecklistValue, path,
				fmt.Sprintf("%s: checklist item %s has value %q; only 0 and 1 are meaningful, so it counts as not done", filepath.Base(path), kv.Key, kv.Value))
		}
		run.Stages[i].Checklist = append(run.Stages[i].Checklist, item)
	}
	// The stages' lists, back to back, are the array; another run's equal array serves at the same places.
	if shared := sharedChecklists.share(all); &shared[0] != &all[0] {
		for i, at := range run.Stages {
			if n := len(at.Checklist); n > 0 {
				run.Stages[i].Checklist, shared = shared[:n:n], shared[n:]
			}
		}
	}
}

func checklistStage(key string, index map[string]int) (int, bool) {
	upper := strings.ToUpper(key)
	rest, ok := strings.CutPrefix(upper, "CB_")
	if !ok {
		return 0, false
	}
	for end := strings.LastIndexByte(rest, '_'); end > 0; end = strings.LastIndexByte(rest[:end], '_') {
		if i, ok := index[rest[:end]]; ok {
			return i, true
		}
	}
	return 0, false
}

// checkConsistency flags the stop condition "a stage marked done while required checklist keys are
// incomplete" (every CB_<STAGE>_* present counts as required, docs/FORMATS.md B.4).
func checkConsistency(run *model.Run, checklistPath string) {
	for _, st := range run.Stages {
		for _, item := range st.Checklist {
			if item.Done {
				continue
			}
			val := "0"
			if item.Raw != "" {
				val = fmt.Sprintf("%q", item.Raw)
			}
			switch {
			case st.DoneKey != "" && st.Status == model.StageCompleted:
				run.AddProblem(model.SeverityError, model.CodeStageDoneChecklistIncomplete, checklistPath,
					fmt.Sprintf("%s is marked done but %s is %s", st.Key, item.Key, val))
			case st.ChecklistDone != nil && *st.ChecklistDone:
				run.AddProblem(model.SeverityError, model.CodeStageDoneChecklistIncomplete, checklistPath,
					fmt.Sprintf("%s is 1 but %s is %s", st.ChecklistDoneKey, item.Key, val))
			}
		}
	}
}

// addCurrentGate states which checklist items still block stepping the current stage forward.
func addCurrentGate(run *model.Run) {
	st := run.Stage(run.CurrentStage)
	if st == nil || len(st.Checklist) == 0 || st.Status.Done() {
		return
	}
	var open []string
	for _, it := range st.Checklist {
		if !it.Done {
			open = append(open, it.Key)
		}
	}
	g := model.Gate{Name: "stage-checklist", Status: "passed",
		Detail: fmt.Sprintf("%s: all %d checklist items are 1", st.Key, len(st.Checklist))}
	if len(open) > 0 {
		g.Status, g.Blocked = "open", true
		g.Detail = fmt.Sprintf("%s: %d of %d checklist items are 1; open: %s", st.Key,
			len(st.Checklist)-len(open), len(st.Checklist), strings.Join(open, ", "))
	}
	run.Gates = sharedGates.share(append(run.Gates, g))
}

// pushFlags are the push-state flags of the fls variant.
var pushFlags = []string{"PUSH_ATTEMPTED", "PUSH_CONFIRMED"}

// addFlags shows the finalization and push flags that the state file carries.
func addFlags(run *model.Run, det *model.ResumableDetail) {
	add := func(group string, names []string) {
		for _, name := range names {
			v, ok := det.Value(name)
			if !ok {
				continue
			}
			set, valid := flagValue(v)
			f := model.Flag{Group: group, Name: name, Value: set}
			if !valid {
				f.Raw = v
				run.AddProblem(model.SeverityWarning, model.CodeFlagValue, run.StatePath,
					fmt.Sprintf("%s: %s has value %q; only 0 and 1 are meaningful, so it counts as 0", filepath.Base(run.StatePath), name, v))
			}
			run.Flags = append(run.Flags, f)
		}
	}
	add(model.FlagGroupFinalization, model.FinalizationFlags)
	add(model.FlagGroupPush, pushFlags)
	run.Flags = sharedFlags.share(run.Flags)
}

// currentFromLog names the current stage of a run whose state.env is missing: the stage the log last started
// that it has not completed since.
func currentFromLog(run *model.Run, ev runlog.StageEvidence) {
	var best *runlog.StageEvent
	for _, e := range ev.Latest {
		e := e
		if e.Event == "stage_start" || e.Event == "stage_started" || e.Event == "stage_blocked" {
			if best == nil || e.Time.After(best.Time) {
				best = &e
			}
		}
	}
	if best == nil {
		return
	}
	if st := findStage(run, best.Stage); st != nil && !st.Status.Done() {
		run.CurrentStage = st.Key
	}
}

// checkCheckpoints warns on each stage marked done without its checkpoint when the run's writer reopens such
// stages. The mining tool (the only writer that writes CONTROL_RUN_ROOT, docs/FORMATS.md B.3) runs
// reconcile_resume on every start: it sets S_<STAGE>_DONE and every CB_<STAGE>_* back to 0, silently, for a
// done stage whose artifacts/checkpoints/<stage>.done.json is missing.
func checkCheckpoints(run *model.Run, det *model.ResumableDetail) {
	if _, ok := det.Value("CONTROL_RUN_ROOT"); !ok {
		return
	}
	det.ReopensWithoutCheckpoint = true
	for i := range run.Stages {
		st := &run.Stages[i]
		if st.Status != model.StageCompleted || st.Checkpoint != nil {
			continue
		}
		w := ReopenWarning(*st, det)
		st.SetWarnings(append(st.Warnings(), w))
		run.AddProblem(model.SeverityWarning, model.CodeCheckpointMissing, CheckpointPath(det, st.Key), w)
	}
}

// CheckpointPath is where the checkpoint of stage key is expected.
func CheckpointPath(det *model.ResumableDetail, key string) string {
	dir := det.CheckpointDir
	if dir == "" {
		dir = "artifacts/checkpoints"
	}
	return filepath.Join(dir, key+".done.json")
}

// ReopenWarning is what the mining tool will do to a done stage without its checkpoint.
func ReopenWarning(st model.Stage, det *model.ResumableDetail) string {
	flag := st.DoneKey
	if flag == "" {
		flag = "S_" + strings.ToUpper(st.Key) + "_DONE"
	}
	return fmt.Sprintf("%s is marked done but %s is missing: the tool will reopen this stage on its next start "+
		"(%s=0 and every CB_%s_* back to 0) unless that checkpoint is written", st.Key, CheckpointPath(det, st.Key),
		flag, strings.ToUpper(st.Key))
}

// checkBlocked turns a stage_blocked entry that is the log's latest word on the current stage, or a non-empty
// LAST_ERROR, into a stop condition on that stage: the writer stopped on a failed gate and waits for a person.
func checkBlocked(run *model.Run, det *model.ResumableDetail, ev runlog.StageEvidence) {
	det.LastError, _ = det.Value("LAST_ERROR")
	det.LastError = strings.TrimSpace(det.LastError)
	st := run.Stage(run.CurrentStage)
	var parts []string
	if st != nil && !st.Status.Done() {
		if e, ok := ev.Latest[strings.ToUpper(st.Key)]; ok && e.Event == "stage_blocked" {
			t := e.Time
			b := &model.StageBlocked{Stage: e.Stage, Message: e.Message, Time: &t, FailedMetrics: []string{}}
			for _, m := range strings.Split(e.Field("failed_metrics"), ",") {
				if m = strings.TrimSpace(m); m != "" {
					b.FailedMetrics = append(b.FailedMetrics, m)
				}
			}
			det.Blocked = b
			what := "no failed metrics named"
			if len(b.FailedMetrics) > 0 {
				what = "failed metrics " + strings.Join(b.FailedMetrics, ", ")
			}
			parts = append(parts, fmt.Sprintf("run.log %s: stage_blocked, %s", t.UTC().Format(time.RFC3339), what))
		}
	}
	if det.LastError != "" {
		parts = append(parts, "LAST_ERROR="+det.LastError)
	}
	if len(parts) == 0 {
		return
	}
	where := "the run"
	path := run.StatePath
	if det.Blocked != nil && run.Log != nil {
		path = run.Log.Path
	}
	if st != nil {
		where = "stage " + st.Key
		st.Status = model.StageFailed
		st.SetError("blocked: " + strings.Join(parts, "; "))
	}
	run.AddProblem(model.SeverityError, model.CodeStageBlocked, path,
		fmt.Sprintf("%s is blocked at its gate (%s); the writer stopped and waits for a person", where, strings.Join(parts, "; ")))
}

// checkOrder reports a stage order the files leave open: a warning when the step from the current stage
// depends on it, information otherwise.
func checkOrder(run *model.Run, det *model.ResumableDetail) {
	if !det.StageOrderUncertain {
		return
	}
	var unknown []string
	for _, s := range run.Stages {
		if s.OrderUnknown() {
			unknown = append(unknown, s.Key)
		}
	}
	plan := ""
	if det.PlanNote != "" {
		plan = "; " + det.PlanNote
	}
	cur := run.Stage(run.CurrentStage)
	if cur != nil && !cur.Status.Done() {
		if _, known := det.NextStage(cur.Key); !known && !othersDone(run, cur.Key) {
			run.AddProblem(model.SeverityWarning, model.CodeStageOrderUnknown, run.StatePath,
				fmt.Sprintf("the stage after %s is not known from the files (the place of %s is open%s), so step will not "+
					"guess it: %s", cur.Key, strings.Join(unknown, ", "), plan, OrderAdvice(*run)))
			return
		}
	}
	run.AddProblem(model.SeverityInfo, model.CodeStageOrderUnknown, run.StatePath,
		fmt.Sprintf("the place of %s in the stage order is not known from the files%s; they are shown where they may be, marked",
			strings.Join(unknown, ", "), plan))
}

func othersDone(run *model.Run, key string) bool {
	for _, s := range run.Stages {
		if !strings.EqualFold(s.Key, key) && !s.Status.Done() {
			return false
		}
	}
	return true
}
