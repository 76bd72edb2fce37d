package ui

import (
	"fmt"
	"runtime/metrics"
	"strings"
	"testing"

	"runwatch/model"
	"runwatch/ui/app"
	"runwatch/ui/text"
)

// allocated is the bytes the program has allocated so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// rowsOf is the runs on screen, in order: each row's name and host.
func rowsOf(m Model) string {
	var b strings.Builder
	for _, l := range strings.Split(text.Stripped(m.list.View()), "\n") {
		if f := strings.Fields(l); len(f) > 4 {
			fmt.Fprintln(&b, f[1], f[2], f[4])
		}
	}
	return b.String()
}

// A batch from a host whose logs flood changes its runs' logs, not their places: it re-sorts nothing, and
// the list stays what a re-sort gives. A batch that moves a run (it completes) re-sorts, and the run moves
// (issue 35: each flood batch re-sorted the fleet's 8,000 runs). A re-sort shows only in what it costs,
// so the test counts bytes allocated: not parallel, so no other test's allocations count.
func TestFloodBatchDoesNotResort(t *testing.T) {
	const perHost = 4000
	var all []model.Run
	for _, host := range []string{"h1", "h2"} {
		for i := range perHost {
			r := model.Run{ID: fmt.Sprintf("run-%04d", i), Kind: model.KindResumable, Status: model.StatusRunning,
				StatePath: fmt.Sprintf("/r/%04d/state.env", i), Dir: fmt.Sprintf("/r/%04d", i), UpdatedAt: testNow,
				Log:    &model.LogRef{Path: fmt.Sprintf("/r/%04d/run.log", i), SizeBytes: 100},
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
	before := rowsOf(m)
	// h2's first 40 runs' logs grow, batch after batch.
	flood := func(size int64) []model.Run {
		var out []model.Run
		for _, r := range all[perHost : perHost+40] {
			log := *r.Log
			log.SizeBytes = size
			r.Log = &log
			r.UpdatedAt = testNow.Add(1)
			out = append(out, r)
		}
		return out
	}
	from := allocated()
	const batches = 10
	for i := range batches {
		m = send(t, m, app.BatchMsg{Changed: model.RunPointers(flood(200 + 100*int64(i))), Hosts: hosts, At: testNow})
	}
	perBatch := (allocated() - from) / batches
	from = allocated()
	m.list.Resort()
	resort := allocated() - from
	if perBatch > resort/2 {
		t.Errorf("a flood batch allocates %d bytes, one re-sort of the %d runs %d: the batches re-sort", perBatch, len(all), resort)
	}
	if rowsOf(m) != before {
		t.Errorf("the list changed with batches that move no run, or a re-sort changes it:\n%s\nwas\n%s", rowsOf(m), before)
	}
	// A run of h2 completes: its group changes, the batch re-sorts and it moves to the bottom.
	done := flood(1300)[3]
	done.Status = model.StatusCompleted
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{done}), Hosts: hosts, At: testNow})
	if m = send(t, m, press("G")); m.app.Selected != done.Key() {
		t.Errorf("a run that completed is not at the bottom: G selects %s", m.app.Selected)
	}
}
