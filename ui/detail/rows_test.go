// Tests of Detail's rows, on the pane itself: what they say and that moving the cursor never changes them.

package detail

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/text"
	"runwatch/ui/theme"
)

// testNow pins the clock, so ages read the same in every run.
var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// newTestPane is Detail at w×h over one run, selected, in the mono theme at testNow.
func newTestPane(run model.Run, w, h int) *Pane {
	a := &app.App{Opts: app.Options{Now: func() time.Time { return testNow }}, Keys: keys.DefaultKeyMap(false),
		Theme: theme.NewTheme("mono", true), Runs: map[string]*model.Run{run.Key(): &run}, Selected: run.Key()}
	p := New(a)
	p.SetSize(w, h)
	return p
}

// rowsText is every row of run at width w, unstyled, one a line.
func rowsText(p *Pane, run model.Run, w int) string {
	var out []string
	for _, r := range p.Rows(run, w) {
		out = append(out, text.Stripped(r.text))
	}
	return strings.Join(out, "\n")
}

// The mining run whose plan is on this machine (issue 27): Detail lists the stages in the plan's order and
// says where that order came from; without the plan it says why the plan is no evidence.
func TestDetailSaysTheOrderCameFromThePlan(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	resumabletest.CopyDir(t, filepath.Join("..", "..", "testdata", "resumable-c1"), root)
	runDir := filepath.Join(root, "reports", "iso26262-mining-20260306T090000Z")
	detailOf := func() string {
		locs, err := state.Discover([]string{runDir}, 1)
		if err != nil || len(locs) != 1 {
			t.Fatalf("discover: %v %v", locs, err)
		}
		run := state.Load(locs[0], state.NewEnv(0))
		// Every row of the Detail, not only those the pane has room for, as one line: a phrase may be
		// wrapped anywhere.
		return strings.Join(strings.Fields(rowsText(newTestPane(run, 160, 50), run, 70)), " ")
	}
	if flat := detailOf(); !strings.Contains(flat, "is not on this machine") || !strings.Contains(flat, "↕ place unknown") {
		t.Errorf("without the plan:\n%s", flat)
	}
	sp := filepath.Join(runDir, "state.env")
	b, err := os.ReadFile(sp)
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(root, "repo")
	if err := os.WriteFile(sp, []byte(strings.ReplaceAll(string(b), "/home/u/src/iso-26262-rust-mapping", repo)), 0o644); err != nil {
		t.Fatal(err)
	}
	flat := detailOf()
	if !strings.Contains(flat, "order from the plan 2026-02-15-hierarchical-pdf-mining-corpus-plan.md, lines 27, 35–41 and 57") ||
		strings.Contains(flat, "place unknown") {
		t.Errorf("with the plan:\n%s", flat)
	}
	if i, j := strings.Index(flat, "anchor"), strings.Index(flat, "publish"); i < 0 || j < i {
		t.Errorf("anchor should come before publish:\n%s", flat)
	}
}

func TestDetailShowsAgentsAndTasks(t *testing.T) {
	t.Parallel()
	started := testNow.Add(-10 * time.Minute)
	run := model.Run{ID: "add-login-form-mlop4860", Kind: model.KindJonggrang, Dir: "/p/f", StatePath: "/p/f/MANIFEST.yaml",
		Status: model.StatusRunning, CurrentStage: "10", Stages: []model.Stage{{Key: "10", Name: "implementation", Status: model.StageRunning}},
		Jonggrang: &model.JonggrangDetail{
			Agents: []model.Agent{{ID: "developer-auth-001", Role: "developer", Status: "running", StartedAt: &started}},
			Tasks:  []model.Task{{ID: "task-001", Title: "Login form", Status: "completed"}},
		}}
	all := rowsText(newTestPane(run, 140, 40), run, 80)
	for _, want := range []string{"▶ developer-auth-001 developer running 10m", "✓ task-001 Login form completed"} {
		if !strings.Contains(all, want) {
			t.Errorf("detail lacks %q:\n%s", want, all)
		}
	}
}

