package resumable

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"runwatch/model"
	"runwatch/state/runlog"
)

// Stage ids of every scheme in formats.md B.3: S1, M14, M9B, R1B, CR12, EQ0, C6. Underscores never occur in
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

// buildStages creates one stage per stage id found in <STAGE>_DONE / <STAGE>_CHECKLIST_DONE keys and puts
// them in order: STAGE_ORDER when given, else run.log stage_start order for named stages, else natural.
func buildStages(run *model.Run, det *model.ResumableDetail, logPath string, logRegular, stateLoaded bool) {
	index := map[string]int{}
	values := make(map[string]string, len(det.Keys))
	named := false
	for _, kv := range det.Keys {
		values[kv.Key] = kv.Value
		id, isChecklist, isNamed, ok := stageOfFlag(kv.Key)
		if !ok {
			continue
		}
		named = named || isNamed
		i, seen := index[strings.ToUpper(id)]
		if !seen {
			i = len(run.Stages)
			index[strings.ToUpper(id)] = i
			run.Stages = append(run.Stages, model.Stage{Key: id, Name: id, Status: model.StagePending,
				Checklist: []model.ChecklistItem{}})
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
			st.DoneKey = kv.Key
		}
	}
	for i := range run.Stages {
		st := &run.Stages[i]
		done := false
		if st.DoneKey != "" {
			done, _ = flagValue(values[st.DoneKey])
		} else if st.ChecklistDone != nil {
			// Some plans keep only <STAGE>_CHECKLIST_DONE (formats.md B.8, run discovery).
			done = *st.ChecklistDone
		}
		if done {
			st.Status = model.StageCompleted
		}
	}
	if stateLoaded && len(run.Stages) == 0 {
		run.AddProblem(model.SeverityWarning, model.CodeNoStages, run.StatePath,
			filepath.Base(run.StatePath)+": no <STAGE>_DONE flags, so no stages can be shown")
	}
	orderStages(run, det, logPath, logRegular && named)
}

func orderStages(run *model.Run, det *model.ResumableDetail, logPath string, useLog bool) {
	ids := make([]string, len(run.Stages))
	for i, s := range run.Stages {
		ids[i] = s.Key
	}
	var ordered []string
	source := ""
	if raw, _ := det.Value("STAGE_ORDER"); strings.TrimSpace(raw) != "" {
		list := strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
		for i, ref := range list {
			if st := findStage(run, ref); st != nil {
				list[i] = st.Key
			}
		}
		if o, used := model.OrderByLog(ids, list); used {
			ordered, source = o, "STAGE_ORDER"
		}
	}
	if source == "" && useLog {
		if o, used := model.OrderByLog(ids, runlog.StageStartOrder(logPath)); used {
			ordered, source = o, "run.log"
		}
	}
	if source == "" {
		ordered = append([]string(nil), ids...)
		model.SortNatural(ordered)
		source = "natural"
	}
	det.StageOrderSource = source
	byKey := map[string]model.Stage{}
	for _, s := range run.Stages {
		byKey[s.Key] = s
	}
	for i, k := range ordered {
		run.Stages[i] = byKey[k]
	}
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
func attachChecklist(run *model.Run, keys []model.KV, path string) {
	index := make(map[string]int, len(run.Stages))
	for i, s := range run.Stages {
		index[strings.ToUpper(s.Key)] = i
	}
	for _, kv := range keys {
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
// incomplete" (every CB_<STAGE>_* present counts as required, formats.md B.4).
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
	run.Gates = append(run.Gates, g)
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
}
