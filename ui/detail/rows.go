// The rows of Detail: what the selected run needs, where it stands, its stages, checklists, flags, gates,
// locks, problems and folder, each row named by what it shows so the focus survives live updates.

package detail

import (
	"fmt"
	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
	"strings"
	"time"
)

// attentionLine is Detail's first line: what the run needs from you and the key that does it, or why there
// is nothing to do. model.Judge decides; this only words the key.
func (p *Pane) attentionLine(run model.Run, w int) []string {
	t := p.app.Theme
	at := run.Attention
	now := p.app.Now()
	reason := text.Sanitize(at.ReasonAt(now))
	if from := at.AgeFrom(); !from.IsZero() {
		p.app.Age(now, from) // its age counts on: draw it again when it reads differently
	}
	if !at.NeedsYou {
		return text.WrapText(t.Good.Render("Nothing to do: ")+reason, w)
	}
	line := "Needs you: " + reason
	if b, ok := app.AttentionBinding(p.app, run); ok {
		line += " → press " + b.Help().Key + " (" + b.Help().Desc + ")"
	} else if at.Command != "" {
		line += " → " + text.Sanitize(at.Command)
	}
	if b, ok := keys.AgentBinding(p.app.Keys, at); ok && p.app.NotHere(keys.ActAgent, app.RowID{}) == "" {
		line += "; or press " + b.Help().Key + " to go to its agent"
	}
	var out []string
	for _, l := range text.WrapText(line, w) {
		out = append(out, t.Warn.Render(l))
	}
	return out
}

// rowBuilder collects Detail's rows for one run at one width and one instant, section by section.
type rowBuilder struct {
	p    *Pane
	t    *theme.Theme
	run  model.Run
	w    int
	now  time.Time
	rows []detailRow
}

func (b *rowBuilder) add(s string) { b.rows = append(b.rows, detailRow{text: s}) }
func (b *rowBuilder) addID(id app.RowID, s string) {
	b.rows = append(b.rows, detailRow{id: id, text: s})
}

// section starts a titled block, a blank line from the one before.
func (b *rowBuilder) section(title string) {
	if len(b.rows) > 0 {
		b.add("")
	}
	b.add(b.t.Title.Render(title))
}

// wrapped adds s wrapped at w, each line drawn by render (a style's Render; nil for plain).
func (b *rowBuilder) wrapped(s string, w int, render func(...string) string) {
	for _, l := range text.WrapText(s, w) {
		if render != nil {
			l = render(l)
		}
		b.add(l)
	}
}

// Rows builds the detail of run at width w. Update (focus movement) and View (drawing) both call it and get
// the same rows: they depend only on the run, w, the pane's fold and expand state and the clock. Its one
// effect is on the app's clock: each word about time it writes ("3m ago", an ETA) registers when it will
// read differently, so the frame is drawn again then (app.Age, Growing, ChangesWithin).
func (p *Pane) Rows(run model.Run, w int) []detailRow {
	b := &rowBuilder{p: p, t: &p.app.Theme, run: run, w: w, now: p.app.Now()}
	b.head()
	b.stages()
	if bars := p.timeBars(run, w, b.now); len(bars) > 0 {
		b.section("Time")
		for _, l := range bars {
			b.add(l)
		}
	}
	b.commits()
	// Crash signs come after the stages: the first line already says what the run needs, and in a stacked
	// layout the current stage must fit above the fold.
	if len(run.CrashSigns) > 0 {
		b.section("Crash signs")
		for _, c := range run.CrashSignsAt(b.now) {
			for _, l := range text.WrapText(text.Sanitize(c), max(8, w-2)) {
				b.add(b.t.Warn.Render("⚠ " + l))
			}
		}
	}
	b.agents()
	if jd := run.Jonggrang; jd != nil && len(jd.Tasks) > 0 {
		b.section("Tasks")
		for _, tk := range jd.Tasks {
			b.add(wordGlyph(tk.Status) + " " + text.Sanitize(tk.ID) + " " + text.Sanitize(tk.Title) + b.t.Dim.Render(" "+text.OrDash(text.Sanitize(tk.Status))))
		}
	}
	b.flags()
	b.gates()
	b.locks()
	b.problems()
	if rd := run.Resumable; rd != nil && rd.ResumeHint != "" {
		b.section("Resume hint")
		b.wrapped(text.Sanitize(rd.ResumeHint), w, nil)
	}
	b.section("Folder")
	b.add(b.t.Dim.Render(string(run.Kind) + " run in"))
	b.wrapped(text.Sanitize(run.Dir), w, b.t.Dim.Render)
	return b.rows
}

