// Tests of remote batches: health per source, a remote timeline merging history with the stream.

package ui

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"runwatch/heaptest"
	"runwatch/model"
	"runwatch/ui/app"
)

// A remote batch and a local one each carry only their own source's health, and both add and remove runs:
// a run gone from a host leaves the list, and a remote batch leaves the local watcher's health as it was.
func TestBatchHealthIsPerSource(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 120, 30, sampleRuns(), app.Options{})
	remote := model.Run{ID: "far-run", Kind: model.KindResumable, Status: model.StatusRunning, StatePath: "/far/state.env", Dir: "/far",
		Remote: &model.RemoteRef{Host: "gpu2", Root: "ssh://gpu2/far"}}
	hosts := []model.HostHealth{{Host: "gpu2", State: model.HostLive, Since: testNow}}
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{remote}), Hosts: hosts, At: testNow})
	if _, ok := m.app.Runs[remote.Key()]; !ok || m.app.Health.Mode != "inotify" || len(m.app.Hosts) != 1 {
		t.Fatalf("after the remote batch: run there %v, local health %+v, hosts %+v", ok, m.app.Health, m.app.Hosts)
	}
	if !strings.Contains(plain(m), "far-run") {
		t.Fatalf("the remote run is not listed:\n%s", plain(m))
	}
	m = send(t, m, app.BatchMsg{Removed: []string{remote.Key()}, Hosts: hosts, At: testNow})
	if _, ok := m.app.Runs[remote.Key()]; ok || strings.Contains(plain(m), "far-run") {
		t.Fatalf("a run removed on its host is still listed:\n%s", plain(m))
	}
	m = send(t, m, app.BatchMsg{Health: app.Health{Mode: "poll"}, At: testNow})
	if m.app.Health.Mode != "poll" || len(m.app.Hosts) != 1 {
		t.Fatalf("after the local batch: local health %+v, hosts %+v", m.app.Health, m.app.Hosts)
	}
}

// A remote run's timeline has the log's history, fetched when it opens, merged by byte offset with what the
// host streams: an entry both fetched and streamed, or streamed again grown, shows once, in file order.
func TestRemoteTimelineMergesHistoryWithTheStream(t *testing.T) {
	t.Parallel()
	stamp := func(s int) time.Time { return time.Date(2026, 12, 1, 8, 0, s, 0, time.UTC) }
	entry := func(off int64, s int, msg string, cont ...string) model.LogEntry {
		return model.LogEntry{Time: stamp(s), HasTime: true, Message: msg, Offset: off, Continuation: cont}
	}
	fetched := make(chan struct{}, 1)
	fetch := func(_ context.Context, run model.Run) ([]model.LogEntry, error) {
		fetched <- struct{}{}
		return []model.LogEntry{entry(0, 0, "history one"), entry(40, 1, "history two"), entry(80, 2, "both")}, nil
	}
	run := model.Run{ID: "far-run", Kind: model.KindResumable, Status: model.StatusRunning, StatePath: "/far/state.env", Dir: "/far",
		Log: &model.LogRef{Path: "/far/run.log"}, Remote: &model.RemoteRef{Host: "gpu2", Root: "ssh://gpu2/far"}}
	m := newTestModel(t, 160, 40, []model.Run{run}, app.Options{RemoteLog: fetch})
	hosts := []model.HostHealth{{Host: "gpu2", State: model.HostLive, Since: testNow}}
	key := "ssh://gpu2/far/run.log"
	// Streamed before the history arrives: an entry the tail also holds, and a newer one.
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{run}), Hosts: hosts, At: testNow,
		Appended: []app.LogAppend{{Path: key, Entries: []model.LogEntry{entry(80, 2, "both"), entry(120, 3, "streamed")}}}})
	select {
	case <-fetched:
	default:
		t.Fatal("opening the remote run's timeline fetched no history")
	}
	// Streamed again, grown by a continuation line written later.
	m = send(t, m, app.BatchMsg{Hosts: hosts, At: testNow,
		Appended: []app.LogAppend{{Path: key, Entries: []model.LogEntry{entry(120, 3, "streamed", "  more")}}}})
	got := m.app.RemoteLines(run)
	want := []string{"[2026-12-01T08:00:00Z] history one", "[2026-12-01T08:00:01Z] history two", "[2026-12-01T08:00:02Z] both",
		"[2026-12-01T08:00:03Z] streamed", "  more"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("remote timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if screen := plain(m); !strings.Contains(screen, "history one") || strings.Count(screen, "both") != 1 {
		t.Errorf("the timeline does not show the merged log once:\n%s", screen)
	}
	// Opened again with the host live all along: no second fetch.
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{run}), Hosts: hosts, At: testNow})
	select {
	case <-fetched:
		t.Error("the history was fetched again with nothing missed")
	default:
	}
}

