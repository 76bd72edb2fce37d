package watch

import (
	"errors"

	"github.com/fsnotify/fsnotify"
)

// notifier watches folders one at a time and reports their changes as fsnotify's events: inotify of our own
// on Linux (inotify_linux.go), fsnotify elsewhere (notifier_other.go).
type notifier interface {
	// add watches dir; the descriptor it returns is what remove takes back. It fails with errSameFolder when
	// dir is a folder it watches under another path already (when it identifies folders).
	add(dir string) (wd int32, err error)
	remove(dir string, wd int32) error
	// rekey makes the watch of descriptor wd report its events under same, a string equal to its path.
	rekey(wd int32, same string)
	events() <-chan fsnotify.Event
	errors() <-chan error
	Close() error
	// identifies says whether add tells a folder reached twice (errSameFolder): then the tree need not keep
	// the identities of the folders it watches.
	identifies() bool
}

// errSameFolder: the folder is watched under another path already (a link to it, a bind mount).
var errSameFolder = errors.New("watched under another path")
