// Helpers every dashboard test uses: sample runs, a sized model, sending keys and messages, reading frames.

package ui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/overlay"
	"runwatch/ui/pager"
	"runwatch/ui/timeline"
)

// testNow pins the clock so "updated 5m ago" is the same in every run of the goldens.
var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *time.Time {
	t := testNow.Add(-d)
	return &t
}

// sampleRuns are model values covering every status, both kinds, locks of each verdict, gates, flags and
// problems; they exercise the panes before (and independently of) the readers.
func sampleRuns() []model.Run {
	jg := model.Run{
		ID: "add-login-form-mlop4860", Kind: model.KindJonggrang, Title: "Add login form with validation",
		Dir: "/p/.jonggrang/.output/features/add-login-form-mlop4860", StatePath: "/p/.jonggrang/.output/features/add-login-form-mlop4860/MANIFEST.yaml",
		RawStatus: "running", CurrentStage: "10", UpdatedAt: *at(5 * time.Minute),
		Stages: []model.Stage{
			{Key: "1", Name: "setup", Status: model.StageCompleted, StartedAt: at(3 * time.Hour), CompletedAt: at(170 * time.Minute)},
			model.Stage{Key: "6", Name: "brainstorming", Status: model.StageSkipped}.WithRare(model.StageRare{SkipReason: "pipeline_mode=fast"}),
			{Key: "10", Name: "implementation", Status: model.StageRunning, StartedAt: at(40 * time.Minute)},
			{Key: "11", Name: "review", Status: model.StagePending},
		},
		Flags: []model.Flag{{Group: "validation", Name: "review_passed", Value: false}, {Group: "validation", Name: "tests_passed", Value: true}},
		Locks: []model.Lock{{Path: "/p/.jonggrang/locks/reviewer-old.lock", Holder: "reviewer-old", PID: 4242, AcquiredAt: at(2 * time.Hour),
			Verdict: model.VerdictStale, Reasons: []string{"pid 4242 is not running on this host"}}},
		Gates: []model.Gate{{Name: "feedback loop", Status: "dirty", Blocked: true, Detail: "iteration 3, stuck 2"}},
		Jonggrang: &model.JonggrangDetail{
			PhaseOutputs: []model.PhaseOutput{{File: "10-developer-login.json", Phase: "10", Role: "developer", Status: "complete",
				Timestamp: at(20 * time.Minute), Summary: []string{"files: src/login.tsx"}}},
			ProgressTail: []string{"learned: use zod for validation"},
		},
	}
	jg.Progress = model.Progress{Done: 2, Total: 4}
	jg.Status = model.StatusStalled

	rs := model.Run{
		ID: "irm-backfill-20261103T120000Z", Kind: model.KindResumable, Title: "irm-backfill",
		Dir: "/r/irm-backfill-20261103T120000Z", StatePath: "/r/irm-backfill-20261103T120000Z/state.env",
		CurrentStage: "S2", UpdatedAt: *at(90 * time.Second), Status: model.StatusPaused,
		Stages: []model.Stage{
			{Key: "S1", Status: model.StageCompleted, StartedAt: at(time.Hour), CompletedAt: at(50 * time.Minute)},
			{Key: "S2", Status: model.StagePending, Checklist: []model.ChecklistItem{{Key: "CB_S2_VERIFY_GREEN", Done: true}, {Key: "CB_S2_NO_\x1b[31mEVIL", Done: false}}},
			{Key: "S3", Status: model.StagePending},
		},
		Flags:     []model.Flag{{Group: "finalization", Name: "REPORT_APPENDED", Value: false}},
		Problems:  []model.Problem{{Severity: model.SeverityWarning, Code: "lock-stale", Message: "lock is stale"}},
		Resumable: &model.ResumableDetail{ResumeHint: "rerun S2 verification"},
	}
	rs.Progress = model.Progress{Done: 1, Total: 3}

	done := model.Run{ID: "old-done", Kind: model.KindResumable, StatePath: "/r/old-done/state.env", Dir: "/r/old-done",
		Status: model.StatusCompleted, UpdatedAt: *at(50 * time.Hour), Progress: model.Progress{Done: 2, Total: 2},
		Stages: []model.Stage{{Key: "S1", Status: model.StageCompleted}, {Key: "S2", Status: model.StageCompleted}}}
	failed := model.Run{ID: "pay-flow", Kind: model.KindJonggrang, StatePath: "/q/MANIFEST.yaml", Dir: "/q",
		Status: model.StatusFailed, CurrentStage: "3", UpdatedAt: *at(time.Hour), Progress: model.Progress{Done: 2, Total: 5},
		Stages: []model.Stage{model.Stage{Key: "3", Name: "plan", Status: model.StageFailed}.WithRare(model.StageRare{Error: "agent crashed: \x1b]52;c;ZXZpbA==\x07boom"})},
		Locks:  []model.Lock{{Path: "/q/locks/a.lock", Holder: "lead", Host: "otherbox", Verdict: model.VerdictUnknown, Reasons: []string{"held on otherbox; liveness cannot be checked here"}}}}
	return []model.Run{rs, done, jg, failed}
}

