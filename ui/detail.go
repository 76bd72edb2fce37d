package ui

import (
	"fmt"
	"strings"

	"runwatch/model"
)

type rowKind int

const (
	rowText rowKind = iota
	rowStage
	rowItem
	rowLock
	rowOutput
)

// rowID names a focusable detail row by what it shows, so a live update that inserts rows above it does not
// move the focus to another item.
type rowID struct {
	kind  rowKind
	stage string
	key   string
}

type detailRow struct {
	id   rowID
	text string
}

// detailSelection is the focused row of run, defaulting to its current stage.
func (m Model) detailSelection(run model.Run) rowID {
	if id, ok := m.detailSel[run.StatePath]; ok {
		for _, r := range m.detailRows(run, 80) {
			if r.id == id {
				return id
			}
		}
	}
	if run.CurrentStage != "" {
		if st := run.Stage(run.CurrentStage); st != nil {
			return rowID{kind: rowStage, stage: st.Key, key: st.Key}
		}
	}
	return rowID{}
}

// expandedStage is the stage whose checklist or outputs are shown: the focused one, else the current one.
func (m Model) expandedStage(run model.Run) string {
	id, ok := m.detailSel[run.StatePath]
	if ok && id.stage != "" {
		return id.stage
	}
	if st := run.Stage(run.CurrentStage); st != nil {
		return st.Key
	}
	return ""
}