// head is what the run needs, its status line, ETA, title, agent and whether it is archived.
func (b *rowBuilder) head() {
	t, run, now := b.t, b.run, b.now
	for _, l := range b.p.attentionLine(run, b.w) {
		b.add(l)
	}
	head := t.StatusStyle(run.Status).Render(run.Status.Glyph()+" "+string(run.Status)) +
		fmt.Sprintf(" · %s %s · %d/%d done", run.Kind.StageWord(), text.OrDash(stageLabel(run)), run.Progress.Done, run.Progress.Total)
	if run.RawStatus != "" && run.RawStatus != string(run.Status) {
		head += t.Dim.Render(" (file says " + text.Sanitize(run.RawStatus) + ")")
	}
	b.add(head)
	if left, ok := run.ETA(now); ok {
		if sh := model.HumanDurationShrinks(left); sh > 0 {
			b.p.app.ChangesWithin(now.Add(sh), model.HumanDurationUnit(left)-1)
		}
		b.add(t.Dim.Render(app.ETAText(left, run.Timing.Runs)))
	}
	if run.Title != "" && run.Title != run.ID {
		b.add(text.Sanitize(run.Title))
	}
	if pane, ok := b.p.app.AgentOf(run); ok {
		b.add(t.Dim.Render("agent: ") + text.Sanitize(pane.Where()))
	}
	if run.Archived {
		b.add(t.Dim.Render("archived run (read-only history)"))
	}
}

// stages is the stages section: the completed ones before the first unfinished one folded into one line,
// then each stage with its problems and, when expanded, its checklist and outputs.
func (b *rowBuilder) stages() {
	t, run := b.t, b.run
	word := run.Kind.StageWord()
	if len(run.Stages) > 0 {
		b.section(strings.ToUpper(word[:1]) + word[1:] + "s")
		if src := orderSource(run); src != "" {
			b.wrapped(text.Sanitize(src), b.w, t.Dim.Render)
		}
	}
	// Completed stages before the first unfinished one fold into one line, so the stage that matters is
	// near the top.
	fold := 0
	for fold < len(run.Stages) && (run.Stages[fold].Status == model.StageCompleted || run.Stages[fold].Status == model.StageSkipped) &&
		!strings.EqualFold(run.Stages[fold].Key, run.CurrentStage) {
		fold++
	}
	if fold < 2 {
		fold = 0 // one stage folded into one line saves nothing
	}
	unfolded := b.p.unfolded[run.Key()]
	if fold > 0 {
		first, last := run.Stages[0], run.Stages[fold-1]
		mark := "▸"
		if unfolded {
			mark = "▾"
		}
		b.addID(app.RowID{Kind: app.RowFold, Key: "fold"}, t.Good.Render("✓")+" "+fmt.Sprintf("%d %ss done (%s … %s) %s", fold, word,
			text.Sanitize(stageShort(first)), text.Sanitize(stageShort(last)), t.Dim.Render(mark+" enter")))
	}
	keyW := stageKeyWidth(run)
	for si, st := range run.Stages {
		if si < fold && !unfolded {
			continue
		}
		b.addID(app.RowID{Kind: app.RowStage, Stage: st.Key, Key: st.Key}, b.stageLine(st, keyW))
		b.stageNotes(st)
		if b.p.expanded(run, st.Key) {
			b.stageContents(st)
		}
	}
}

// stageKeyWidth is the width stage keys are padded to. Where stages have names beside their keys
// (jonggrang's "10 design-verification"), the keys are padded to the widest so the names line up; no wider,
// so "◀ current" still fits a narrow pane.
func stageKeyWidth(run model.Run) int {
	keyW := 0
	for _, st := range run.Stages {
		if st.Name != "" && st.Name != st.Key {
			for _, s := range run.Stages {
				keyW = max(keyW, text.VisibleWidth(text.Sanitize(s.Key)))
			}
			break
		}
	}
	return keyW
}

