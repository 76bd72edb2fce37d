package brief

import (
	"fmt"
	"strings"
	"time"

	"runwatch/model"
	"runwatch/plural"
)

// Markdown renders the brief for a person or an agent. Every value from a run file is made one-line and
// escaped, so the document can be printed to a terminal or pasted into a prompt as it is.
func (b Brief) Markdown() string {
	var w mdWriter
	w.line("# " + oneLine(b.Headline))
	w.blank()
	if b.Title != "" {
		w.line(quoted(b.Title))
		w.blank()
	}
	word := b.Kind.StageWord()
	w.bullet("Kind: " + oneLine(string(b.Kind)) + kindDetail(b))
	status := "Status: " + oneLine(string(b.Status))
	if b.RawStatus != "" && b.RawStatus != string(b.Status) {
		status += " (the file says " + code(b.RawStatus) + ")"
	}
	w.bullet(status)
	w.bullet(fmt.Sprintf("Progress: %d of %d %s done", b.Progress.Done, b.Progress.Total, plural.Word(b.Progress.Total, word, word+"s")))
	w.bullet("State file: " + code(b.StatePath))
	w.bullet("Brief made: " + b.GeneratedAt.Format(time.RFC3339))

	w.section("Next steps")
	if len(b.Steps) == 0 {
		w.line("Nothing to do.")
	}
	for i, s := range b.Steps {
		w.line(fmt.Sprintf("%d. %s", i+1, s))
	}

	if len(b.StopConditions) > 0 {
		w.section("Stop conditions in force")
		for _, c := range b.StopConditions {
			w.bullet("✗ " + conditionLine(c))
		}
	}
	if warnings := ownWarnings(b); len(warnings) > 0 {
		w.section("Warnings")
		for _, c := range warnings {
			w.bullet("⚠ " + conditionLine(c))
		}
	}
	// What a section of its own says is not said again in a stage's line (its error).
	for _, c := range b.StopConditions {
		w.elsewhere = append(w.elsewhere, c.Message)
	}
	if b.Jonggrang != nil && b.Jonggrang.AwaitingInput != nil {
		w.elsewhere = append(w.elsewhere, b.Jonggrang.AwaitingInput.Reason)
	}

	w.section("Where to restart")
	if b.Current != nil {
		w.bullet("Current " + word + " (from the state file): " + w.refOnce(*b.Current))
	} else {
		w.bullet("Current " + word + ": none recorded")
	}
	if b.Time != "" {
		w.bullet("Time: " + oneLine(b.Time))
	}
	switch {
	case b.Restart != nil:
		w.bullet("Restart at: " + w.refOnce(*b.Restart))
	case b.Progress.Total == 0:
		w.bullet("Restart at: unknown, no " + word + "s could be read")
	default:
		w.bullet("Restart at: nothing left to do")
	}
	for _, c := range b.CrashSigns {
		// A live lock or worker can make a run running despite a sign of trouble (another group's crash, an
		// agent's stale lock): then it is a warning sign, not a reason it stopped.
		if b.Status == model.StatusRunning {
			w.bullet("Sign of trouble (the run is still judged running): " + oneLine(c))
		} else {
			w.bullet("Why it is not running: " + oneLine(c))
		}
	}
	if b.Resumable != nil {
		writeResumableWhere(&w, b.Resumable)
	}

	if b.Jonggrang != nil && b.Jonggrang.AwaitingInput != nil {
		a := b.Jonggrang.AwaitingInput
		w.section("Awaiting input")
		w.line("Phase " + a.Phase.label() + " is paused for a person: " + quoted(a.Reason) + ".")
		if len(a.Questions) == 0 {
			w.line("No output file of this phase records the questions; read progress.txt and plan.md in " + code(b.Dir) + ".")
		} else {
			w.line("What the person must answer:")
			for _, q := range a.Questions {
				w.bullet(oneLine(q))
			}
		}
	}

	if b.Resumable != nil {
		writeResumable(&w, b)
	}

	writeStages(&w, "Completed "+word+"s", b.Completed)
	writeStages(&w, "Skipped "+word+"s", b.Skipped)
	// A failed stage said whole above (the current one) is still to do: listed there, not twice.
	var failed []StageRef
	for _, r := range b.Failed {
		if !w.said[w.refLine(r)] {
			failed = append(failed, r)
		}
	}
	writeStages(&w, "Failed "+word+"s", failed)
	writeStages(&w, "Still to do", b.Remaining)

	if b.Jonggrang != nil {
		writeJonggrang(&w, b.Jonggrang)
	}

	writeLocks(&w, b.Locks)
	return neutralize(w.String())
}