// detailRows builds the detail pane for run at width w. It is pure, so Update (focus movement) and View
// (drawing) agree on the rows.
func (m Model) detailRows(run model.Run, w int) []detailRow {
	t := m.theme
	now := m.opts.Now()
	var rows []detailRow
	add := func(s string) { rows = append(rows, detailRow{text: s}) }
	addID := func(id rowID, s string) { rows = append(rows, detailRow{id: id, text: s}) }
	section := func(title string) {
		if len(rows) > 0 {
			add("")
		}
		add(t.Title.Render(title))
	}
	word := run.Kind.StageWord()

	add(t.Bold.Render(Sanitize(run.ID)) + t.Dim.Render("  "+string(run.Kind)))
	if run.Title != "" && run.Title != run.ID {
		for _, l := range wrapText(Sanitize(run.Title), w) {
			add(l)
		}
	}
	head := t.statusStyle(run.Status).Render(run.Status.Glyph()+" "+string(run.Status)) +
		fmt.Sprintf(" · %s %s · %d/%d done", word, orDash(Sanitize(run.CurrentStage)), run.Progress.Done, run.Progress.Total)
	if run.RawStatus != "" && run.RawStatus != string(run.Status) {
		head += t.Dim.Render(" (file says " + Sanitize(run.RawStatus) + ")")
	}
	add(head)
	add(t.Dim.Render(truncate(Sanitize(run.Dir), w)))
	for _, c := range run.CrashSigns {
		add(t.Warn.Render("⚠ " + Sanitize(c)))
	}
	if run.Archived {
		add(t.Dim.Render("archived run (read-only history)"))
	}

	expanded := m.expandedStage(run)
	if len(run.Stages) > 0 {
		section(strings.ToUpper(word[:1]) + word[1:] + "s")
	}
	for _, st := range run.Stages {
		line := t.stageStyle(st.Status).Render(st.Status.Glyph()) + " " + padRight(Sanitize(st.Key), 4)
		if st.Name != "" && st.Name != st.Key {
			line += " " + Sanitize(st.Name)
		}
		if d := st.Duration(now); d > 0 {
			line += t.Dim.Render(" " + model.HumanDuration(d))
		}
		if st.Status != model.StagePending || st.RawStatus != "" {
			status := string(st.Status)
			if st.RawStatus != "" && st.RawStatus != status {
				status += " (" + Sanitize(st.RawStatus) + ")"
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
		if strings.EqualFold(st.Key, run.CurrentStage) {
			line += t.Bold.Render(" ◀ current")
		}
		addID(rowID{kind: rowStage, stage: st.Key, key: st.Key}, line)
		if st.Error != "" {
			for _, l := range wrapText(Sanitize(st.Error), w-6) {
				add("    " + t.Bad.Render("✗ "+l))
			}
		}
		if st.SkipReason != "" {
			add("    " + t.Dim.Render("skipped: "+Sanitize(st.SkipReason)))
		}
		if st.Key != expanded {
			continue
		}
		for _, it := range st.Checklist {
			box := "[ ]"
			if it.Done {
				box = "[x]"
			}
			text := "    " + box + " " + Sanitize(it.Key)
			if it.Raw != "" && it.Raw != "0" && it.Raw != "1" {
				text += t.Warn.Render(" ⚠ value " + Sanitize(it.Raw))
			}
			addID(rowID{kind: rowItem, stage: st.Key, key: it.Key}, text)
		}
		if run.Jonggrang != nil {
			for _, po := range run.Jonggrang.PhaseOutputs {
				if po.Phase != st.Key {
					continue
				}
				addID(rowID{kind: rowOutput, stage: st.Key, key: po.File}, "    "+wordGlyph(po.Status)+" "+Sanitize(po.File)+t.Dim.Render(" "+Sanitize(po.Status)))
				for _, s := range po.Summary {
					add("      " + t.Dim.Render(truncate(Sanitize(s), max(8, w-6))))
				}
				if po.Error != "" {
					add("      " + t.Bad.Render("✗ "+truncate(Sanitize(po.Error), max(8, w-8))))
				}
			}
		}
	}

	if jd := run.Jonggrang; jd != nil && len(jd.Agents) > 0 {
		section("Agents")
		for _, a := range jd.Agents {
			line := wordGlyph(a.Status) + " " + Sanitize(a.ID)
			if a.Role != "" && a.Role != a.ID {
				line += t.Dim.Render(" " + Sanitize(a.Role))
			}
			line += t.Dim.Render(" " + orDash(Sanitize(a.Status)))
			if a.StartedAt != nil {
				end := now
				if a.CompletedAt != nil {
					end = *a.CompletedAt
				}
				if d := end.Sub(*a.StartedAt); d > 0 {
					line += t.Dim.Render(" " + model.HumanDuration(d))
				}
			}
			add(truncate(line, w))
		}
	}
	if jd := run.Jonggrang; jd != nil && len(jd.Tasks) > 0 {
		section("Tasks")
		for _, tk := range jd.Tasks {
			add(truncate(wordGlyph(tk.Status)+" "+Sanitize(tk.ID)+" "+Sanitize(tk.Title)+t.Dim.Render(" "+orDash(Sanitize(tk.Status))), w))
		}
	}

	if len(run.Flags) > 0 {
		section("Flags")
		group := ""
		for _, f := range run.Flags {
			label := ""
			if f.Group != group {
				group, label = f.Group, Sanitize(f.Group)
			}
			g := t.Bad.Render("✗")
			if f.Value {
				g = t.Good.Render("✓")
			}
			text := padRight(label, 13) + g + " " + Sanitize(f.Name)
			if f.Raw != "" && f.Raw != "0" && f.Raw != "1" && f.Raw != "true" && f.Raw != "false" {
				text += t.Dim.Render(" (" + Sanitize(f.Raw) + ")")
			}
			add(text)
		}
	}

	if len(run.Gates) > 0 {
		section("Gates")
		for _, g := range run.Gates {
			glyph := t.Good.Render("✓")
			if g.Blocked {
				glyph = t.Warn.Render("⚠ blocked")
			}
			line := glyph + " " + Sanitize(g.Name) + ": " + Sanitize(g.Status)
			if g.Detail != "" {
				line += t.Dim.Render(" — " + Sanitize(g.Detail))
			}
			add(truncate(line, w))
		}
	}

	if len(run.Locks) > 0 {
		section("Locks")
		for _, l := range run.Locks {
			holder := l.Holder
			if holder == "" {
				holder = l.Path
			}
			line := t.verdictStyle(l.Verdict).Render("["+string(l.Verdict)+"]") + " " + Sanitize(holder)
			if l.PID > 0 {
				line += fmt.Sprintf(" pid %d", l.PID)
			}
			if l.Host != "" {
				line += " @" + Sanitize(l.Host)
			}
			if l.AcquiredAt != nil {
				line += t.Dim.Render(" age " + model.HumanDuration(now.Sub(*l.AcquiredAt)))
			}
			addID(rowID{kind: rowLock, key: l.Path}, line)
			for _, reason := range l.Reasons {
				add("    " + t.Dim.Render("· "+truncate(Sanitize(reason), max(8, w-6))))
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
			for _, l := range wrapText(Sanitize(p.Message), max(8, w-2)) {
				if first {
					add(g + " " + t.Dim.Render(Sanitize(p.Code)))
					first = false
				}
				add("  " + l)
			}
		}
	}
	if rd := run.Resumable; rd != nil && rd.ResumeHint != "" {
		section("Resume hint")
		for _, l := range wrapText(Sanitize(rd.ResumeHint), w) {
			add(l)
		}
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

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func (m *Model) moveDetail(act string) {
	run, ok := m.selectedRun()
	if !ok {
		return
	}
	w := m.paneWidth(PaneDetail)
	rows := m.detailRows(run, w)
	var ids []int
	for i, r := range rows {
		if r.id.kind != rowText {
			ids = append(ids, i)
		}
	}
	if len(ids) == 0 {
		m.detailTop = moveScroll(m.detailTop, act, len(rows), m.paneHeight(PaneDetail))
		return
	}
	cur := m.detailSelection(run)
	pos := 0
	for i, ri := range ids {
		if rows[ri].id == cur {
			pos = i
		}
	}
	page := max(1, m.paneHeight(PaneDetail)/2)
	switch act {
	case ActUp:
		pos--
	case ActDown:
		pos++
	case ActTop:
		pos = 0
	case ActBottom:
		pos = len(ids) - 1
	case ActPageUp:
		pos -= page
	case ActPageDown:
		pos += page
	}
	h := m.paneHeight(PaneDetail)
	// Past the first or last focusable row, keys scroll the text around it (problems and hints below the
	// last lock are still reachable).
	if pos < 0 || pos > len(ids)-1 {
		m.detailTop = moveScroll(m.detailTop, act, len(rows), h)
		return
	}
	pos = clamp(pos, 0, len(ids)-1)
	m.detailSel[run.StatePath] = rows[ids[pos]].id
	// Rows change when a different stage expands, so find the focused row again before scrolling to it.
	rows = m.detailRows(run, w)
	idx := 0
	for i, r := range rows {
		if r.id == m.detailSel[run.StatePath] {
			idx = i
		}
	}
	if idx < m.detailTop {
		m.detailTop = idx
	}
	if idx >= m.detailTop+h {
		m.detailTop = idx - h + 1
	}
	if act == ActBottom {
		// Show the end of the text, as long as the focused row stays on screen.
		m.detailTop = clamp(len(rows)-h, 0, idx)
	}
}

func moveScroll(top int, act string, total, h int) int {
	switch act {
	case ActUp:
		top--
	case ActDown:
		top++
	case ActTop:
		top = 0
	case ActBottom:
		top = total
	case ActPageUp:
		top -= h / 2
	case ActPageDown:
		top += h / 2
	}
	return clamp(top, 0, max(0, total-h))
}

func (m Model) renderDetail(w, h int) []string {
	run, ok := m.selectedRun()
	if !ok {
		return []string{m.theme.Dim.Render("no run selected")}
	}
	rows := m.detailRows(run, w)
	sel := m.detailSelection(run)
	top := clamp(m.detailTop, 0, max(0, len(rows)-h))
	var out []string
	for i := top; i < len(rows) && len(out) < h; i++ {
		line := truncate(rows[i].text, w)
		if rows[i].id.kind != rowText && rows[i].id == sel {
			line = m.selectStyle(PaneDetail).Render(padRight(stripped(line), w))
		}
		out = append(out, line)
	}
	return out
}
