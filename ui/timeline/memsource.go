// Log sources that are not a run.log: the timeline of a jonggrang run built in memory from its files.

package timeline

import (
	"fmt"
	"regexp"
	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/text"
	"sort"
	"strings"
	"time"
)

// MemSource is a timeline built in memory (jonggrang runs have no run.log).
type MemSource struct{ lines []string }

// NewMemSource is a log source holding lines (a test's log, a jonggrang run's timeline).
func NewMemSource(lines []string) *MemSource { return &MemSource{lines: lines} }

// Add appends lines, as a log that grows (the timeline learns of them from the batch that names the log).
func (s *MemSource) Add(lines ...string) { s.lines = append(s.lines, lines...) }

func (s *MemSource) Len() int { return len(s.lines) }

func (s *MemSource) Lines(from, n int) []string {
	from = app.Clamp(from, 0, len(s.lines))
	return s.lines[from:min(len(s.lines), from+n)]
}

func (s *MemSource) Search(re *regexp.Regexp, from int, forward bool) (int, bool) {
	for i := from; i >= 0 && i < len(s.lines); {
		if re.MatchString(s.lines[i]) {
			return i, true
		}
		if forward {
			i++
		} else {
			i--
		}
	}
	return 0, false
}

func (s *MemSource) Refresh() (bool, error) { return false, nil }

// EntryStart is the entry holding line: the nearest timestamped line at or above it.
func (s *MemSource) EntryStart(line int) int {
	for i := min(line, len(s.lines)-1); i > 0; i-- {
		if parseLine(s.lines[i]).HasTime {
			return i
		}
	}
	return 0
}

func (s *MemSource) Close() error { return nil }

// jonggrangTimeline renders a jonggrang run's history as run.log-shaped lines, so one renderer, search and
// error jump serve both conventions: phase and agent timestamps, phase outputs and interruptions in time
// order, after the tail of progress.txt (which has no timestamps).
func jonggrangTimeline(run model.Run) []string {
	type ev struct {
		at   time.Time
		text string
	}
	var evs []ev
	addT := func(at *time.Time, format string, args ...any) {
		if at != nil && !at.IsZero() {
			evs = append(evs, ev{*at, fmt.Sprintf(format, args...)})
		}
	}
	for _, st := range run.Stages {
		addT(st.StartedAt, "phase_start phase=%s name=%s", st.Key, st.Name)
		switch st.Status {
		case model.StageFailed:
			at := st.CompletedAt
			if at == nil {
				at = st.StartedAt
			}
			addT(at, "phase_failed phase=%s error=%q", st.Key, st.ErrorText())
		case model.StageCompleted:
			addT(st.CompletedAt, "phase_complete phase=%s name=%s", st.Key, st.Name)
		case model.StageSkipped:
			addT(st.CompletedAt, "phase_skipped phase=%s reason=%q", st.Key, st.SkipReason())
		}
	}
	if jd := run.Jonggrang; jd != nil {
		for _, a := range jd.Agents {
			addT(a.StartedAt, "agent_start agent=%s role=%s", a.ID, a.Role)
			addT(a.CompletedAt, "agent_%s agent=%s role=%s", strings.ToLower(text.OrDash(a.Status)), a.ID, a.Role)
		}
		for _, po := range jd.PhaseOutputs {
			if po.Error != "" {
				addT(po.Timestamp, "output_error file=%s role=%s error=%q", po.File, po.Role, po.Error)
			} else {
				addT(po.Timestamp, "output file=%s role=%s status=%s", po.File, po.Role, po.Status)
			}
		}
		for _, at := range jd.Interruptions {
			a := at
			addT(&a, "run_interrupted (progress.txt)")
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
	lines := make([]string, 0, len(evs)+8)
	// progress.txt has no timestamps, so it goes first: the timed events end the timeline, and follow mode
	// (which shows the end) shows the newest of them.
	if jd := run.Jonggrang; jd != nil && len(jd.ProgressTail) > 0 {
		lines = append(lines, "progress.txt (last lines, untimed):")
		for _, p := range jd.ProgressTail {
			lines = append(lines, "  "+strings.ReplaceAll(p, "\n", " "))
		}
	}
	for _, e := range evs {
		// Newlines in untrusted fields would otherwise fake continuation lines.
		lines = append(lines, "["+e.at.UTC().Format(time.RFC3339)+"] "+strings.ReplaceAll(e.text, "\n", " "))
	}
	return lines
}
