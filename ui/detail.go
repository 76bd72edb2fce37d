package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
)

type detailRow struct {
	id   app.RowID
	text string
}

// detailPane shows the selected run: first what it needs from you, then where it stands, its stages (the
// completed ones folded into one line), checklists, flags, gates, locks and problems. Its rows are drawn by
// hand rather than through a viewport because rows are focusable (a checklist item, a lock) and the
// focused one must stay put while the content around it changes live.
type detailPane struct {
	app *app.App
	sel map[string]app.RowID // per run: the focused row
	// open holds, per run, the stages expanded with enter beside the current one, and whether the
	// completed stages are unfolded. Moving the cursor never changes which rows exist, so nothing below it
	// reflows.
	open     map[string]map[string]bool
	unfolded map[string]bool
	top      int
	w, h     int
	// Long rows: wrapped (w) with their indentation kept, or scrolled sideways by x cells.
	wrap bool
	x    int
}

func newDetailPane(a *app.App) *detailPane {
	return &detailPane{app: a, sel: map[string]app.RowID{}, open: map[string]map[string]bool{}, unfolded: map[string]bool{}}
}

func (p *detailPane) SetSize(w, h int) { p.w, p.h = w, h }

func (p *detailPane) innerW() int { return max(1, p.w-theme.BorderCells) }
func (p *detailPane) innerH() int { return max(1, p.h-theme.BorderCells) }

// selectionChanged is called by the root when another run is selected: Detail opens every run at its top
// with its current stage focused, also one visited before (a run left scrolled down to a lock came back
// with its first lines out of sight).
func (p *detailPane) selectionChanged() {
	p.top = 0
	clear(p.sel)
}

// pinned is how many of rows are Detail's first line ("Needs you: … → press U" / "Nothing to do: …"): they
// stay at the top of the pane while the rest scrolls under them, so at every size the pane says first what
// the run needs. h is the pane's inner height; the rows under them get what is left.
func (p *detailPane) pinned(run model.Run, w, h int) (n, bodyH int) {
	n = min(len(p.attentionLine(run, w)), h)
	return n, max(1, h-n)
}

// selection is the focused row of the selected run, defaulting to its current stage.
func (p *detailPane) selection() app.RowID {
	run, ok := p.app.SelectedRun()
	if !ok {
		return app.RowID{}
	}
	return p.selectionOf(run)
}

func (p *detailPane) selectionOf(run model.Run) app.RowID {
	if id, ok := p.sel[run.Key()]; ok {
		for _, r := range p.rows(run, p.innerW()) {
			if r.id == id {
				return id
			}
		}
	}
	if st := run.Stage(run.CurrentStage); st != nil {
		if id := (app.RowID{Kind: app.RowStage, Stage: st.Key, Key: st.Key}); p.hasRow(run, id) {
			return id
		}
	}
	for _, r := range p.rows(run, p.innerW()) {
		if r.id.Kind != app.RowText {
			return r.id
		}
	}
	return app.RowID{}
}

func (p *detailPane) hasRow(run model.Run, id app.RowID) bool {
	for _, r := range p.rows(run, p.innerW()) {
		if r.id == id {
			return true
		}
	}
	return false
}

// expanded reports whether a stage's checklist or outputs are shown: the current stage always, others when
// opened with enter.
func (p *detailPane) expanded(run model.Run, stage string) bool {
	if strings.EqualFold(stage, run.CurrentStage) {
		return !p.open[run.Key()]["-"+stage]
	}
	return p.open[run.Key()][stage]
}

func (p *detailPane) toggle(run model.Run, stage string) {
	o := p.open[run.Key()]
	if o == nil {
		o = map[string]bool{}
		p.open[run.Key()] = o
	}
	if strings.EqualFold(stage, run.CurrentStage) {
		o["-"+stage] = !o["-"+stage]
		return
	}
	o[stage] = !o[stage]
}

