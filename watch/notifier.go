package watch

import "github.com/fsnotify/fsnotify"

// notifier watches folders one at a time and reports their changes as fsnotify's events: inotify of our own
// on Linux (inotify_linux.go), fsnotify elsewhere (notifier_other.go).
type notifier interface {
	// add watches dir; the descriptor it returns is what remove takes back.
	add(dir string) (wd int32, err error)
	remove(dir string, wd int32) error
	// rekey makes the watch of descriptor wd report its events under same, a string equal to its path.
	rekey(wd int32, same string)
	events() <-chan fsnotify.Event
	errors() <-chan error
	Close() error
}