// A phase's output_files are in Detail under the phase, as the brief's "listed below" promises and status
// --json has them: what restarting the phase would overwrite. A hostile path is shown inert.
func TestDetailListsAPhasesOutputFiles(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 30, 11, 5, 0, 0, time.UTC)
	size := int64(3 << 10)
	stage := model.Stage{Key: "10", Name: "design-verification", Status: model.StageRunning}
	stage.SetOutputFiles([]model.OutputFile{
		{Path: "docs/design-review.md", Type: "markdown", Size: &size, CreatedAt: &created},
		{Path: "evil\x1b]52;c;aGk=\x07\x1b[2J.md"},
	})
	run := model.Run{ID: "add-login-form-mlop4860", Kind: model.KindJonggrang, Dir: "/p/f", StatePath: "/p/f/MANIFEST.yaml",
		Status: model.StatusRunning, CurrentStage: "10", Stages: []model.Stage{stage}, Jonggrang: &model.JonggrangDetail{}}
	p := newTestPane(run, 140, 40)
	all := rowsText(p, run, 80)
	if want := "↳ docs/design-review.md markdown · 3 KiB · 11-30 11:05"; !strings.Contains(all, want) {
		t.Errorf("detail lacks %q:\n%s", want, all)
	}
	for _, r := range p.Rows(run, 80) {
		if strings.ContainsAny(r.text, "\x07") || strings.Contains(r.text, "\x1b]") || strings.Contains(r.text, "\x1b[2J") {
			t.Errorf("a row carries the path's control sequence: %q", r.text)
		}
	}
	if !strings.Contains(all, "↳ evil") {
		t.Errorf("detail lacks the second output file:\n%s", all)
	}
}

// Moving the cursor in Detail never changes which rows exist: nothing below it reflows.
func TestDetailCursorDoesNotReflow(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	resumabletest.CopyDir(t, filepath.Join("..", "..", "testdata", "resumable-c1"), root)
	locs, err := state.Discover([]string{root}, 0)
	if err != nil || len(locs) == 0 {
		t.Fatalf("discover: %v %v", locs, err)
	}
	run := state.Load(locs[0], state.NewEnv(0))
	p := newTestPane(run, 84, 30)
	before := rowsText(p, run, 80)
	moved := false
	for _, k := range []string{"k", "k", "j", "j", "j", "G", "g"} {
		sel := p.Selection()
		p.Update(press(k))
		moved = moved || p.Selection() != sel
		if got := rowsText(p, run, 80); got != before {
			t.Fatalf("after %s the rows changed:\n%s\nwas\n%s", k, got, before)
		}
	}
	if !moved {
		t.Fatal("the keys never moved the cursor: the check above proves nothing")
	}
}

// press is a one-letter key as a terminal reports it: a capital arrives as its letter with shift.
func press(s string) tea.KeyPressMsg {
	r := []rune(s)[0]
	if r >= 'A' && r <= 'Z' {
		return tea.KeyPressMsg{Code: r + ('a' - 'A'), ShiftedCode: r, Mod: tea.ModShift, Text: s}
	}
	return tea.KeyPressMsg{Code: r, Text: s}
}

// A stalled run's current stage reads stalled on its line and on its Time bar, as the header and the Runs row
// say (issue 36, point 10): its line said `▶ 4 skill-discovery running`.
func TestDetailStalledStageReadsStalled(t *testing.T) {
	t.Parallel()
	start, mid := testNow.Add(-time.Hour), testNow.Add(-50*time.Minute)
	past := model.Run{ID: "past", Kind: model.KindJonggrang, RawStatus: "completed", StatePath: "/p/MANIFEST.yaml",
		Jonggrang: &model.JonggrangDetail{WorkType: "BUGFIX"},
		Stages: []model.Stage{{Key: "3", Name: "discovery", Status: model.StageCompleted, StartedAt: &start, CompletedAt: &mid},
			{Key: "4", Name: "skills", Status: model.StageCompleted, StartedAt: &mid, CompletedAt: &testNow}}}
	run := model.Run{ID: "now", Kind: model.KindJonggrang, RawStatus: "running", CurrentStage: "4", StatePath: "/r/MANIFEST.yaml",
		Jonggrang: &model.JonggrangDetail{WorkType: "BUGFIX"}, ActiveAt: &mid,
		Stages: []model.Stage{{Key: "3", Name: "discovery", Status: model.StageCompleted, StartedAt: &start, CompletedAt: &mid},
			{Key: "4", Name: "skills", Status: model.StageRunning, StartedAt: &mid}}}
	model.FinalizeRun(&past)
	model.FinalizeRun(&run)
	h := model.NewHistory()
	h.Observe(&past)
	h.Observe(&run)
	model.JudgeTime(&run, testNow, model.LivenessRules{}, h)
	if run.Status != model.StatusStalled {
		t.Fatalf("the run is %s, want stalled (orphaned)", run.Status)
	}
	p := newTestPane(run, 100, 60)
	rows := rowsText(p, run, 100)
	var line string
	for _, l := range strings.Split(rows, "\n") {
		if strings.Contains(l, "4 skills ") && strings.Contains(l, "◀ current") {
			line = l
			break
		}
	}
	if !strings.Contains(line, "stalled") || strings.Contains(line, "running") || strings.HasPrefix(line, "▶") {
		t.Errorf("the stalled run's current stage line: %q\n%s", line, rows)
	}
	if !strings.Contains(rows, "50m stalled") || strings.Contains(rows, "~") {
		t.Errorf("the Time bar of the stalled stage is not drawn stalled, or an ETA is shown:\n%s", rows)
	}
}