// attentionLine is Detail's first line: what the run needs from you and the key that does it, or why there
// is nothing to do. model.Judge decides; this only words the key.
func (p *detailPane) attentionLine(run model.Run, w int) []string {
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
	if b, ok := keys.AttentionBinding(p.app.Keys, at.Action); ok {
		line += " → press " + b.Help().Key + " (" + b.Help().Desc + ")"
	} else if at.Command != "" {
		line += " → " + text.Sanitize(at.Command)
	}
	var out []string
	for _, l := range text.WrapText(line, w) {
		out = append(out, t.Warn.Render(l))
	}
	return out
}

// rows builds the detail of run at width w. It is pure, so Update (focus movement) and View (drawing) agree
// on the rows.
func (p *detailPane) rows(run model.Run, w int) []detailRow {
	t := p.app.Theme
	now := p.app.Now()
	var rows []detailRow
	add := func(s string) { rows = append(rows, detailRow{text: s}) }
	addID := func(id app.RowID, s string) { rows = append(rows, detailRow{id: id, text: s}) }
	section := func(title string) {
		if len(rows) > 0 {
			add("")
		}
		add(t.Title.Render(title))
	}
	word := run.Kind.StageWord()

	for _, l := range p.attentionLine(run, w) {
		add(l)
	}
	head := t.StatusStyle(run.Status).Render(run.Status.Glyph()+" "+string(run.Status)) +
		fmt.Sprintf(" · %s %s · %d/%d done", word, text.OrDash(stageLabel(run)), run.Progress.Done, run.Progress.Total)
	if run.RawStatus != "" && run.RawStatus != string(run.Status) {
		head += t.Dim.Render(" (file says " + text.Sanitize(run.RawStatus) + ")")
	}
	add(head)
	if left, ok := run.ETA(now); ok && run.Status != model.StatusCompleted && !run.Archived {
		if sh := model.HumanDurationShrinks(left); sh > 0 {
			p.app.ChangesWithin(now.Add(sh), model.HumanDurationUnit(left)-1)
		}
		add(t.Dim.Render(app.ETAText(left, run.Timing.Runs)))
	}
	if run.Title != "" && run.Title != run.ID {
		add(text.Sanitize(run.Title))
	}
	if run.Archived {
		add(t.Dim.Render("archived run (read-only history)"))
	}

	if len(run.Stages) > 0 {
		section(strings.ToUpper(word[:1]) + word[1:] + "s")
		if src := orderSource(run); src != "" {
			for _, l := range text.WrapText(text.Sanitize(src), w) {
				add(t.Dim.Render(l))
			}
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
	if fold > 0 {
		first, last := run.Stages[0], run.Stages[fold-1]
		mark := "▸"
		if p.unfolded[run.Key()] {
			mark = "▾"
		}
		addID(app.RowID{Kind: app.RowFold, Key: "fold"}, t.Good.Render("✓")+" "+fmt.Sprintf("%d %ss done (%s … %s) %s", fold, word,
			text.Sanitize(stageShort(first)), text.Sanitize(stageShort(last)), t.Dim.Render(mark+" enter")))
	}
	// Where stages have names beside their keys (jonggrang's "10 design-verification"), the keys are padded to
	// the widest so the names line up; no wider, so "◀ current" still fits a narrow pane.
	keyW := 0
	for _, st := range run.Stages {
		if st.Name != "" && st.Name != st.Key {
			for _, s := range run.Stages {
				keyW = max(keyW, text.VisibleWidth(text.Sanitize(s.Key)))
			}
			break
		}
	}
	for si, st := range run.Stages {
		if si < fold && !p.unfolded[run.Key()] {
			continue
		}
		glyph, word, gst := st.Status.Glyph(), string(st.Status), t.StageStyle(st.Status)
		if st.Status == model.StageFailed && run.Status == model.StatusBlocked && strings.EqualFold(st.Key, run.CurrentStage) {
			// The run waits at this stage's gate for a person: one word and glyph with the run's (it read
			// "✗ M2 failed" under a run that read "⊘ blocked").
			glyph, word, gst = run.Status.Glyph(), string(run.Status), t.StatusStyle(run.Status)
		}
		line := gst.Render(glyph) + " " + text.PadRight(text.Sanitize(st.Key), keyW)
		if st.Name != "" && st.Name != st.Key {
			line += " " + text.Sanitize(st.Name)
		}
		if d := st.Duration(now); d > 0 {
			line += t.Dim.Render(" " + p.app.Growing(now, d, st.CompletedAt == nil))
		}
		if u := st.Timing.Usual(); u.Known() {
			line += t.Dim.Render(" · " + u.String())
		}
		if st.Status != model.StagePending || st.RawStatus != "" {
			status := word
			if st.RawStatus != "" && st.RawStatus != string(st.Status) {
				status += " (" + text.Sanitize(st.RawStatus) + ")"
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
		if st.OrderUnknown {
			// Not "?": that is a run awaiting input.
			line += t.Warn.Render(" ↕ place unknown")
		}
		if strings.EqualFold(st.Key, run.CurrentStage) {
			line += t.Bold.Render(" ◀ current")
		}
		addID(app.RowID{Kind: app.RowStage, Stage: st.Key, Key: st.Key}, line)
		if st.Error != "" {
			for i, l := range text.WrapText(text.Sanitize(st.Error), w-6) {
				add("    " + t.Bad.Render(markFirst(i, "✗ ")+l))
			}
		}
		for _, warn := range st.Warnings {
			for i, l := range text.WrapText(text.Sanitize(warn), w-6) {
				add("    " + t.Warn.Render(markFirst(i, "⚠ ")+l))
			}
		}
		if st.SkipReason != "" {
			add("    " + t.Dim.Render("skipped: "+text.Sanitize(st.SkipReason)))
		}
		if !p.expanded(run, st.Key) {
			continue
		}
		for _, it := range st.Checklist {
			box := "[ ]"
			if it.Done {
				box = "[x]"
			}
			txt := "    " + box + " " + text.Sanitize(it.Key)
			if it.Raw != "" && it.Raw != "0" && it.Raw != "1" {
				txt += t.Warn.Render(" ⚠ value " + text.Sanitize(it.Raw))
			}
			addID(app.RowID{Kind: app.RowItem, Stage: st.Key, Key: it.Key}, txt)
		}
		if run.Jonggrang != nil {
			for _, po := range run.Jonggrang.PhaseOutputs {
				if po.Phase != st.Key {
					continue
				}
				addID(app.RowID{Kind: app.RowOutput, Stage: st.Key, Key: po.File}, "    "+wordGlyph(po.Status)+" "+text.Sanitize(po.File)+t.Dim.Render(" "+text.Sanitize(po.Status)))
				for _, s := range po.Summary {
					add("      " + t.Dim.Render(text.Sanitize(s)))
				}
				if po.Error != "" {
					add("      " + t.Bad.Render("✗ "+text.Sanitize(po.Error)))
				}
			}
		}
	}

	if bars := p.timeBars(run, w, now); len(bars) > 0 {
		section("Time")
		for _, l := range bars {
			add(l)
		}
	}

	if rd := run.Resumable; rd != nil && len(rd.Ledger) > 0 {
		section("Commits")
		for _, row := range rd.Ledger {
			sha := row.SHA
			if len(sha) > 7 {
				sha = sha[:7]
			}
			line := text.Sanitize(text.OrDash(sha)) + " " + text.Sanitize(strings.Join(row.Stages, ", "))
			if label := strings.Join(row.Stages, "-"); row.Checkpoint != "" && !strings.EqualFold(label, row.Checkpoint) {
				line += t.Dim.Render(" " + text.Sanitize(row.Checkpoint))
			}
			if row.Subject != "" {
				line += " " + text.Sanitize(row.Subject)
			}
			add(text.Truncate(line, w))
		}
	}

	// Crash signs come after the stages: the first line already says what the run needs, and in a stacked
	// layout the current stage must fit above the fold.
	if len(run.CrashSigns) > 0 {
		section("Crash signs")
		for _, c := range run.CrashSignsAt(now) {
			for _, l := range text.WrapText(text.Sanitize(c), max(8, w-2)) {
				add(t.Warn.Render("⚠ " + l))
			}
		}
	}

	if jd := run.Jonggrang; jd != nil && len(jd.Agents) > 0 {
		section("Agents")
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
					line += t.Dim.Render(" " + p.app.Growing(now, d, a.CompletedAt == nil))
				}
			}
			add(line)
		}
	}
	if jd := run.Jonggrang; jd != nil && len(jd.Tasks) > 0 {
		section("Tasks")
		for _, tk := range jd.Tasks {
			add(wordGlyph(tk.Status) + " " + text.Sanitize(tk.ID) + " " + text.Sanitize(tk.Title) + t.Dim.Render(" "+text.OrDash(text.Sanitize(tk.Status))))
		}
	}

	if len(run.Flags) > 0 {
		section("Flags")
		group := ""
		for _, f := range run.Flags {
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
			add(txt)
		}
	}

	if len(run.Gates) > 0 {
		section("Gates")
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
					p.app.Age(now, from) // "measured 12m ago" counts on: draw it again when it reads differently
				}
				line += t.Dim.Render(" — " + text.Sanitize(g.DetailAt(now)))
			}
			add(line)
		}
	}

	if len(run.Locks) > 0 {
		section("Locks")
		for _, l := range run.Locks {
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
				line += t.Dim.Render(" age " + p.app.Age(now, *l.AcquiredAt))
			}
			addID(app.RowID{Kind: app.RowLock, Key: l.Path}, line)
			for _, reason := range l.ReasonsAt(now) {
				add("    " + t.Dim.Render("· "+text.Sanitize(reason)))
			}
		}
	}

	if len(run.Problems) > 0 {
		section("Problems")
		for _, p := range run.Problems {
			var g string
			switch p.Severity {
			case model.SeverityError:
				g = t.Bad.Render("✗ error")
			case model.SeverityWarning:
				g = t.Warn.Render("⚠ warn")
			default:
				g = t.Info.Render("ℹ info")
			}
			first := true
			for _, l := range text.WrapText(text.Sanitize(p.MessageAt(now)), max(8, w-2)) {
				if first {
					add(g + " " + t.Dim.Render(text.Sanitize(p.Code)))
					first = false
				}
				add("  " + l)
			}
		}
	}
	if rd := run.Resumable; rd != nil && rd.ResumeHint != "" {
		section("Resume hint")
		for _, l := range text.WrapText(text.Sanitize(rd.ResumeHint), w) {
			add(l)
		}
	}
	section("Folder")
	add(t.Dim.Render(string(run.Kind) + " run in"))
	for _, l := range text.WrapText(text.Sanitize(run.Dir), w) {
		add(t.Dim.Render(l))
	}
	return rows
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