type mdWriter struct {
	strings.Builder
	said map[string]bool // the stage lines written whole (refOnce)
	// elsewhere are texts a section of their own says (stop conditions, the awaiting input's reason): a
	// stage's error that one of them carries is not quoted again on its line.
	elsewhere []string
}

// conditionSection is the section that says a condition of source with message, "" when none does.
func conditionSection(b Brief, source, message string) string {
	for _, c := range b.StopConditions {
		if c.Source == source && c.Message == message {
			return "Stop conditions in force"
		}
	}
	for _, c := range ownWarnings(b) {
		if c.Source == source && c.Message == message {
			return "Warnings"
		}
	}
	return ""
}

// ownWarnings are the warnings a section of their own does not say: a lock's verdict and reasons are under
// Locks, the phase awaiting input under Awaiting input.
func ownWarnings(b Brief) []Condition {
	var out []Condition
	for _, c := range b.Warnings {
		switch {
		case c.Code == model.CodeLockStale && len(b.Locks) > 0:
			continue
		case c.Code == model.CodeAwaitingInput && b.Jonggrang != nil && b.Jonggrang.AwaitingInput != nil:
			continue
		}
		out = append(out, c)
	}
	return out
}

// saidElsewhere reports whether err is carried by a text with a section of its own, whole or after its
// first "word: " ("blocked: run.log …" is the stop condition's own evidence).
func (w *mdWriter) saidElsewhere(err string) bool {
	err = strings.TrimSpace(err)
	_, rest, _ := strings.Cut(err, ": ")
	for _, e := range w.elsewhere {
		if err != "" && strings.Contains(e, err) || len(rest) > 12 && strings.Contains(e, rest) {
			return true
		}
	}
	return false
}

// refOnce is a stage's line the first time the brief says it, and its name and status after: a failed
// current stage was said whole four times (Where to restart, Restart at, Failed, Still to do).
func (w *mdWriter) refOnce(r StageRef) string {
	s := w.refLine(r)
	if short := r.label() + " — " + r.statusWord(); w.said[s] && s != short {
		return short + " (above)"
	}
	if w.said == nil {
		w.said = map[string]bool{}
	}
	w.said[s] = true
	return s
}

func (w *mdWriter) line(s string) { w.WriteString(s + "\n") }
func (w *mdWriter) blank()        { w.WriteString("\n") }
func (w *mdWriter) bullet(s string) {
	w.WriteString("- " + s + "\n")
}
func (w *mdWriter) section(title string) {
	w.WriteString("\n## " + title + "\n\n")
}