// stageLine is a stage's own row: glyph, key and name, duration, usual time, status, checklist count,
// checkpoint and marks.
func (b *rowBuilder) stageLine(st model.Stage, keyW int) string {
	t, run, now := b.t, b.run, b.now
	glyph, word, gst := st.Status.Glyph(), string(st.Status), t.StageStyle(st.Status)
	stopped, isStopped := run.StoppedAt(&st)
	if isStopped {
		// Nothing runs this stage: one word and glyph with the run's (it read "✗ M2 failed" under a run that
		// read "⊘ blocked", "▶ 4 running" under "⚠ stalled").
		glyph, word, gst = stopped.Glyph(), string(stopped), t.StatusStyle(stopped)
	}
	line := gst.Render(glyph) + " " + text.PadRight(text.Sanitize(st.Key), keyW)
	if st.Name != "" && st.Name != st.Key {
		line += " " + text.Sanitize(st.Name)
	}
	if d := st.Duration(now); d > 0 {
		line += t.Dim.Render(" " + b.p.app.Growing(now, d, st.CompletedAt == nil))
	}
	if u := st.Timing.Usual(); u.Known() {
		line += t.Dim.Render(" · " + u.String())
	}
	if st.Status != model.StagePending || st.RawStatus() != "" || isStopped {
		status := word
		if st.RawStatus() != "" && st.RawStatus() != string(st.Status) && !isStopped {
			status += " (" + text.Sanitize(st.RawStatus()) + ")"
		}
		line += t.Dim.Render(" " + status)
	}
	if len(st.Checklist) > 0 {
		done := 0
		for _, it := range st.Checklist {
			if it.Done {
				done++
			}
		}
		line += t.Dim.Render(fmt.Sprintf(" [%d/%d]", done, len(st.Checklist)))
	}
	if st.Checkpoint != nil {
		cp := " ◆ checkpoint"
		if st.Checkpoint.Timestamp != nil {
			cp += " " + st.Checkpoint.Timestamp.UTC().Format("01-02 15:04")
		}
		line += t.Dim.Render(cp)
	}
	if st.OrderUnknown() {
		// Not "?": that is a run awaiting input.
		line += t.Warn.Render(" ↕ place unknown")
	}
	if strings.EqualFold(st.Key, run.CurrentStage) {
		line += t.Bold.Render(" ◀ current")
	}
	return line
}

// stageNotes are the lines under a stage that are always shown: its error, warnings and skip reason.
func (b *rowBuilder) stageNotes(st model.Stage) {
	t := b.t
	if st.ErrorText() != "" {
		for i, l := range text.WrapText(text.Sanitize(st.ErrorText()), b.w-6) {
			b.add("    " + t.Bad.Render(text.MarkFirst(i, "✗ ")+l))
		}
	}
	for _, warn := range st.Warnings() {
		for i, l := range text.WrapText(text.Sanitize(warn), b.w-6) {
			b.add("    " + t.Warn.Render(text.MarkFirst(i, "⚠ ")+l))
		}
	}
	if st.SkipReason() != "" {
		b.add("    " + t.Dim.Render("skipped: "+text.Sanitize(st.SkipReason())))
	}
}

// stageContents are an expanded stage's checklist items and jonggrang phase outputs, each focusable.
func (b *rowBuilder) stageContents(st model.Stage) {
	t, run := b.t, b.run
	for _, it := range st.Checklist {
		box := "[ ]"
		if it.Done {
			box = "[x]"
		}
		txt := "    " + box + " " + text.Sanitize(it.Key)
		if it.Raw != "" && it.Raw != "0" && it.Raw != "1" {
			txt += t.Warn.Render(" ⚠ value " + text.Sanitize(it.Raw))
		}
		b.addID(app.RowID{Kind: app.RowItem, Stage: st.Key, Key: it.Key}, txt)
	}
	b.outputFiles(st)
	if run.Jonggrang == nil {
		return
	}
	for _, po := range run.Jonggrang.PhaseOutputs {
		if po.Phase != st.Key {
			continue
		}
		b.addID(app.RowID{Kind: app.RowOutput, Stage: st.Key, Key: po.File}, "    "+wordGlyph(po.Status)+" "+text.Sanitize(po.File)+t.Dim.Render(" "+text.Sanitize(po.Status)))
		for _, s := range po.Summary {
			b.add("      " + t.Dim.Render(text.Sanitize(s)))
		}
		if po.Error != "" {
			b.add("      " + t.Bad.Render("✗ "+text.Sanitize(po.Error)))
		}
	}
}

