package watch

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"runwatch/model"
)

type atomicBool struct{ v atomic.Bool }

func (b *atomicBool) get() bool  { return b.v.Load() }
func (b *atomicBool) set(x bool) { b.v.Store(x) }

func TestScratchNames(t *testing.T) {
	for name, want := range map[string]bool{
		".state.env.tmp-1234": true, "state.env.tmp": true, "4913": true, "state.env~": true,
		".state.env.swp": true, ".#state.env": true, "#state.env#": true, ".active.lock.claimed-9f2c": true,
		"state.env___jb_tmp___": true, "state.env___jb_old___": true, ".state.env.kate-swp": true,
		"state.env": false, "run.log": false, ".jonggrang": false, "MANIFEST.yaml": false, "4914": false,
	} {
		if scratchName(name) != want {
			t.Errorf("scratchName(%q) = %v, want %v", name, !want, want)
		}
	}
}

func TestMergeKeepsOrderAndRemovals(t *testing.T) {
	a := model.Run{StatePath: "/r/a/state.env", CurrentStage: "S1"}
	b := model.Run{StatePath: "/r/b/state.env"}
	u := Update{Changed: []*model.Run{&a, &b}, Appended: []LogAppend{{Path: "/r/a/run.log", Entries: []model.LogEntry{{Message: "1", HasTime: true}}}}}
	a2 := a
	a2.CurrentStage = "S2"
	u.Merge(Update{
		Changed: []*model.Run{&a2}, Removed: []string{b.StatePath},
		Appended: []LogAppend{{Path: "/r/a/run.log", Entries: []model.LogEntry{{Message: "2", HasTime: true}}}},
		At:       time.Unix(2, 0),
	})
	u.Merge(Update{Appended: []LogAppend{{Path: "/r/a/run.log", Truncated: true, Entries: []model.LogEntry{{Message: "3", HasTime: true}}}}})
	if len(u.Changed) != 1 || u.Changed[0].CurrentStage != "S2" {
		t.Fatalf("changed = %+v, want only a at S2", u.Changed)
	}
	if len(u.Removed) != 1 || u.Removed[0] != b.StatePath {
		t.Fatalf("removed = %v", u.Removed)
	}
	if len(u.Appended) != 2 || len(u.Appended[0].Entries) != 2 || !u.Appended[1].Truncated {
		t.Fatalf("appended = %+v, want entries 1,2 then a truncation with 3", u.Appended)
	}
}