// notHere is the actions that cannot apply to the focused row as it is now. It is the one place that
// decides it: the footer leaves these keys out, and the help overlay marks them "(not here)".
func (p *detailPane) NotHere() map[string]bool {
	run, ok := p.app.SelectedRun()
	if !ok {
		return set(keys.ActOpen, keys.ActCopy, keys.ActBrief, keys.ActTick, keys.ActStep, keys.ActUnlock, keys.ActRetry, keys.ActPause, keys.ActUndo)
	}
	no := map[string]bool{}
	sel := p.selectionOf(run)
	switch sel.Kind {
	case app.RowItem:
		// A done stage's items are its record: tick refuses them.
		if st := run.Stage(sel.Stage); st != nil && (st.Status == model.StageCompleted || st.Status == model.StageSkipped) {
			no[keys.ActTick] = true
		}
		no[keys.ActStep] = !strings.EqualFold(sel.Stage, run.CurrentStage)
	case app.RowLock:
		for _, l := range run.Locks {
			if l.Path == sel.Key && l.Verdict == model.VerdictLive {
				no[keys.ActUnlock] = true
			}
		}
	case app.RowStage:
		// Retry resets a failed jonggrang phase; a resumable run's failed stage is resumed by its agent.
		if st := run.Stage(sel.Stage); st == nil || st.Status != model.StageFailed || run.Kind != model.KindJonggrang {
			no[keys.ActRetry] = true
		}
		no[keys.ActStep] = !strings.EqualFold(sel.Stage, run.CurrentStage)
	}
	return no
}

