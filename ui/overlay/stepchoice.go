// The choice of stage when a step cannot know where a resumable run goes next: the person picks, then the
// plan is confirmed as usual.

package overlay

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/text"
	"runwatch/ui/theme"
)

// StepChoice is the dashboard's `step --to`: when a resumable run's files do not say which stage follows the
// current one, step is refused, and this asks the person to name it (a number per open stage). The choice is
// planned like any step, so the usual confirmation with the diff follows.
type StepChoice struct {
	app     *app.App
	req     app.ActionRequest
	reason  string
	options []string
	w, h    int
	done    bool
}

// StepChoices lists the stages a step from run's current stage may move to when the files leave the next
// one open: the stages not done, other than the current one. None when the next stage is known.
func StepChoices(run model.Run) []string {
	if run.Kind != model.KindResumable || run.Resumable == nil {
		return nil
	}
	cur := run.Stage(run.CurrentStage)
	if cur == nil || cur.Status.Done() {
		return nil
	}
	if _, known := run.Resumable.NextStage(cur.Key); known {
		return nil
	}
	var out []string
	for _, s := range run.Stages {
		if s.Key != cur.Key && !s.Status.Done() {
			out = append(out, s.Key)
		}
	}
	if len(out) > 9 {
		out = out[:9]
	}
	return out
}

func NewStepChoice(a *app.App, req app.ActionRequest, reason string, options []string) *StepChoice {
	return &StepChoice{app: a, req: req, reason: reason, options: options}
}

func (c *StepChoice) Done() bool { return c.done }

// Close cancels, as n and esc do.
func (c *StepChoice) Close() {
	c.done = true
	c.app.Note("cancelled: nothing was changed")
}

func (c *StepChoice) SetSize(w, h int) { c.w, c.h = max(20, w-4), h }

func (c *StepChoice) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	k := km.String()
	if k == "esc" || k == "ctrl+c" || k == "q" || k == "n" {
		c.Close()
		return nil
	}
	if len(k) == 1 && k[0] >= '1' && int(k[0]-'0') <= len(c.options) {
		c.done = true
		req := c.req
		req.To = c.options[k[0]-'1']
		actor := c.app.Actor
		return func() tea.Msg {
			p, err := actor.Plan(req)
			return app.PlanMsg{Req: req, Planned: p, Err: err}
		}
	}
	return nil
}

func (c *StepChoice) ShortHelp() []key.Binding {
	return []key.Binding{
		key.NewBinding(key.WithKeys("1"), key.WithHelp(fmt.Sprintf("1-%d", len(c.options)), "next stage")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}

func (c *StepChoice) FullHelp() [][]key.Binding { return [][]key.Binding{c.ShortHelp()} }

func (c *StepChoice) View() string {
	t := c.app.Theme
	inner := max(10, c.w-4)
	cur := text.Sanitize(c.req.Run.CurrentStage)
	lines := []string{t.Bold.Render(text.Truncate("Which stage comes after "+cur+"?", inner)), ""}
	for i, o := range c.options {
		lines = append(lines, text.Truncate(fmt.Sprintf("%d  %s %s", i+1, cur+" →", text.Sanitize(o)), inner))
	}
	lines = append(lines, "", t.Dim.Render(text.Truncate("a number names it (the change is shown first) · esc cancel", inner)), "")
	// The choices come first: on a small screen the reason is what gets cut (the footer has it too).
	room := max(0, c.h-2-len(lines))
	for i, l := range text.WrapText(text.Sanitize(c.reason), inner) {
		if i == room {
			break
		}
		lines = append(lines, t.Dim.Render(l))
	}
	return theme.Box(t, "Step: the files do not say", lines, min(c.w, inner+4), min(c.h, len(lines)+2), true, theme.Scroll{})
}
