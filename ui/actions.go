package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"runwatch/model"
)

// ActionRequest is what a mutating key asks for. The Actor turns it into a plan with the state/action
// package, so the dashboard, the subcommands and the tests share one code path.
type ActionRequest struct {
	Action   string // ActUnlock, ActStep, ActTick, ActRetry, ActPause, ActUndo
	Run      model.Run
	Stage    string // step/retry/tick: the stage in focus
	Item     string // tick: the checklist key
	Check    bool   // tick: the value to set
	LockPath string // unlock: one lock; empty means every stale lock of the run
	Resume   bool   // pause: true resumes a paused run
}

// Planned is an action computed but not yet written.
type Planned interface {
	// Summary says in one line what will happen.
	Summary() string
	// Preview is the exact change: a unified diff plus any log line to be appended.
	Preview() string
	// TypedConfirmation is the word the user must type (for locks whose liveness is unknown), or "" when
	// y/N suffices.
	TypedConfirmation() string
	// Apply writes the change, re-checking that the files are still what the preview showed. typed is what
	// the person typed for a typed confirmation.
	Apply(typed string) (string, error)
}

// Actor plans actions. A nil Actor (read-only) means no action can be planned.
type Actor interface {
	Plan(req ActionRequest) (Planned, error)
}

type confirmState struct {
	req     ActionRequest
	planned Planned
	preview []string
	typed   string
	top     int
}

func (m *Model) requestAction(act string) tea.Cmd {
	run, ok := m.selectedRun()
	if !ok {
		m.setNote("no run selected")
		return nil
	}
	if m.actor == nil || m.keys.ReadOnly {
		m.setError(fmt.Errorf("read-only: %s is disabled", act))
		return nil
	}
	req := ActionRequest{Action: act, Run: run}
	sel := m.detailSelection(run)
	switch act {
	case ActStep:
		req.Stage = run.CurrentStage
	case ActRetry:
		req.Stage = sel.stage
		if st := run.Stage(req.Stage); st == nil || st.Status != model.StageFailed {
			req.Stage = firstFailedStage(run)
		}
		if req.Stage == "" {
			m.setError(fmt.Errorf("retry: %s has no failed %s", Sanitize(run.ID), run.Kind.StageWord()))
			return nil
		}
	case ActTick:
		if sel.kind != rowItem {
			m.setError(fmt.Errorf("tick: move to a checklist item in the detail pane first"))
			return nil
		}
		req.Stage, req.Item = sel.stage, sel.key
		req.Check = !checklistValue(run, sel.stage, sel.key)
	case ActUnlock:
		if sel.kind == rowLock {
			req.LockPath = sel.key
		}
	case ActPause:
		req.Resume = run.Status == model.StatusPaused
	}
	actor := m.actor
	return func() tea.Msg {
		p, err := actor.Plan(req)
		return planMsg{req: req, planned: p, err: err}
	}
}

func firstFailedStage(run model.Run) string {
	for _, s := range run.Stages {
		if s.Status == model.StageFailed {
			return s.Key
		}
	}
	return ""
}

func checklistValue(run model.Run, stage, key string) bool {
	if st := run.Stage(stage); st != nil {
		for _, it := range st.Checklist {
			if it.Key == key {
				return it.Done
			}
		}
	}
	return false
}

// updateConfirm handles keys while the confirmation dialog is open. Nothing but an explicit yes (or the
// typed word) applies; every other key keeps the dialog or cancels it.
func (m *Model) updateConfirm(msg tea.KeyPressMsg) tea.Cmd {
	c := m.confirm
	key := msg.String()
	switch key {
	case "esc", "ctrl+c":
		m.confirm = nil
		m.setNote("cancelled")
		return nil
	case "up", "k":
		if c.planned.TypedConfirmation() == "" || key == "up" {
			c.top = max(0, c.top-1)
			return nil
		}
	case "down", "j":
		if c.planned.TypedConfirmation() == "" || key == "down" {
			c.top++
			return nil
		}
	}
	if word := c.planned.TypedConfirmation(); word != "" {
		switch key {
		case "enter":
			if c.typed != word {
				m.setError(fmt.Errorf("type %q exactly to confirm, or esc to cancel", Sanitize(word)))
				return nil
			}
			return m.apply()
		case "backspace":
			if c.typed != "" {
				r := []rune(c.typed)
				c.typed = string(r[:len(r)-1])
			}
		default:
			c.typed += keyText(msg)
		}
		return nil
	}
	switch key {
	case "y", "Y":
		return m.apply()
	case "n", "N", "q":
		m.confirm = nil
		m.setNote("cancelled")
	}
	return nil
}

func (m *Model) apply() tea.Cmd {
	p, typed := m.confirm.planned, m.confirm.typed
	m.confirm = nil
	return applyCmd(p, typed)
}

// keyText is the text a key press types, for the dialogs' and filters' line inputs.
func keyText(msg tea.KeyPressMsg) string {
	if msg.String() == "space" {
		return " "
	}
	return msg.Text
}

func (m Model) renderConfirm(w, h int) string {
	c := m.confirm
	t := m.theme
	inner := max(10, w-4)
	var lines []string
	lines = append(lines, t.Bold.Render(truncate(Sanitize(c.planned.Summary()), inner)))
	lines = append(lines, "")
	bodyH := max(1, h-8)
	// Long lines wrap rather than truncate: the confirmation must show the whole change.
	var prev []string
	for _, l := range c.preview {
		for _, chunk := range wrapText(l, inner) {
			prev = append(prev, m.diffStyle(l).Render(chunk))
		}
	}
	top := min(c.top, max(0, len(prev)-bodyH))
	for i := top; i < len(prev) && i < top+bodyH; i++ {
		lines = append(lines, prev[i])
	}
	if len(prev) > bodyH {
		lines = append(lines, t.Dim.Render(fmt.Sprintf("… %d lines, j/k to scroll", len(prev))))
	}
	lines = append(lines, "")
	if word := c.planned.TypedConfirmation(); word != "" {
		lines = append(lines, t.Warn.Render("⚠ liveness unknown: type "+Sanitize(word)+" and press enter"))
		lines = append(lines, "> "+Sanitize(c.typed)+"█")
		lines = append(lines, t.Dim.Render("esc cancel"))
	} else {
		lines = append(lines, t.Bold.Render("Apply this change? [y/N]")+t.Dim.Render("  esc cancel"))
	}
	return box(t, "Confirm "+c.req.Action, lines, min(w, inner+4), min(h, len(lines)+2), true)
}

// diffStyle styles a preview line by its unified-diff prefix; the +/- stays visible, so colour only doubles it.
func (m Model) diffStyle(s string) lipgloss.Style {
	t := m.theme
	switch {
	case strings.HasPrefix(s, "+++"), strings.HasPrefix(s, "---"):
		return t.Bold
	case strings.HasPrefix(s, "+"):
		return t.DiffAdd
	case strings.HasPrefix(s, "-"):
		return t.DiffDel
	case strings.HasPrefix(s, "@@"):
		return t.DiffHunk
	}
	return lipgloss.NewStyle()
}
