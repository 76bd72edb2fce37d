package watch

import (
	"fmt"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"runwatch/model"
)

// A compaction state that blocks heavy phases stops being trusted 5 minutes after it was measured, and the
// gate then blocks nothing: no file changes when that happens, so the watcher reads the run again at that
// instant (model.JudgementComesAt), and the run's gate says stale instead of blocked. synctest's clock: the
// minutes pass at once; the watcher polls, as inotify's reads would keep the bubble's clock still.
func TestCompactionStateTurnsStaleWithNoFileChanging(t *testing.T) {
	synctest.Test(t, testCompactionStateTurnsStale)
}

func testCompactionStateTurnsStale(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".jonggrang", ".output", "features", "f1")
	writeFile(t, filepath.Join(dir, "MANIFEST.yaml"), manifest("f1", 2))
	sp := filepath.Join(dir, "MANIFEST.yaml")
	compaction := func(r model.Run) *model.CompactionGate {
		if r.Jonggrang == nil {
			return nil
		}
		return r.Jonggrang.Compaction
	}
	v := newView(t, Options{Paths: []string{root}, Poll: time.Second, reconcile: time.Hour, liveness: 50 * time.Millisecond})
	v.until("the feature read", func() bool { _, ok := v.run(sp); return ok })
	// The state is written as measured a little under 5 minutes ago; a machine so loaded that reading it
	// took longer than that margin gets a wider one, so the test always sees the state trusted first.
	for margin := 2 * time.Second; ; margin *= 2 {
		if margin > 2*time.Minute {
			t.Fatal("the watcher never read the compaction state while it was still trusted")
		}
		measured := time.Now().Add(-5*time.Minute + margin).UTC().Truncate(time.Millisecond)
		writeFile(t, filepath.Join(root, ".jonggrang", ".ephemeral", "compaction-state.json"), fmt.Sprintf(
			`{"status": "block", "ratio": 0.91, "message": "BLOCK", "updated_at": %q}`+"\n", measured.Format(time.RFC3339Nano)))
		v.until("the compaction state read", func() bool {
			r, _ := v.run(sp)
			c := compaction(r)
			return c != nil && c.UpdatedAt != nil && c.UpdatedAt.Equal(measured)
		})
		if r, _ := v.run(sp); !compaction(r).Stale {
			break
		}
	}
	v.untilExplained("the state judged stale by the clock", func() bool {
		r, _ := v.run(sp)
		return compaction(r) != nil && compaction(r).Stale
	}, func() string { r, _ := v.run(sp); return fmt.Sprintf("%+v", compaction(r)) })
}