func TestTopmost(t *testing.T) {
	got := topmost(map[string]bool{"/a/b": true, "/a": true, "/ab": true, "/c/d": true})
	want := []string{"/a", "/ab", "/c/d"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestMergeBoundsEntriesForASlowReader(t *testing.T) {
	entries := func(from, n int) []model.LogEntry {
		out := make([]model.LogEntry, n)
		for i := range out {
			out[i] = model.LogEntry{HasTime: true, Offset: int64(from + i)}
		}
		return out
	}
	u := Update{Appended: []LogAppend{{Path: "/r/run.log", Entries: entries(0, maxPendingEntries)}}}
	u.Merge(Update{Appended: []LogAppend{{Path: "/r/run.log", Entries: entries(maxPendingEntries, 10)}}})
	a := u.Appended[0]
	if len(a.Entries) != maxPendingEntries || a.Skipped != 10 || a.Entries[0].Offset != 10 ||
		a.Entries[len(a.Entries)-1].Offset != maxPendingEntries+9 {
		t.Fatalf("kept %d entries from offset %d, skipped %d; want the newest %d and 10 skipped",
			len(a.Entries), a.Entries[0].Offset, a.Skipped, maxPendingEntries)
	}
}

// The names of the entries of run folders are one string for every run (issue 35); the folder of runs'
// own entries, the run folders' names, are not shared.
func TestTreeSharesTheNamesInRunFolders(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	a := makeResumableRun(t, filepath.Join(root, "a-20260215T014733Z"), "S1")
	b := makeResumableRun(t, filepath.Join(root, "b-20260216T014733Z"), "S1")
	tr := newTree(nil, true, false)
	tr.add(root, 3, nil)
	name := func(sp string) *byte {
		t.Helper()
		e := tr.dirs[filepath.Dir(sp)].entries
		i, ok := e.find("state.env")
		if !ok {
			t.Fatalf("%s is not in its folder's snapshot", sp)
		}
		return unsafe.StringData(e[i].name)
	}
	if name(a) != name(b) {
		t.Error("each run folder holds a copy of its own of the name state.env")
	}
	if tr.dirs[root].inRun {
		t.Errorf("the folder of runs is taken for a run's: %d names shared", len(tr.names))
	}
}

// A snapshot's entry keeps its stat's kind in its size's sign (issue 35): 40 bytes, and every kind and stat
// read back as it was set.
func TestDirEntryKeepsEveryStat(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(dirEntry{}); n != 40 {
		t.Errorf("a snapshot's entry is %d bytes, want 40", n)
	}
	for _, st := range []fileStat{
		{}, {size: 1 << 40, mtime: -5, ino: 7}, {mtime: 3, ino: 1<<64 - 1},
		{dir: true, ino: 9}, {dir: true}, {baseline: true}, {dir: true, baseline: true},
	} {
		var d dirEntries
		d.set("x", st, strings.Clone)
		if got, _ := d.get("x"); got != st {
			t.Errorf("set %+v, got %+v back", st, got)
		}
	}
}

// A folder of runs keeps each watched folder's name as the tail of the path the folder is watched under,
// not as a string of its own (issue 35).
func TestTreeNamesWatchedFoldersByTheirPaths(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	a := makeResumableRun(t, filepath.Join(root, "a-20260215T014733Z"), "S1")
	tr := newTree(nil, true, false)
	tr.add(root, 3, nil)
	run := filepath.Dir(a)
	e := tr.dirs[root].entries
	i, ok := e.find(filepath.Base(run))
	if !ok {
		t.Fatalf("%s is not in its folder's snapshot", run)
	}
	for p := range tr.dirs {
		if p == run && unsafe.StringData(p[len(p)-len(e[i].name):]) != unsafe.StringData(e[i].name) {
			t.Error("the run folder's name in its folder's snapshot is a string of its own")
		}
	}
}

// A watched folder is 48 bytes (issue 35): what only kqueue counts, its watch's descriptors, is not in it.
func TestDirNodeIsSmall(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(dirNode{}); n != 48 {
		t.Errorf("a watched folder is %d bytes, want 48", n)
	}
}

// A folder reached twice, through a link before or after its own name, is watched once: inotify reports
// its events under one name only.
func TestTreeWatchesALinkedFolderOnce(t *testing.T) {
	t.Parallel()
	for _, link := range []string{"a-link", "z-link"} {
		tr, root := watchLinkedFolder(t, link, nil)
		tr.remove(root)
		if len(tr.ids) != 0 {
			t.Errorf("%s: every folder forgotten, %d devices' identities kept", link, len(tr.ids))
		}
	}
}

// The watched folders' identities are kept by device, then inode: the same inode on two devices is two.
func TestIDSetTellsDevicesApart(t *testing.T) {
	t.Parallel()
	s := idSet{}
	s.add(fileID{dev: 1, ino: 7})
	s.add(fileID{dev: 2, ino: 7})
	s.del(fileID{dev: 1, ino: 7})
	if s.has(fileID{dev: 1, ino: 7}) || !s.has(fileID{dev: 2, ino: 7}) || s.has(fileID{dev: 2, ino: 8}) {
		t.Errorf("after adding 7 on devices 1 and 2 and removing it from 1: %v", s)
	}
	if s.del(fileID{dev: 2, ino: 7}); len(s) != 0 {
		t.Errorf("every identity removed, %d devices kept", len(s))
	}
}

// A run folder, its artifacts/ and artifacts/checkpoints/ are known by one path string between them, each
// the start of the next (issue 35).
func TestTreeSharesAPathDownItsFolders(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	run := filepath.Dir(makeResumableRun(t, filepath.Join(root, "a-20260215T014733Z"), "S1"))
	checkpoints := filepath.Join(run, "artifacts", "checkpoints")
	if err := os.MkdirAll(checkpoints, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := newTree(nil, true, false)
	tr.add(root, 3, nil)
	keys := map[string]string{}
	for p := range tr.dirs {
		keys[p] = p
	}
	for _, p := range []string{run, filepath.Dir(checkpoints)} {
		k, ok := keys[p]
		if !ok {
			t.Fatalf("%s is not watched", p)
		}
		if unsafe.StringData(k) != unsafe.StringData(keys[checkpoints]) {
			t.Errorf("%s is a path of its own, not the start of %s", p, checkpoints)
		}
	}
}

// watchLinkedFolder watches a root that holds a run folder's parent m and a link named link to it, polled
// (n nil) or through n, and fails unless m is watched under exactly one of its two paths.
func watchLinkedFolder(t *testing.T, link string, n notifier) (*tree, string) {
	t.Helper()
	root := t.TempDir()
	makeResumableRun(t, filepath.Join(root, "m", "r-20260215T014733Z"), "S1")
	if err := os.Symlink(filepath.Join(root, "m"), filepath.Join(root, link)); err != nil {
		t.Fatal(err)
	}
	tr := newTree(n, n == nil, false)
	tr.add(root, 3, nil)
	_, viaName := tr.dirs[filepath.Join(root, "m")]
	_, viaLink := tr.dirs[filepath.Join(root, link)]
	if viaName == viaLink {
		t.Errorf("%s: the folder is watched under its name %v, under the link %v; want one of them", link, viaName, viaLink)
	}
	return tr, root
}