// outputFiles are the files the manifest says a phase recorded (output_files): what a restart would
// overwrite, which the brief points at. Shown, not focusable: the paths are the writer's, not ours to open.
func (b *rowBuilder) outputFiles(st model.Stage) {
	for _, f := range st.OutputFiles() {
		var about []string
		if f.Type != "" {
			about = append(about, text.Sanitize(f.Type))
		}
		if f.Size != nil {
			about = append(about, text.HumanBytes(*f.Size))
		}
		if f.CreatedAt != nil {
			about = append(about, f.CreatedAt.UTC().Format("01-02 15:04"))
		}
		line := "    ↳ " + text.Sanitize(text.OrDash(f.Path))
		if len(about) > 0 {
			line += b.t.Dim.Render(" " + strings.Join(about, " · "))
		}
		b.add(line)
	}
}

// commits is a resumable run's commit ledger, one line per commit.
func (b *rowBuilder) commits() {
	rd := b.run.Resumable
	if rd == nil || len(rd.Ledger) == 0 {
		return
	}
	b.section("Commits")
	for _, row := range rd.Ledger {
		sha := row.SHA
		if len(sha) > 7 {
			sha = sha[:7]
		}
		line := text.Sanitize(text.OrDash(sha)) + " " + text.Sanitize(strings.Join(row.Stages, ", "))
		if label := strings.Join(row.Stages, "-"); row.Checkpoint != "" && !strings.EqualFold(label, row.Checkpoint) {
			line += b.t.Dim.Render(" " + text.Sanitize(row.Checkpoint))
		}
		if row.Subject != "" {
			line += " " + text.Sanitize(row.Subject)
		}
		b.add(text.Truncate(line, b.w))
	}
}

// agents is a jonggrang run's agents with their role, status and how long they ran.
func (b *rowBuilder) agents() {
	t, now := b.t, b.now
	jd := b.run.Jonggrang
	if jd == nil || len(jd.Agents) == 0 {
		return
	}
	b.section("Agents")
	for _, a := range jd.Agents {
		line := wordGlyph(a.Status) + " " + text.Sanitize(a.ID)
		if a.Role != "" && a.Role != a.ID {
			line += t.Dim.Render(" " + text.Sanitize(a.Role))
		}
		line += t.Dim.Render(" " + text.OrDash(text.Sanitize(a.Status)))
		if a.StartedAt != nil {
			end := now
			if a.CompletedAt != nil {
				end = *a.CompletedAt
			}
			if d := end.Sub(*a.StartedAt); d > 0 {
				line += t.Dim.Render(" " + b.p.app.Growing(now, d, a.CompletedAt == nil))
			}
		}
		b.add(line)
	}
}

// flags is the run's flags, grouped, each ✓ or ✗ with a raw value that is not a plain boolean.
func (b *rowBuilder) flags() {
	t := b.t
	if len(b.run.Flags) == 0 {
		return
	}
	b.section("Flags")
	group := ""
	for _, f := range b.run.Flags {
		label := ""
		if f.Group != group {
			group, label = f.Group, text.Sanitize(f.Group)
		}
		g := t.Bad.Render("✗")
		if f.Value {
			g = t.Good.Render("✓")
		}
		txt := text.PadRight(label, 13) + g + " " + text.Sanitize(f.Name)
		if f.Raw != "" && f.Raw != "0" && f.Raw != "1" && f.Raw != "true" && f.Raw != "false" {
			txt += t.Dim.Render(" (" + text.Sanitize(f.Raw) + ")")
		}
		b.add(txt)
	}
}