func kindDetail(b Brief) string {
	var parts []string
	if j := b.Jonggrang; j != nil {
		if j.WorkType != "" {
			parts = append(parts, "work type "+code(j.WorkType))
		}
		if j.PipelineMode != "" {
			parts = append(parts, "pipeline "+code(j.PipelineMode))
		}
	}
	if r := b.Resumable; r != nil {
		if r.TaskName != "" {
			parts = append(parts, "task "+code(r.TaskName))
		}
		if r.RunID != "" {
			parts = append(parts, "RUN_ID "+code(r.RunID))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func conditionLine(c Condition) string {
	s := oneLine(c.Message) + " [" + oneLine(c.Code) + "]"
	if c.Path != "" && !strings.Contains(c.Message, c.Path) {
		s += " " + code(c.Path)
	}
	return s
}

// statusWord is the stage's status as the run is judged: the run's when the run stopped there.
func (r StageRef) statusWord() string {
	if r.stopped != "" {
		return string(r.stopped)
	}
	return oneLine(r.Status)
}

func (w *mdWriter) refLine(r StageRef) string {
	s := r.label() + " — " + r.statusWord()
	if r.stopped != "" && !strings.EqualFold(string(r.stopped), r.Status) {
		s += " (the file says " + code(r.Status) + ")"
	}
	if r.StartedAt != nil {
		s += ", started " + r.StartedAt.UTC().Format(time.RFC3339)
	}
	if r.CompletedAt != nil {
		s += ", ended " + r.CompletedAt.UTC().Format(time.RFC3339)
	}
	if r.Error != "" && !w.saidElsewhere(r.Error) {
		s += ", error " + quoted(r.Error)
	}
	if r.SkipReason != "" {
		s += ", skip reason " + quoted(r.SkipReason)
	}
	return s
}

func writeStages(w *mdWriter, title string, refs []StageRef) {
	if len(refs) == 0 {
		return
	}
	w.section(fmt.Sprintf("%s (%d)", title, len(refs)))
	for _, r := range refs {
		w.bullet(w.refOnce(r))
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func writeJonggrang(w *mdWriter, j *JonggrangBrief) {
	if len(j.Outputs) > 0 {
		w.section("Phase outputs")
		for i, o := range j.Outputs {
			head := "Phase " + oneLine(o.Phase) + " · " + oneLine(o.Role) + " · " + code(o.File)
			if o.Status != "" {
				head += " (" + oneLine(o.Status) + ")"
			}
			if i > 0 {
				w.blank()
			}
			w.line("### " + head)
			w.blank()
			writeOutput(w, o)
		}
	}
	if len(j.Tasks) > 0 {
		w.section("Tasks (jonggrang-tasks.json)")
		for _, t := range j.Tasks {
			w.bullet(code(t.ID) + " " + oneLine(t.Title) + " — " + oneLine(t.Status))
		}
	}
	if len(j.Validation) > 0 {
		w.section("Validation")
		for _, v := range j.Validation {
			glyph := "✗"
			if v.Value {
				glyph = "✓"
			}
			w.bullet(fmt.Sprintf("%s %s: %t — %s", glyph, oneLine(v.Name), v.Value, v.Meaning))
		}
	}
	if len(j.Gates) > 0 {
		w.section("Gates")
		for _, g := range j.Gates {
			glyph := "✓"
			if g.Blocked || g.Advice != "" {
				glyph = "⚠"
			}
			s := glyph + " " + oneLine(g.Name) + ": " + oneLine(g.Status)
			switch {
			case g.Stepped:
				s += " (see Next steps)"
			default:
				if g.Detail != "" {
					s += " (" + oneLine(g.Detail) + ")"
				}
				if g.Advice != "" {
					s += " — " + g.Advice
				}
			}
			w.bullet(s)
		}
	}
	if len(j.Worktrees) > 0 || j.WorktreeCopyOf != "" {
		w.section("Parallel run")
		if j.WorktreeCopyOf != "" {
			w.bullet("Read from the live worker's worktree copy " + code(j.WorktreeCopyOf) + "; the main copy is stale")
		}
		for _, t := range j.Worktrees {
			state := "worker not running"
			if t.Live {
				state = "worker running (pid " + itoa(t.PID) + ")"
			}
			exists := "present"
			if !t.Exists {
				exists = "missing"
			}
			w.bullet("Worktree " + code(t.WorktreePath) + ", group " + code(t.GroupStatus) + ", " + state +
				"; live manifest copy " + code(t.ManifestPath) + " (" + exists + ")")
			if t.CurrentPhase != "" || t.Status != "" {
				w.line("  - The copy says: status " + code(t.Status) + ", current phase " + oneLine(t.CurrentPhase) +
					fmt.Sprintf(", %d of %d phases done", t.Progress.Done, t.Progress.Total))
			}
			for _, p := range t.Problems {
				w.line("  - ⚠ " + oneLine(p))
			}
		}
	}
	if len(j.Interruptions) > 0 || len(j.ProgressTail) > 0 {
		w.section("progress.txt")
		for _, t := range j.Interruptions {
			w.bullet("Interrupted run recorded at " + t.UTC().Format(time.RFC3339))
		}
		if len(j.ProgressTail) > 0 {
			w.line("Last lines:")
			w.blank()
			for _, l := range j.ProgressTail {
				if j.AwaitingInput != nil && strings.HasSuffix(strings.TrimSpace(l), strings.TrimSpace(j.AwaitingInput.Reason)) {
					continue // under Awaiting input
				}
				w.line("    " + oneLine(l))
			}
		}
	}
}

func writeOutput(w *mdWriter, o model.PhaseOutput) {
	if o.TaskID != "" || o.AgentID != "" {
		var who []string
		if o.TaskID != "" {
			who = append(who, "task "+code(o.TaskID))
		}
		if o.AgentID != "" {
			who = append(who, "agent "+code(o.AgentID))
		}
		w.bullet(strings.Join(who, ", "))
	}
	for _, s := range o.Summary {
		w.bullet(oneLine(s))
	}
	summary := strings.Join(o.Summary, "\n")
	// The reader's summary states the verdict in its own words; repeat the bare facts only without one.
	if len(o.Summary) == 0 {
		if o.Approved != nil {
			w.bullet(map[bool]string{true: "Verdict: approved", false: "Verdict: changes requested"}[*o.Approved])
		}
		if o.TestsPassed != nil {
			w.bullet(fmt.Sprintf("tests_passed: %t", *o.TestsPassed))
		}
	}
	writeList(w, "Files", o.FilesTouched, summary)
	writeList(w, "Required fixes", o.RequiredFix, summary)
	writeList(w, "Failed tests", o.FailedTests, summary)
	if o.Error != "" {
		w.bullet("⚠ could not be read: " + oneLine(o.Error))
	}
}

// writeList prints a payload list unless the reader's summary lines already carry every item.
func writeList(w *mdWriter, title string, items []string, summary string) {
	if len(items) == 0 {
		return
	}
	covered := true
	for _, it := range items {
		if !strings.Contains(summary, it) {
			covered = false
		}
	}
	if covered {
		return
	}
	w.bullet(title + ":")
	for _, it := range items {
		w.line("  - " + oneLine(it))
	}
}

func writeResumableWhere(w *mdWriter, r *ResumableBrief) {
	if r.EarliestIncomplete != nil {
		w.bullet("Earliest incomplete safe stage: " + r.EarliestIncomplete.label())
	}
	if r.ResumeHint != "" {
		w.bullet("LAST_RESUME_HINT: " + quoted(r.ResumeHint))
	}
	if r.ResumeTarget != "" {
		w.bullet("RESUME_TARGET_STAGE: " + code(r.ResumeTarget))
	}
	if len(r.Contradictions) > 0 {
		var keys []string
		for _, c := range r.Contradictions {
			keys = append(keys, code(c))
		}
		w.bullet("⚠ Marked done but contradicted by the checklist: " + plural.And(keys))
	}
}

func writeResumable(w *mdWriter, b Brief) {
	r := b.Resumable
	if r.Window.Code != "" {
		// What to do in it is a Next step; here is why it is this window.
		w.section("Resume window " + r.Window.Code + ": " + r.Window.Name)
		w.line("Why this window:")
		for _, e := range r.Window.Evidence {
			w.bullet(oneLine(e))
		}
	}

	writeOpenItems(w, r.OpenItems)

	w.section("Git checks")
	if r.Git.RepoRoot != "" {
		w.line("REPO_ROOT " + code(r.Git.RepoRoot) + " (local checks only; the remote is never contacted).")
		w.blank()
	}
	if r.Git.Note != "" {
		w.line("– Nothing was checked: see Warnings.") // git-unchecked says why
	} else {
		for _, c := range r.Git.Checks {
			glyph := map[string]string{resultOK: "✓", resultFailed: "✗", resultSkipped: "–"}[c.Result]
			detail := oneLine(c.Detail)
			if where := conditionSection(b, "git", c.Detail); where != "" {
				detail = "see " + where
			}
			w.bullet(glyph + " " + c.Name + ": " + detail)
			for _, p := range c.Paths {
				w.line("  - " + code(p))
			}
		}
	}

	w.section("Artifacts")
	if r.Artifacts.LogPath != "" {
		w.line(fmt.Sprintf("%d %s recorded in run.log artifact integrity blocks.", r.Artifacts.Recorded,
			plural.Word(r.Artifacts.Recorded, "artifact", "artifacts")))
	} else {
		w.line("The run has no run.log, so no recorded artifacts could be checked.")
	}
	for _, n := range r.Artifacts.Notes {
		w.line(capitalize(oneLine(n)) + ".")
	}
	if len(r.Artifacts.Missing) == 0 {
		w.line("None is missing.")
	} else {
		w.blank()
	}
	for _, a := range r.Artifacts.Missing {
		kind := "still to produce"
		if a.Blocking {
			kind = "missing"
		}
		w.bullet("✗ " + code(a.Checked) + " — stage " + code(a.Stage) + ", " + kind + " (from " + a.Source + ")")
	}

	w.section("Flags")
	writeFlags(w, "Finalization", r.Finalization)
	writeFlags(w, "Push", r.Push)
	w.bullet("Lock: " + r.LockState + lockFileClause(r.LockFile))
}

func lockFileClause(path string) string {
	if path == "" {
		return " (LOCK_FILE is not set)"
	}
	return " (LOCK_FILE " + code(path) + ")"
}

func writeFlags(w *mdWriter, title string, flags []model.Flag) {
	if len(flags) == 0 {
		w.bullet(title + ": none recorded")
		return
	}
	parts := make([]string, 0, len(flags))
	for _, f := range flags {
		v := "0"
		if f.Value {
			v = "1"
		}
		parts = append(parts, oneLine(f.Name)+"="+v)
	}
	w.bullet(title + ": " + strings.Join(parts, ", "))
}

func writeOpenItems(w *mdWriter, items []OpenItem) {
	if len(items) == 0 {
		return
	}
	w.section("Open checklist items")
	for _, it := range items {
		line := code(it.Key) + " = " + code(it.Value) + " (stage " + code(it.Stage) + ")"
		if len(it.Needs) == 0 {
			w.bullet(line + ": no run file says what it needs.")
			continue
		}
		w.bullet(line + ":")
		for _, n := range it.Needs {
			w.line("  - " + noteWhere(n) + ": " + quoted(n.Text))
		}
	}
}

// writeLocks is the Locks section: each lock's verdict, holder, reasons and advice.
func writeLocks(w *mdWriter, locks []LockNote) {
	w.section("Locks")
	if len(locks) == 0 {
		w.line("No lock files.")
	}
	for _, l := range locks {
		s := "**" + oneLine(string(l.Verdict)) + "** " + code(l.Path)
		var who []string
		if l.Holder != "" {
			who = append(who, "holder "+code(l.Holder))
		}
		if l.PID > 0 {
			who = append(who, "pid "+itoa(l.PID))
		}
		if l.Host != "" {
			who = append(who, "host "+code(l.Host))
		}
		if len(who) > 0 {
			s += " (" + strings.Join(who, ", ") + ")"
		}
		w.bullet(s + ": " + oneLine(joinReasons(l.Reasons)) + ". " + capitalize(l.Advice) + ".")
	}
}
