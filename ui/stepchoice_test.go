// Tests of the stage choice when a step cannot know the next stage.

package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/app"
	"runwatch/ui/text"
)

// The mining tool's run (docs/FORMATS.md C.1 fixture): its files do not say what follows verify. The dashboard
// marks the stages whose place is open, shows the checkpoints and the reopen warning, and S offers the open
// stages as a choice (step --to); the choice goes through the usual confirmation with the diff.
func TestStepChoiceWhereTheFilesDoNotSayTheNextStage(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	resumabletest.CopyDir(t, filepath.Join("..", "testdata", "resumable-c1"), root)
	runDir := filepath.Join(root, "reports", "iso26262-mining-20260301T101500Z")
	locs, err := state.Discover([]string{runDir}, 1)
	if err != nil || len(locs) != 1 {
		t.Fatalf("discover: %v %v", locs, err)
	}
	run := state.Load(locs[0], state.NewEnv(0))
	actor := NewActor(action.Options{User: "tester", JournalPath: filepath.Join(t.TempDir(), "journal.jsonl")},
		func() model.Env { return state.NewEnv(0) })
	m := newTestModel(t, 160, 50, []model.Run{run}, app.Options{Actor: actor})
	view := plain(m)
	// Detail's text as one line: a phrase may be wrapped anywhere, depending on the pane's width.
	var dt []string
	for _, l := range strings.Split(text.Stripped(m.detail.View()), "\n") {
		dt = append(dt, strings.Trim(l, "│╭╮╰╯─┃┏┓┗┛━ "))
	}
	flat := strings.Join(strings.Fields(strings.Join(dt, " ")), " ")
	for _, want := range []string{"anchor", "↕ place unknown", "the tool will reopen this stage"} {
		if !strings.Contains(flat, want) {
			t.Errorf("detail lacks %q:\n%s", want, view)
		}
	}

	m = send(t, m, press("S"))
	view = plain(m)
	if !strings.Contains(view, "Which stage comes after verify?") || !strings.Contains(view, "1  verify → finalize") {
		t.Fatalf("no choice of the next stage:\n%s", view)
	}
	m = send(t, m, press("1"))
	c := m.confirmDialog()
	if c == nil {
		t.Fatalf("choosing did not lead to the confirmation; footer %q", m.app.Msgs.ErrText())
	}
	preview := strings.Join(c.Preview, "\n")
	if !strings.Contains(preview, `+CURRENT_STAGE="finalize"`) || !strings.Contains(preview, "warning: verify is marked done but") {
		t.Errorf("preview:\n%s", preview)
	}
	m = send(t, m, press("y"))
	if m.app.Msgs.ErrText() != "" {
		t.Fatalf("apply: %s", m.app.Msgs.ErrText())
	}
	data, _ := os.ReadFile(filepath.Join(runDir, "state.env"))
	if !strings.Contains(string(data), `CURRENT_STAGE="finalize"`) {
		t.Errorf("state.env:\n%s", data)
	}
}