func set(actions ...string) map[string]bool {
	out := make(map[string]bool, len(actions))
	for _, a := range actions {
		out[a] = true
	}
	return out
}

func (p *detailPane) ShortHelp() []key.Binding {
	k := p.app.Keys
	run, ok := p.app.SelectedRun()
	if !ok {
		return k.BindingsOf(keys.ActBack, keys.ActNextPane, keys.ActHelp)
	}
	no := p.NotHere()
	var out []key.Binding
	switch sel := p.selectionOf(run); sel.Kind {
	case app.RowItem:
		out = append(out, k.BindingsOf(keys.ActTick, keys.ActStep)...)
	case app.RowLock:
		out = append(out, k.BindingsOf(keys.ActUnlock)...)
	case app.RowFold:
		out = append(out, key.NewBinding(key.WithKeys("enter"), key.WithHelp(k.First(keys.ActOpen), "unfold")))
	case app.RowStage:
		out = append(out, k.BindingsOf(keys.ActRetry, keys.ActStep)...)
		out = append(out, key.NewBinding(key.WithKeys("enter"), key.WithHelp(k.First(keys.ActOpen), "expand")))
	}
	out = k.Without(out, no)
	if b, ok := keys.AttentionBinding(k, run.Attention.Action); ok && run.Attention.NeedsYou && !keys.ContainsBinding(out, b) {
		out = append([]key.Binding{b}, out...)
	}
	return keys.AppendNew(out, k.BindingsOf(keys.ActCopy, keys.ActBrief, keys.ActBack, keys.ActHelp)...)
}

