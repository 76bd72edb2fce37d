//go:build linux

package watch

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/fsnotify/fsnotify"
)

// The reader reports what fsnotify's does for a watched folder: its entries' changes, its own move and
// deletion, and then forgets the folder.
func TestInotifyReportsAsFsnotifyDoes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "watched")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n, err := newNotifier()
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	in := n.(*inotify)
	wd, err := n.add(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := in.paths.get(wd); unsafe.StringData(p) != unsafe.StringData(dir) {
		t.Fatal("the path is kept as a copy, not as the string the tree holds")
	}
	next := func(want fsnotify.Event) {
		t.Helper()
		select {
		case got := <-n.events():
			if got != want {
				t.Fatalf("event %v, want %v", got, want)
			}
		case err := <-n.errors():
			t.Fatalf("error %v, want event %v", err, want)
		case <-time.After(waitLimit):
			t.Fatalf("no event, want %v", want)
		}
	}
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	next(fsnotify.Event{Name: f, Op: fsnotify.Create})
	next(fsnotify.Event{Name: f, Op: fsnotify.Write})
	if err := os.Chmod(f, 0o600); err != nil {
		t.Fatal(err)
	}
	next(fsnotify.Event{Name: f, Op: fsnotify.Chmod})
	g := filepath.Join(dir, "g")
	if err := os.Rename(f, g); err != nil {
		t.Fatal(err)
	}
	next(fsnotify.Event{Name: f, Op: fsnotify.Rename})
	next(fsnotify.Event{Name: g, Op: fsnotify.Create})
	if err := os.Remove(g); err != nil {
		t.Fatal(err)
	}
	next(fsnotify.Event{Name: g, Op: fsnotify.Remove})

	moved := filepath.Join(root, "moved")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	next(fsnotify.Event{Name: dir, Op: fsnotify.Rename})
	if err := os.WriteFile(filepath.Join(moved, "after"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wd, err = n.add(moved)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(moved, "after")); err != nil {
		t.Fatal(err)
	}
	// Nothing of the folder moved away under its old name: the next event is under its new one.
	next(fsnotify.Event{Name: filepath.Join(moved, "after"), Op: fsnotify.Remove})
	if err := os.Remove(moved); err != nil {
		t.Fatal(err)
	}
	next(fsnotify.Event{Name: moved, Op: fsnotify.Remove})
	deadline := time.Now().Add(waitLimit)
	for {
		in.mu.Lock()
		left := in.paths.len()
		in.mu.Unlock()
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d descriptors kept after their folders went", left)
		}
		time.Sleep(time.Millisecond)
	}
	if err := n.remove(moved, wd); err == nil {
		t.Fatal("removing a folder no longer watched succeeded")
	}
}

// The watcher reads inotify itself on Linux, one path a watched folder, the tree's own (issue 35).
func TestWatcherKeepsOnePathAWatchedFolder(t *testing.T) {
	root, _, _ := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	resume := make(chan struct{})
	v.w.pause <- resume
	defer close(resume)
	in, ok := v.w.fsw.(*inotify)
	if !ok {
		t.Fatalf("the watcher's notifier is a %T", v.w.fsw)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.paths.len() != len(v.w.tree.dirs) || in.paths.len() < 2 {
		t.Fatalf("%d descriptors for %d folders", in.paths.len(), len(v.w.tree.dirs))
	}
	for p, node := range v.w.tree.dirs {
		if got, _ := in.paths.get(node.wd); unsafe.StringData(got) != unsafe.StringData(p) {
			t.Fatalf("%s: descriptor %d names %q, not the tree's string", p, node.wd, got)
		}
	}
}

// The watches' paths are a list sorted by descriptor, 24 bytes a watch (issue 35), whatever order the
// descriptors come and go in; the removed are dropped once they are half.
func TestWdPathsKeepEveryWatchInOrder(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(wdPath{}); n != 24 {
		t.Errorf("a watch's path is %d bytes, want 24", n)
	}
	var x wdPaths
	want := map[int32]string{}
	for _, wd := range []int32{3, 1, 2, 7, 5, 4, 6, 8} {
		x.set(wd, fmt.Sprint("/d", wd))
		want[wd] = fmt.Sprint("/d", wd)
	}
	for _, wd := range []int32{2, 7, 9, 2, 5, 1, 3} {
		x.del(wd)
		delete(want, wd)
	}
	x.set(5, "/again")
	want[5] = "/again"
	for wd := range int32(10) {
		got, ok := x.get(wd)
		if w, had := want[wd]; got != w || ok != had {
			t.Errorf("descriptor %d: %q %v, want %q %v", wd, got, ok, w, had)
		}
	}
	if x.len() != len(want) || len(x.w) >= 8 {
		t.Errorf("%d watches in a list of %d, want %d, the removed dropped", x.len(), len(x.w), len(want))
	}
	if !slices.IsSortedFunc(x.w, func(a, b wdPath) int { return cmp.Compare(a.wd, b.wd) }) {
		t.Errorf("not sorted: %v", x.w)
	}
}

// Under inotify a folder reached twice is watched once with no identity kept: the kernel knows it by its
// inode (issue 35).
func TestInotifyTreeWatchesALinkedFolderOnceWithoutIdentities(t *testing.T) {
	t.Parallel()
	for _, link := range []string{"a-link", "z-link"} {
		n, err := newNotifier()
		if err != nil {
			t.Fatal(err)
		}
		defer n.Close()
		tr, _ := watchLinkedFolder(t, link, n)
		if len(tr.ids) != 0 {
			t.Errorf("%s: %d devices' identities kept for folders inotify identifies", link, len(tr.ids))
		}
		if tr.watches != len(tr.dirs) {
			t.Errorf("%s: %d watches counted for %d folders", link, tr.watches, len(tr.dirs))
		}
	}
}
