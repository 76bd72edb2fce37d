package ui

import (
	"strings"
	"testing"

	"runwatch/model"
)

// A remote batch and a local one each carry only their own source's health, and both add and remove runs:
// a run gone from a host leaves the list, and a remote batch leaves the local watcher's health as it was.
func TestBatchHealthIsPerSource(t *testing.T) {
	m := newTestModel(t, 120, 30, sampleRuns(), Options{})
	remote := model.Run{ID: "far-run", Kind: model.KindResumable, Status: model.StatusRunning, StatePath: "/far/state.env", Dir: "/far",
		Remote: &model.RemoteRef{Host: "gpu2", Root: "ssh://gpu2/far"}}
	hosts := []model.HostHealth{{Host: "gpu2", State: model.HostLive, Since: testNow}}
	m = send(t, m, BatchMsg{Changed: []model.Run{remote}, Hosts: hosts, At: testNow})
	if _, ok := m.app.runs[remote.Key()]; !ok || m.app.health.Mode != "inotify" || len(m.app.hosts) != 1 {
		t.Fatalf("after the remote batch: run there %v, local health %+v, hosts %+v", ok, m.app.health, m.app.hosts)
	}
	if !strings.Contains(plain(m), "far-run") {
		t.Fatalf("the remote run is not listed:\n%s", plain(m))
	}
	m = send(t, m, BatchMsg{Removed: []string{remote.Key()}, Hosts: hosts, At: testNow})
	if _, ok := m.app.runs[remote.Key()]; ok || strings.Contains(plain(m), "far-run") {
		t.Fatalf("a run removed on its host is still listed:\n%s", plain(m))
	}
	m = send(t, m, BatchMsg{Health: Health{Mode: "poll"}, At: testNow})
	if m.app.health.Mode != "poll" || len(m.app.hosts) != 1 {
		t.Fatalf("after the local batch: local health %+v, hosts %+v", m.app.health, m.app.hosts)
	}
}
