package detail

import (
	"cmp"
	"strings"
	"time"

	"runwatch/model"
	"runwatch/ui/text"
)

// timeBars draws the run's stages on one time scale, a row each: what each done stage took (█), what the
// current one has run (▓) and what it usually takes beyond that (░), and the usual length of each stage
// still to come (░), from the history of the task's past runs. A stage whose length nothing says is a "?".
// So "where is it and how long is left" is seen at a glance. Nil when no stage has a length to draw.
func (p *Pane) timeBars(run model.Run, w int, now time.Time) []string {
	t := p.app.Theme
	var segs []seg
	var total time.Duration
	keyW := 0
	for _, st := range run.Stages {
		s := seg{key: text.Sanitize(st.Key), cur: strings.EqualFold(st.Key, run.CurrentStage) && !st.Status.Done()}
		s.stopped, _ = run.StoppedAt(&st)
		u := st.Timing.Usual()
		switch {
		case st.Status == model.StageSkipped:
		case st.Status.Done():
			if s.done = st.Duration(now); s.done == 0 && st.StartedAt == nil {
				s.unknown = true
			}
		case s.cur:
			if st.StartedAt != nil {
				s.ran = st.Duration(now)
			}
			if s.stopped != "" {
				// Nothing runs it: no usual length of what is left is drawn as if it were being spent.
				break
			}
			if u.Known() {
				s.rest = max(0, u.Median-s.ran)
			} else {
				s.unknown = true
			}
		default:
			if u.Known() {
				s.rest = u.Median
			} else {
				s.unknown = true
			}
		}
		total += s.done + s.ran + s.rest
		keyW = max(keyW, text.VisibleWidth(s.key))
		segs = append(segs, s)
	}
	if total <= 0 || !anyUsual(run) {
		return nil // without a past run, there is no length of what is left to draw
	}
	// A stalled or blocked run's current stage is not being run: drawn as running (▓), its bar read as work
	// under way while the legend said running. It has its own glyph, named in the legend.
	var stopped model.RunStatus
	for _, s := range segs {
		stopped = cmp.Or(s.stopped, stopped)
	}
	labels := make([]string, len(segs))
	labelW := 10
	for i, s := range segs {
		labels[i] = p.segLabel(s, now)
		// The bars leave room for the longest label: a bar that took the whole width cut "24m stalled".
		labelW = max(labelW, text.VisibleWidth(labels[i]))
	}
	keyW = min(keyW, 12)
	barW := w - keyW - 2 - labelW
	if barW < 8 {
		return nil
	}
	cells := func(d time.Duration) int {
		if d <= 0 {
			return 0
		}
		return max(1, int(float64(barW)*float64(d)/float64(total)+0.5))
	}
	legend := "█ done  ▓ running  ░ usual length of what is left  ? not known"
	if stopped != "" {
		legend = "█ done  ▓ running  ▒ " + string(stopped) + "  ░ usual length of what is left  ? not known"
	}
	out := []string{t.Dim.Render(legend)}
	// Each bar starts where the one before it ended, so the rows read as one line of time, left to right.
	off := 0
	for i, s := range segs {
		// Rounding up to a cell each can add up past the width: a bar ends at the width, never in the label.
		room := barW - min(off, barW)
		fit := func(n int) int { n = min(n, room); room -= n; return n }
		bar := ""
		switch {
		case s.stopped != "":
			bar = t.Warn.Render(strings.Repeat("▒", fit(cells(s.ran))))
		case s.cur:
			bar = t.Bold.Render(strings.Repeat("▓", fit(cells(s.ran)))) + t.Dim.Render(strings.Repeat("░", fit(cells(s.rest))))
			if s.unknown {
				bar += t.Dim.Render("?")
			}
		case s.done > 0:
			bar = t.Good.Render(strings.Repeat("█", fit(cells(s.done))))
		case s.unknown:
			bar = t.Dim.Render("?")
		case s.rest > 0:
			bar = t.Dim.Render(strings.Repeat("░", fit(cells(s.rest))))
		}
		n := cells(s.done) + cells(s.ran) + cells(s.rest)
		if s.unknown && n == 0 {
			n = 1
		}
		line := text.PadRight(text.CutEnd(s.key, keyW), keyW) + " " + strings.Repeat(" ", min(off, barW)) + bar
		if labels[i] != "" {
			line += " " + t.Dim.Render(labels[i])
		}
		off += n
		out = append(out, line)
	}
	return out
}

// seg is one stage's bar: what it took (done), has run (ran) and usually has left (rest).
type seg struct {
	key             string
	done, ran, rest time.Duration
	unknown, cur    bool
	stopped         model.RunStatus // the current stage where the run stopped (StoppedAt)
}

// segLabel is what stands after a stage's bar: its time, and for the current stage what is left or why
// nothing is being spent on it.
func (p *Pane) segLabel(s seg, now time.Time) string {
	switch {
	case s.cur:
		l := p.app.Growing(now, s.ran, s.ran > 0)
		if s.stopped != "" {
			return l + " " + string(s.stopped)
		} else if !s.unknown && s.rest > 0 {
			return l + " ~" + model.HumanDuration(s.rest)
		}
		return l
	case s.done > 0:
		return model.HumanDuration(s.done)
	case !s.unknown && s.rest > 0:
		return "~" + model.HumanDuration(s.rest)
	}
	return ""
}

func anyUsual(run model.Run) bool {
	for _, st := range run.Stages {
		if st.Timing.Usual().Known() {
			return true
		}
	}
	return false
}