// gates is the run's gates, each open, waiting or blocked, with its detail.
func (b *rowBuilder) gates() {
	t, run, now := b.t, b.run, b.now
	if len(run.Gates) == 0 {
		return
	}
	b.section("Gates")
	for _, g := range run.Gates {
		glyph := t.Good.Render("✓")
		switch {
		case g.Blocked && g.Name == "stage-checklist" && !run.Attention.NeedsYou:
			// Open items of the current stage are where a run in progress normally stands: the next job,
			// not an alarm. It is a warning only when the run needs someone for it.
			glyph = t.Dim.Render("○")
		case g.Blocked:
			glyph = t.Warn.Render("⚠ blocked")
		}
		line := glyph + " " + text.Sanitize(g.Name) + ": " + text.Sanitize(g.Status)
		if g.Detail != "" {
			if from := g.AgeFrom(); !from.IsZero() {
				b.p.app.Age(now, from) // "measured 12m ago" counts on: draw it again when it reads differently
			}
			line += t.Dim.Render(" — " + text.Sanitize(g.DetailAt(now)))
		}
		b.add(line)
	}
}

// locks is the run's locks, each focusable, with its verdict, holder and the reasons for the verdict.
func (b *rowBuilder) locks() {
	t, now := b.t, b.now
	if len(b.run.Locks) == 0 {
		return
	}
	b.section("Locks")
	for _, l := range b.run.Locks {
		holder := l.Holder
		if holder == "" {
			holder = l.Path
		}
		line := t.VerdictStyle(l.Verdict).Render("["+string(l.Verdict)+"]") + " " + text.Sanitize(holder)
		if l.PID > 0 {
			line += fmt.Sprintf(" pid %d", l.PID)
		}
		if l.Host != "" {
			line += " @" + text.Sanitize(l.Host)
		}
		if l.AcquiredAt != nil {
			line += t.Dim.Render(" age " + b.p.app.Age(now, *l.AcquiredAt))
		}
		b.addID(app.RowID{Kind: app.RowLock, Key: l.Path}, line)
		for _, reason := range l.ReasonsAt(now) {
			b.add("    " + t.Dim.Render("· "+text.Sanitize(reason)))
		}
	}
}

// problems is what the reader found wrong with the run, by severity, each message wrapped under its code.
func (b *rowBuilder) problems() {
	t := b.t
	if len(b.run.Problems) == 0 {
		return
	}
	b.section("Problems")
	for _, p := range b.run.Problems {
		var g string
		switch p.Severity {
		case model.SeverityError:
			g = t.Bad.Render("✗ error")
		case model.SeverityWarning:
			g = t.Warn.Render("⚠ warn")
		default:
			g = t.Info.Render("ℹ info")
		}
		for i, l := range text.WrapText(text.Sanitize(b.run.MessageAt(p, b.now)), max(8, b.w-2)) {
			if i == 0 {
				b.add(g + " " + t.Dim.Render(text.Sanitize(p.Code)))
			}
			b.add("  " + l)
		}
	}
}

// wordGlyph gives a free-form status word from a run file (agent, task, phase output) the glyph its
// meaning calls for; unknown words get a neutral dot and are shown as written beside it.
func wordGlyph(status string) string {
	switch strings.ToLower(strings.TrimSpace(status)) {
	case "complete", "completed", "done", "success", "succeeded", "approved", "passed", "resolved":
		return "✓"
	case "failed", "error", "rejected", "crashed", "blocked":
		return "✗"
	case "running", "in_progress", "active", "working", "started":
		return "▶"
	case "pending", "queued", "todo":
		return "○"
	}
	return "·"
}

// stageLabel is the current stage with its whole name, for Detail's status line.
func stageLabel(run model.Run) string {
	key := text.Sanitize(run.CurrentStage)
	if st := run.Stage(run.CurrentStage); st != nil && st.Name != "" && st.Name != st.Key {
		return key + " " + text.Sanitize(st.Name)
	}
	return key
}

func stageShort(s model.Stage) string {
	if s.Name != "" {
		return s.Name
	}
	return s.Key
}

// orderSource says where a resumable run's stage order came from when something other than the ids
// themselves settled it ("order from the plan p.md, line 283"), as status --json's stage_order_evidence does.
func orderSource(run model.Run) string {
	d := run.Resumable
	if d == nil || len(d.StageOrderEvidence) == 0 {
		return ""
	}
	switch d.StageOrderSource {
	case "", "natural", "single stage", "none":
		return ""
	}
	return d.StageOrderEvidence[0]
}
