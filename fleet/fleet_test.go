package fleet

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state/resumable/resumabletest"
)

// Open checks every root before a run is read, with one error for each mistake, whatever command asks.
func TestOpenChecksEveryRootFirst(t *testing.T) {
	root := t.TempDir()
	missing := filepath.Join(root, "missing")
	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{[]string{root, missing}, missing + ": no such file or directory"},
		{[]string{"ssh://"}, `"ssh://" names no host`},
		{[]string{"ssh://host"}, `names no path on host`},
	} {
		if _, err := Open(Options{Paths: tc.paths}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q): %v, want %q", tc.paths, err, tc.want)
		}
	}
	r, err := Open(Options{Paths: []string{root, "ssh://alpha/runs", "beta:/x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Local, []string{root}) || len(r.Remote) != 2 || r.Remote[0].Host != "alpha" || r.reach == nil {
		t.Errorf("split: local %q, remote %+v", r.Local, r.Remote)
	}
	// Without paths, the config's roots.
	r, err = Open(Options{Roots: []string{root}})
	if err != nil || !slices.Equal(r.Scanned, []string{root}) || r.reach != nil {
		t.Errorf("the config's roots: %v %+v", err, r)
	}
}

// A host's runwatch is given the flags typed, and --poll only by a watch.
func TestGivenArgs(t *testing.T) {
	g := Given{StaleAfter: 7 * time.Minute, QuietAfter: time.Hour, MaxDepth: 2, Poll: 3 * time.Second}
	if got, want := g.args(false), []string{"--stale-after", "7m0s", "--quiet-after", "1h0m0s", "--max-depth", "2"}; !slices.Equal(got, want) {
		t.Errorf("read: %q, want %q", got, want)
	}
	if got := g.args(true); !slices.Equal(got[len(got)-2:], []string{"--poll", "3s"}) {
		t.Errorf("watch: %q", got)
	}
	if got := (Given{}).args(true); len(got) != 0 {
		t.Errorf("nothing given: %q", got)
	}
}

// Read and Watch see the same local runs, with the same depth limit.
func TestReadAndWatchSeeTheSameRuns(t *testing.T) {
	root := t.TempDir()
	resumabletest.MinimalRun(t, root, "irm-shallow-20261201T080000Z")
	resumabletest.MinimalRun(t, filepath.Join(root, "a", "b", "c"), "irm-deep-20261201T080000Z")
	r, err := Open(Options{Paths: []string{root}, MaxDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	if _, err := r.Read(context.Background(), r.Env(), func(run model.Run) { read = append(read, run.ID) }, nil); err != nil {
		t.Fatal(err)
	}
	w, err := r.Watch(false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var watched []string
	for _, run := range w.Snapshot() {
		watched = append(watched, run.ID)
	}
	if !slices.Equal(read, []string{"irm-shallow-20261201T080000Z"}) || !slices.Equal(watched, read) {
		t.Errorf("read %q, watched %q", read, watched)
	}
	if w.Remote != nil || w.RemoteUpdates() != nil {
		t.Error("a remote watcher without remote roots")
	}
}

func TestUnreached(t *testing.T) {
	now := time.Now()
	never := model.HostHealth{Host: "a", State: model.HostReconnecting, Error: "a: refused"}
	lost := model.HostHealth{Host: "b", State: model.HostReconnecting, Error: "b: refused", LastSeen: &now}
	if _, ok := Unreached([]model.HostHealth{lost, {Host: "c", State: model.HostConnecting}}); ok {
		t.Error("a host reached once, or still connecting, is not unreached")
	}
	if h, ok := Unreached([]model.HostHealth{lost, never}); !ok || h.Host != "a" {
		t.Errorf("Unreached: %+v %v", h, ok)
	}
}

// The dashboard's watch (the progressive one) reads resumable runs without their artifacts' listing, which
// none of its panes shows; events' and notify's watch keeps it, as their lines carry it.
func TestOnlyTheDashboardsWatchLeavesOutTheListing(t *testing.T) {
	root := t.TempDir()
	dir := resumabletest.MinimalRun(t, root, "irm-listed-20261201T080000Z")
	if err := os.MkdirAll(filepath.Join(dir, "artifacts", "s1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "artifacts", "s1", "verify.log"), []byte("ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(Options{Paths: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.Watch(false)
	if err != nil {
		t.Fatal(err)
	}
	snap := w.Snapshot()
	w.Close()
	if len(snap) != 1 || !slices.Equal(snap[0].Resumable.Artifacts, []string{"s1/verify.log"}) {
		t.Fatalf("events' watch: %d runs, listing %v", len(snap), snap[0].Resumable.Artifacts)
	}
	w, err = r.Watch(true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case u := <-w.Local.Updates():
			if len(u.Changed) == 0 {
				continue
			}
			if got := u.Changed[0].Resumable.Artifacts; got != nil {
				t.Fatalf("the dashboard's watch holds the listing %v", got)
			}
			return
		case <-deadline:
			t.Fatal("the dashboard's watch read no run in 10 s")
		}
	}
}
