//go:build !linux

package watch

import "github.com/fsnotify/fsnotify"

// fsNotifier is fsnotify as a notifier; its watches are known by their paths, so its descriptor is 0.
type fsNotifier struct{ w *fsnotify.Watcher }

func newNotifier() (notifier, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	return fsNotifier{w}, nil
}

func (n fsNotifier) add(dir string) (int32, error)    { return 0, n.w.Add(dir) }
func (n fsNotifier) remove(dir string, _ int32) error { return n.w.Remove(dir) }
func (n fsNotifier) rekey(int32, string)              {} // fsnotify keeps its own copy of the path
func (n fsNotifier) events() <-chan fsnotify.Event    { return n.w.Events }
func (n fsNotifier) errors() <-chan error             { return n.w.Errors }
func (n fsNotifier) identifies() bool                 { return false }
func (n fsNotifier) Close() error                     { return n.w.Close() }
