package ui

import (
	"testing"

	"runwatch/model"
	"runwatch/ui/app"
)

// The screen keeps the very run a batch brings (the watcher's, never changed in place), not a copy of its
// own: with 10,000 runs that copy was 640 bytes a run (issue 35). A run that comes without its attention
// (another runwatch's) is judged on a copy, so the batch's own value is left as it was.
func TestBatchRunsAreKeptNotCopied(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 120, 30, sampleRuns(), app.Options{})
	judged := model.Run{ID: "shared", Kind: model.KindResumable, Status: model.StatusRunning, StatePath: "/s/state.env", Dir: "/s"}
	judged.Attention = model.Judge(&judged)
	bare := model.Run{ID: "bare", Kind: model.KindResumable, Status: model.StatusRunning, StatePath: "/b/state.env", Dir: "/b"}
	batch := []*model.Run{&judged, &bare}
	m = send(t, m, app.BatchMsg{Changed: batch, At: testNow})
	if m.app.Runs[judged.Key()] != &judged {
		t.Error("the screen keeps a copy of the batch's run")
	}
	if got := m.app.Runs[bare.Key()]; got == nil || got == &bare || got.Attention.Code == "" || bare.Attention.Code != "" {
		t.Error("a run without its attention is not judged on a copy")
	}
}
