//go:build linux

package watch

import (
	"os"
	"path/filepath"
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
	if p := in.paths[wd]; unsafe.StringData(p) != unsafe.StringData(dir) {
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
		left := len(in.paths)
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
	if len(in.paths) != len(v.w.tree.dirs) || len(in.paths) < 2 {
		t.Fatalf("%d descriptors for %d folders", len(in.paths), len(v.w.tree.dirs))
	}
	for p, node := range v.w.tree.dirs {
		if got := in.paths[node.wd]; unsafe.StringData(got) != unsafe.StringData(p) {
			t.Fatalf("%s: descriptor %d names %q, not the tree's string", p, node.wd, got)
		}
	}
}