// Issue 37.2: a host that adds a run, streams its log and removes it, over and over, made the dashboard keep
// every such log (8 MiB each) for good, without bound. A run gone takes its log with it, all the
// remote logs together are bounded, and the log of a run still held loses no line meanwhile.
func TestRemoteLogsGoWithTheirRunsAndAreBoundedInTotal(t *testing.T) {
	t.Parallel()
	hosts := []model.HostHealth{{Host: "gpu2", State: model.HostLive, Since: testNow}}
	remoteRun := func(name string) model.Run {
		dir := "/far/" + name
		return model.Run{ID: name, Kind: model.KindResumable, Status: model.StatusRunning, StatePath: dir + "/state.env", Dir: dir,
			Log: &model.LogRef{Path: dir + "/run.log"}, Remote: &model.RemoteRef{Host: "gpu2", Root: "ssh://gpu2/far"}}
	}
	logKey := func(r model.Run) string { return app.RemoteLogKey(r) }
	line := strings.Repeat("x", 1000)
	mib := func(from int64) []model.LogEntry { // about 1 MiB of entries
		es := make([]model.LogEntry, 1000)
		for i := range es {
			es[i] = model.LogEntry{Message: fmt.Sprintf("%d %s", i, line), Offset: from + int64(i)*1001} // its own bytes, as read from the wire
		}
		return es
	}
	keeper := remoteRun("a-keeper") // first in the list, so the run selected
	m := newTestModel(t, 120, 30, nil, app.Options{})
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{keeper}), Hosts: hosts, At: testNow})
	before := heaptest.Now()
	const cycles = 150
	for i := range cycles {
		r := remoteRun(fmt.Sprintf("churn-%d", i))
		m = send(t, m, app.BatchMsg{Changed: model.RunPointers([]model.Run{r}), Hosts: hosts, At: testNow, Appended: []app.LogAppend{
			{Path: logKey(r), Entries: mib(0)},
			{Path: logKey(keeper), Entries: []model.LogEntry{{Message: fmt.Sprintf("keeper line %d", i), Offset: int64(i) * 100}}}}})
		m = send(t, m, app.BatchMsg{Removed: []string{r.Key()}, Hosts: hosts, At: testNow})
	}
	after := heaptest.Now()
	if held := m.app.RemoteLogBytes(); held > 1<<20 {
		t.Errorf("after %d add/stream/remove cycles the remote logs hold %d bytes, with one run left", cycles, held)
	}
	if grew := int64(after.Live) - int64(before.Live); grew > 32<<20 {
		t.Errorf("after %d add/stream/remove cycles the live heap grew by %d MiB", cycles, grew>>20)
	}
	if got := m.app.RemoteLines(keeper); len(got) != cycles || got[0] != "keeper line 0" || got[cycles-1] != fmt.Sprintf("keeper line %d", cycles-1) {
		t.Errorf("the run still held lost lines: %d of %d kept", len(got), cycles)
	}

	// Many runs held at once, each streaming its most: all of them together stay within the total, and the
	// selected run's log is never the one dropped.
	var held []model.Run
	for i := range 12 {
		held = append(held, remoteRun(fmt.Sprintf("held-%d", i)))
	}
	m = send(t, m, app.BatchMsg{Changed: model.RunPointers(held), Hosts: hosts, At: testNow})
	if m.app.Selected != keeper.Key() {
		t.Fatalf("selected %q, want %q", m.app.Selected, keeper.Key())
	}
	for _, r := range held {
		for from := int64(0); from < 8<<20; from += 1 << 20 {
			m = send(t, m, app.BatchMsg{Hosts: hosts, At: testNow, Appended: []app.LogAppend{{Path: logKey(r), Entries: mib(from)}}})
		}
	}
	if got := m.app.RemoteLogBytes(); got > 64<<20 {
		t.Errorf("12 runs streaming 8 MiB each: the remote logs hold %d MiB together", got>>20)
	}
	if got := m.app.RemoteLines(keeper); len(got) != cycles {
		t.Errorf("the selected run's log was dropped: %d of %d lines kept", len(got), cycles)
	}
}

// TestHealthOnlyBatchCostsNothingPerRun: a batch that carries only the hosts' health (a host reconnecting,
// its retry counting down) leaves the list's order as it is: what it allocates does not grow with the
// runs held. Re-sorting every run for each was most of what a host staying down cost a dashboard of 8,000
// runs (issue 35's fleet).
func TestHealthOnlyBatchCostsNothingPerRun(t *testing.T) {
	retry := testNow.Add(30 * time.Second)
	hosts := []model.HostHealth{{Host: "gpu2", State: model.HostReconnecting, Since: testNow, RetryAt: &retry}}
	allocated := func(n int) uint64 {
		m := newTestModel(t, 160, 40, manyRuns(n), app.Options{})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 10 {
			nm, _ := m.Update(app.BatchMsg{Hosts: hosts, At: testNow})
			m = nm.(Model)
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / 10
	}
	few, many := allocated(20), allocated(2000)
	if many > few+16<<10 {
		t.Fatalf("a batch of only health allocates %d bytes over 20 runs and %d over 2,000", few, many)
	}
}