// markFirst is the glyph that starts a wrapped message's first line; its continuation lines are indented
// instead, so one error does not read as three.
func markFirst(i int, glyph string) string {
	if i == 0 {
		return glyph
	}
	return strings.Repeat(" ", text.VisibleWidth(glyph))
}

func (p *detailPane) FullHelp() [][]key.Binding {
	k := p.app.Keys
	return [][]key.Binding{k.BindingsOf(keys.ActUp, keys.ActDown, keys.ActTop, keys.ActBottom, keys.ActPageUp, keys.ActPageDown, keys.ActOpen, keys.ActBack),
		k.BindingsOf(keys.ActTick, keys.ActStep, keys.ActUnlock, keys.ActRetry, keys.ActPause, keys.ActUndo)}
}

func (p *detailPane) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	act := p.app.Keys.Of(km)
	switch act {
	case keys.ActWrap:
		p.wrap, p.x = !p.wrap, 0
		return nil
	case keys.ActScrollLeft, keys.ActScrollRight, keys.ActLineStart, keys.ActLineEnd:
		p.scrollSideways(act)
		return nil
	}
	if act == keys.ActOpen {
		run, ok := p.app.SelectedRun()
		if !ok {
			return nil
		}
		switch sel := p.selectionOf(run); sel.Kind {
		case app.RowFold:
			p.unfolded[run.Key()] = !p.unfolded[run.Key()]
		case app.RowStage:
			p.toggle(run, sel.Stage)
		}
		return nil
	}
	p.move(act)
	return nil
}

func (p *detailPane) move(act string) {
	run, ok := p.app.SelectedRun()
	if !ok {
		return
	}
	w, h := p.innerW(), p.innerH()
	n, h := p.pinned(run, w, h)
	rows := p.rows(run, w)[n:]
	var ids []int
	for i, r := range rows {
		if r.id.Kind != app.RowText {
			ids = append(ids, i)
		}
	}
	if len(ids) == 0 {
		p.top = moveScroll(p.top, act, len(rows), h)
		return
	}
	cur := p.selectionOf(run)
	pos := 0
	for i, ri := range ids {
		if rows[ri].id == cur {
			pos = i
		}
	}
	page := max(1, h/2)
	switch act {
	case keys.ActUp:
		pos--
	case keys.ActDown:
		pos++
	case keys.ActTop:
		pos = 0
	case keys.ActBottom:
		pos = len(ids) - 1
	case keys.ActPageUp:
		pos -= page
	case keys.ActPageDown:
		pos += page
	default:
		return
	}
	// Past the first or last focusable row, keys scroll the text around it (problems and hints below the
	// last lock are still reachable).
	if pos < 0 || pos > len(ids)-1 {
		p.top = moveScroll(p.top, act, len(rows), h)
		return
	}
	p.sel[run.Key()] = rows[ids[pos]].id
	idx := ids[pos]
	if idx < p.top {
		p.top = idx
	}
	if idx >= p.top+h {
		p.top = idx - h + 1
	}
	if act == keys.ActBottom {
		// Show the end of the text, as long as the focused row stays on screen.
		p.top = app.Clamp(len(rows)-h, 0, idx)
	}
	if act == keys.ActTop {
		p.top = 0
	}
}