// newTestModel builds a dashboard at w×h holding runs, pinned to testNow and the mono theme.
func newTestModel(t testing.TB, w, h int, runList []model.Run, opts app.Options) Model {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return testNow }
	}
	if opts.Theme == "" {
		opts.Theme = "mono"
	}
	m := New(opts)
	m = send(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	m = send(t, m, app.SnapshotMsg{Runs: runList, Health: app.Health{Mode: "inotify"}, At: opts.Now().Add(-3 * time.Second)})
	return m
}

// send delivers msg and then runs the commands it returns (synchronously, as the program would), feeding
// their messages back, so a test sees the state after the whole chain settles.
func send(t testing.TB, m Model, msg tea.Msg) Model {
	t.Helper()
	queue := []tea.Msg{msg}
	for steps := 0; len(queue) > 0; steps++ {
		if steps > 100 {
			t.Fatalf("command chain did not settle")
		}
		next := queue[0]
		queue = queue[1:]
		nm, cmd := m.Update(next)
		m = nm.(Model)
		queue = append(queue, runCmd(cmd)...)
	}
	return m
}

func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	switch msg := msg.(type) {
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, runCmd(c)...)
		}
		return out
	case nil, app.TickMsg:
		return nil
	}
	// Terminal-side effects (clipboard, raw sequences, quit) are results, not inputs to the model.
	if isModelMsg(msg) {
		return []tea.Msg{msg}
	}
	return nil
}

func isModelMsg(msg tea.Msg) bool {
	switch msg.(type) {
	case timeline.LogOpenedMsg, timeline.LogIndexedMsg, timeline.SearchDoneMsg, timeline.CountDoneMsg, timeline.FilterDoneMsg, app.PlanMsg, app.AppliedMsg, app.PagerMsg, app.CopiedMsg, app.SnapshotMsg, app.BatchMsg, app.ErrorMsg,
		app.RemoteTailMsg, app.AgentMsg:
		return true
	}
	return false
}

func press(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "ctrl+u":
		return tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(s)[0]
	if r >= 'A' && r <= 'Z' {
		return tea.KeyPressMsg{Code: r + ('a' - 'A'), ShiftedCode: r, Mod: tea.ModShift, Text: s}
	}
	return tea.KeyPressMsg{Code: r, Text: s}
}

func plain(m Model) string { return ansi.Strip(m.View().Content) }

// confirmDialog is the open confirmation, or nil.
func (m Model) confirmDialog() *overlay.Confirm {
	d, _ := m.top().(*overlay.Confirm)
	return d
}

// pagerOverlay is what the open pager (brief, message) holds, or nil when none is open.
func (m Model) pagerOverlay() *pager.State {
	p, _ := m.top().(*pager.Pager)
	if p == nil {
		return nil
	}
	st := p.State()
	return &st
}

// pagerRows draws every row of the open pager, not only those on screen.
func (m Model) pagerRows() []string {
	p, _ := m.top().(*pager.Pager)
	return p.DrawAll()
}

func (m Model) helpOpen() bool {
	_, ok := m.top().(*overlay.Help)
	return ok
}

// envOf is an environment holding one variable, for app.Options.Getenv.
func envOf(name, value string) func(string) string {
	return func(k string) string {
		if k == name {
			return value
		}
		return ""
	}
}
