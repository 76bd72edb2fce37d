package ui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"runwatch/model"
)

// attentionRank orders runs so the ones a person must act on come first.
func attentionRank(r model.Run) int {
	if r.Archived {
		return 9 // history: below everything live, whatever it says
	}
	switch r.Status {
	case model.StatusStalled:
		return 0
	case model.StatusAwaitingInput:
		return 1
	case model.StatusBlocked:
		return 2
	case model.StatusFailed:
		return 3
	}
	if hasStaleLock(r) {
		return 4
	}
	switch r.Status {
	case model.StatusRunning:
		return 5
	case model.StatusPaused:
		return 6
	case model.StatusUnknown:
		return 7
	}
	return 8 // completed
}

func needsAttention(r model.Run) bool { return attentionRank(r) <= 4 }

func hasStaleLock(r model.Run) bool {
	for _, l := range r.Locks {
		if l.Verdict == model.VerdictStale {
			return true
		}
	}
	return false
}

// lockBadge summarises a run's locks by the most important verdict: live holders matter most to someone
// about to act, then unknown ones (which need a typed confirmation), then stale ones.
func lockBadge(r model.Run) (string, model.Verdict) {
	var live, stale, unknown int
	for _, l := range r.Locks {
		switch l.Verdict {
		case model.VerdictLive:
			live++
		case model.VerdictStale:
			stale++
		default:
			unknown++
		}
	}
	switch {
	case live > 0:
		return "live", model.VerdictLive
	case unknown > 0:
		return "unknown", model.VerdictUnknown
	case stale > 0:
		return "stale", model.VerdictStale
	}
	return "", ""
}

func matchesFilter(r model.Run, f string) bool {
	if f == "" {
		return true
	}
	f = strings.ToLower(f)
	for _, s := range []string{r.ID, r.Title, string(r.Status), string(r.Kind), r.CurrentStage, r.Dir} {
		if strings.Contains(strings.ToLower(s), f) {
			return true
		}
	}
	return false
}

// resort rebuilds the visible order and keeps the selection on the same run when it is still visible.
func (m *Model) resort() {
	m.order = m.order[:0]
	for p, r := range m.runs {
		if matchesFilter(r, m.filter) {
			m.order = append(m.order, p)
		}
	}
	sort.Slice(m.order, func(i, j int) bool {
		a, b := m.runs[m.order[i]], m.runs[m.order[j]]
		if ra, rb := attentionRank(a), attentionRank(b); ra != rb {
			return ra < rb
		}
		// Within a group the order is by id, not by recency: a list that reshuffles on every write to a busy
		// run cannot be read at a glance. A run moves only when its status moves it to another group.
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.StatePath < b.StatePath
	})
	m.cursor = 0
	found := false
	for i, p := range m.order {
		if p == m.selected {
			m.cursor, found = i, true
			break
		}
	}
	if !found {
		m.selected = ""
		if len(m.order) > 0 {
			m.selected = m.order[0]
		}
	}
	m.clampAll()
}

func (m *Model) clampAll() {
	h := m.paneHeight(PaneRuns)
	if h <= 0 {
		return
	}
	if m.cursor < m.runsTop {
		m.runsTop = m.cursor
	}
	if m.cursor >= m.runsTop+h {
		m.runsTop = m.cursor - h + 1
	}
	m.runsTop = clamp(m.runsTop, 0, max(0, len(m.order)-h))
}

func progressBar(p model.Progress, cells int) string {
	if cells <= 0 {
		return ""
	}
	filled := 0
	if p.Total > 0 {
		filled = p.Done * cells / p.Total
	}
	return strings.Repeat("█", filled) + strings.Repeat("░", cells-filled)
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	if t.After(now) {
		return "now" // clock skew between writer and reader: never show a future time as an age
	}
	return model.HumanDuration(now.Sub(t))
}

func kindShort(k model.Kind) string {
	switch k {
	case model.KindJonggrang:
		return "jg"
	case model.KindResumable:
		return "rs"
	}
	return "??"
}

// renderRuns draws the run list into w×h cells.
func (m Model) renderRuns(w, h int) []string {
	t := m.theme
	now := m.opts.Now()
	lines := make([]string, 0, h)
	if len(m.order) == 0 {
		switch {
		case !m.loaded:
			lines = append(lines, t.Dim.Render("scanning…"))
		case m.filter != "":
			lines = append(lines, t.Dim.Render(truncate("no run matches /"+Sanitize(m.filter), w)))
		default:
			lines = append(lines, t.Dim.Render("no runs found under the given paths"))
		}
		return lines
	}
	tier := 0 // 0 narrow, 1 medium, 2 full
	switch {
	case w >= 80:
		tier = 2
	case w >= 46:
		tier = 1
	}
	for i := m.runsTop; i < len(m.order) && len(lines) < h; i++ {
		r := m.runs[m.order[i]]
		st := t.statusStyle(r.Status)
		word, statusW := shortStatus(r.Status), 6
		if tier == 2 {
			word, statusW = string(r.Status), len("awaiting-input")
		}
		glyph := r.Status.Glyph()
		if r.Archived {
			st, glyph, word = t.Dim, "⌂", "archvd"
			if tier == 2 {
				word = "archived"
			}
		}
		status := st.Render(fmt.Sprintf("%s %-*s", glyph, statusW, word))
		badge, verdict := lockBadge(r)
		badgeText := strings.Repeat(" ", badgeWidth(tier))
		if badge != "" {
			if tier == 0 {
				badge = badge[:1] // l / s / u: the glyph-less short form still reads next to the L: prefix
			}
			badgeText = t.verdictStyle(verdict).Render(padRight("L:"+badge, badgeWidth(tier)))
		}
		right := fmt.Sprintf("%6s", ago(now, r.UpdatedAt))
		prog := fmt.Sprintf("%d/%d", r.Progress.Done, r.Progress.Total)
		var mid string
		switch tier {
		case 2:
			mid = fmt.Sprintf(" %s %s %-5s %-6s", kindShort(r.Kind), progressBar(r.Progress, 6), prog, truncate(Sanitize(r.CurrentStage), 6))
		case 1:
			mid = fmt.Sprintf(" %s %s %-5s", kindShort(r.Kind), progressBar(r.Progress, 4), prog)
		default:
			mid = fmt.Sprintf(" %-5s", prog)
		}
		fixed := visibleWidth(status) + visibleWidth(mid) + visibleWidth(badgeText) + visibleWidth(right) + 3
		idW := max(4, w-fixed)
		id := padRight(truncate(Sanitize(r.ID), idW), idW)
		row := status + " " + id + mid + " " + badgeText + " " + right
		row = truncate(row, w)
		if i == m.cursor {
			row = m.selectStyle(PaneRuns).Render(padRight(stripped(row), w))
		}
		lines = append(lines, row)
	}
	return lines
}

func badgeWidth(tier int) int {
	if tier == 0 {
		return 3
	}
	return len("L:unknown")
}

func shortStatus(s model.RunStatus) string {
	switch s {
	case model.StatusAwaitingInput:
		return "input"
	case model.StatusCompleted:
		return "done"
	case model.StatusStalled:
		return "stall"
	case model.StatusBlocked:
		return "block"
	case model.StatusRunning:
		return "run"
	case model.StatusUnknown:
		return "?"
	}
	return string(s)
}
