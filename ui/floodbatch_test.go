package ui

import (
	"fmt"
	"slices"
	"testing"

	"runwatch/model"
	"runwatch/ui/app"
)

// A batch from a host whose logs flood changes its runs' logs, not their places: it re-sorts nothing, and
// the order stays what a re-sort gives. A batch that moves a run (it completes) re-sorts, and the run
// moves (issue 35: each flood batch re-sorted the fleet's 8,000 runs).
func TestFloodBatchDoesNotResort(t *testing.T) {
	t.Parallel()
	var all []model.Run
	for _, host := range []string{"h1", "h2"} {
		for i := range 40 {
			r := model.Run{ID: fmt.Sprintf("run-%02d", i), Kind: model.KindResumable, Status: model.StatusRunning,
				StatePath: fmt.Sprintf("/r/%02d/state.env", i), Dir: fmt.Sprintf("/r/%02d", i), UpdatedAt: testNow,
				Log:    &model.LogRef{Path: fmt.Sprintf("/r/%02d/run.log", i), SizeBytes: 100},
				Remote: &model.RemoteRef{Host: host, Root: "ssh://" + host + "/r"}}
			if i%7 == 0 {
				r.Status = model.StatusFailed
			}
			all = append(all, r)
		}
	}
	m := newTestModel(t, 160, 40, nil, app.Options{})
	hosts := []model.HostHealth{{Host: "h1", State: model.HostLive, Since: testNow}, {Host: "h2", State: model.HostLive, Since: testNow}}
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers(all), Hosts: hosts, At: testNow})
	before, sorts := slices.Clone(m.list.Order()), m.list.Sorts()
	// h2's logs grow, batch after batch.
	flood := func(size int64) []model.Run {
		var out []model.Run
		for _, r := range all[40:] {
			log := *r.Log
			log.SizeBytes = size
			r.Log = &log
			r.UpdatedAt = testNow.Add(1)
			out = append(out, r)
		}
		return out
	}
	for size := int64(200); size < 1200; size += 100 {
		m = send(t, m, app.BatchMsg{Changed: model.RunPointers(flood(size)), Hosts: hosts, At: testNow})
	}
	if got := m.list.Sorts(); got != sorts {
		t.Errorf("10 flood batches re-sorted %d times, want 0", got-sorts)
	}
	if !slices.Equal(m.list.Order(), before) {
		t.Errorf("the order changed with batches that move no run")
	}
	m.list.Resort()
	if !slices.Equal(m.list.Order(), before) {
		t.Errorf("a re-sort gives another order than the one kept")
	}
	// A run of h2 completes: its group changes, the batch re-sorts and it moves.
	done := flood(1300)[3]
	done.Status = model.StatusCompleted
	sorts = m.list.Sorts()
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{done}), Hosts: hosts, At: testNow})
	if m.list.Sorts() != sorts+1 || slices.Index(m.list.Order(), done.Key()) != len(all)-1 {
		t.Errorf("a run that completed: %d re-sorts, at %d of %d", m.list.Sorts()-sorts, slices.Index(m.list.Order(), done.Key()), len(all))
	}
}
