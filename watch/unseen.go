package watch

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// unseenChanges tells, for a run read before its folders were watched, whether anything in those folders
// changed after that read began: what the watches would have reported had they been there. The folders are
// the ones the tree watches for the run (trackRun), and they and their entries are judged by the time of
// their last status change (ctime), which every write, replace, rename, removal and chmod sets and no
// writer can set back (rsync -t and cp -p keep an old mtime). A run with nothing newer than its read is not
// read a second time.
//
// The tree must not change while this is used (the loop goroutine is waiting for the reads), so several
// goroutines may ask at once.
type unseenChanges struct {
	tree  *tree
	slack time.Duration // file times come from the kernel's coarse clock, up to a tick behind time.Now
	mu    sync.Mutex
	dirs  map[string]listedDir // folders are listed once: a project's locks folder serves all its features
}

type listedDir struct {
	newest  int64 // UnixNano of the newest ctime of the folder and its entries; -1: cannot be judged
	watched []string
}

func newUnseenChanges(t *tree, slack time.Duration) *unseenChanges {
	return &unseenChanges{tree: t, slack: slack, dirs: map[string]listedDir{}}
}

// since reports whether tr may have changed after readAt: something in its watched folders is newer than
// readAt less the slack, or a folder cannot be judged by stat.
func (u *unseenChanges) since(tr *trackedRun, readAt time.Time) bool {
	after := readAt.Add(-u.slack).UnixNano()
	roots := []string{tr.location().Dir}
	if tr.lockPath != "" {
		roots = append(roots, filepath.Dir(tr.lockPath))
	}
	roots = append(roots, tr.projectDirs()...)
	if tr.worktreeDir != "" {
		roots = append(roots, tr.worktreeDir)
	}
	for _, r := range roots {
		if u.subtreeSince(r, after) {
			return true
		}
	}
	return false
}

func (u *unseenChanges) subtreeSince(dir string, after int64) bool {
	node, ok := u.tree.dirs[dir]
	// Not watched: a folder that did not exist when the walk passed (it is wanted, and its creation is
	// evented from its parent) or one inotify refused. Polled: perhaps a network filesystem, whose clock is
	// not this one. Either way no stat here can stand for it.
	if !ok || node.polled() {
		return true
	}
	d := u.list(dir)
	if d.newest < 0 || d.newest >= after {
		return true
	}
	for _, s := range d.watched {
		if u.subtreeSince(s, after) {
			return true
		}
	}
	return false
}

func (u *unseenChanges) list(dir string) listedDir {
	u.mu.Lock()
	d, ok := u.dirs[dir]
	u.mu.Unlock()
	if ok {
		return d
	}
	d = listDir(u.tree, dir)
	u.mu.Lock()
	u.dirs[dir] = d
	u.mu.Unlock()
	return d
}

func listDir(t *tree, dir string) listedDir {
	unknown := listedDir{newest: -1}
	st, err := os.Stat(dir)
	if err != nil {
		return unknown
	}
	d := listedDir{newest: ctime(st)}
	node, ok := t.dirs[dir]
	if d.newest < 0 || !ok || !node.listed {
		return unknown
	}
	// The names are the tree's, taken by the walk after the folder was watched: one made or removed since
	// changed the folder's own ctime, looked at above, so listing the folder again would tell nothing more
	// (at 10,000 runs it was a third of what the dashboard did after its screen listed every run, issue 35).
	for _, e := range node.entries {
		path := filepath.Join(dir, e.name)
		fi, err := os.Lstat(path)
		if err != nil {
			return unknown // gone since the listing: a change
		}
		c := ctime(fi)
		if fi.Mode()&fs.ModeSymlink != 0 {
			// Readers follow links, so the target's changes count too.
			if target, err := os.Stat(path); err == nil {
				c = max(c, ctime(target))
			}
		}
		if c < 0 {
			return unknown
		}
		d.newest = max(d.newest, c)
		if _, watched := t.dirs[path]; watched {
			d.watched = append(d.watched, path)
		}
	}
	return d
}
