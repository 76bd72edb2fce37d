package ui

import (
	"testing"

	"runwatch/model"
	"runwatch/state/action"
	"runwatch/ui/app"
	"runwatch/ui/keys"
)

// The toggling keys ask for a verb of their own each way (issue 33.2): P on a running jonggrang run asks
// to pause it and on a paused one to resume it, the request naming the key it came from.
func TestPauseKeyAsksForPauseOrResume(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status model.RunStatus
		want   action.Verb
	}{{model.StatusRunning, action.ActPause}, {model.StatusPaused, action.ActResume}} {
		var run model.Run
		for _, r := range sampleRuns() {
			if r.Kind == model.KindJonggrang {
				run = r
			}
		}
		run.Status = c.status
		actor := &recordingActor{}
		m := newTestModel(t, 140, 40, []model.Run{run}, app.Options{Actor: actor})
		send(t, m, press("P"))
		if got := actor.last; got.Act != keys.ActPause || got.Verb != c.want || got.Run.ID != run.ID {
			t.Errorf("P on a %s run: %+v, want %s", c.status, got, c.want)
		}
	}
}