func moveScroll(top int, act string, total, h int) int {
	switch act {
	case keys.ActUp:
		top--
	case keys.ActDown:
		top++
	case keys.ActTop:
		top = 0
	case keys.ActBottom:
		top = total
	case keys.ActPageUp:
		top -= h / 2
	case keys.ActPageDown:
		top += h / 2
	}
	return app.Clamp(top, 0, max(0, total-h))
}

func (p *detailPane) title() string {
	if run, ok := p.app.SelectedRun(); ok {
		return "Detail " + text.Sanitize(run.ID)
	}
	return "Detail"
}

func (p *detailPane) View() string {
	w, h := p.innerW(), p.innerH()
	t := p.app.Theme
	run, ok := p.app.SelectedRun()
	if !ok {
		return theme.Box(t, p.title(), []string{t.Dim.Render("no run selected")}, p.w, p.h, p.app.Focus == app.PaneDetail, theme.Scroll{})
	}
	all := p.rows(run, w)
	n, bodyH := p.pinned(run, w, h)
	var out []string
	for _, r := range all[:n] {
		out = append(out, p.rowLines(r.text, w)...)
	}
	out = out[:min(len(out), h)]
	rows := all[n:]
	sel := p.selectionOf(run)
	top := app.Clamp(p.top, 0, max(0, len(rows)-bodyH))
	for i, r := range rows {
		if r.id == sel && r.id.Kind != app.RowText && i >= top+bodyH {
			// The focused row (by default the current stage) is always on screen, even before any key
			// moved to it, and even in the few rows of a stacked layout.
			top = i - bodyH + 1
			p.top = top
		}
	}
	for i := top; i < len(rows) && len(out) < h; i++ {
		for _, line := range p.rowLines(rows[i].text, w) {
			if len(out) >= h {
				break
			}
			if rows[i].id.Kind != app.RowText && rows[i].id == sel {
				line = app.SelectStyle(p.app, app.PaneDetail).Render(text.PadRight(text.Stripped(line), w))
			}
			out = append(out, line)
		}
	}
	sc := theme.Scroll{Above: top, Below: max(0, len(rows)-top-bodyH)}
	return theme.Box(t, p.title(), out, p.w, p.h, p.app.Focus == app.PaneDetail, sc)
}

// scrollSideways scrolls the detail rows (wrap off) by half a pane, or to either end of the widest.
func (p *detailPane) scrollSideways(act string) {
	if p.wrap {
		p.app.Note("wrap is on: w turns it off to scroll sideways")
		return
	}
	w := p.innerW()
	widest := 0
	if run, ok := p.app.SelectedRun(); ok {
		for _, r := range p.rows(run, w) {
			widest = max(widest, text.VisibleWidth(r.text))
		}
	}
	switch act {
	case keys.ActScrollLeft:
		p.x = max(0, p.x-max(1, w/2))
	case keys.ActScrollRight:
		p.x = min(p.x+max(1, w/2), max(0, widest-w+1))
	case keys.ActLineStart:
		p.x = 0
	case keys.ActLineEnd:
		p.x = max(0, widest-w+1)
	}
}

// rowLines draws one detail row at width w: wrapped into rows with its indentation kept, or windowed at x
// with ‹ › where it goes on.
func (p *detailPane) rowLines(txt string, w int) []string {
	if p.wrap {
		return text.WrapStyled(txt, w)
	}
	if p.x == 0 {
		return []string{text.Truncate(txt, w)}
	}
	total := text.VisibleWidth(txt)
	s := "‹" + ansi.Cut(txt, p.x+1, p.x+w-1)
	if p.x+w-1 < total {
		s += "›"
	}
	return []string{s}
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
