package watch

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"
)

// currentHealth says how well changes are seen right now (mode, watch count, every reason a folder is polled
// or a change may have been missed); last is when data last changed.
func (w *Watcher) currentHealth(last time.Time) Health {
	h := Health{LastChange: last, Watches: w.tree.watches, Err: w.errNote, Loading: int(w.loading.Load())}
	if w.lastErr != "" {
		if time.Since(w.lastErrAt) < errShownFor {
			h.Err = strings.Trim(h.Err+"; "+w.lastErr, "; ")
		} else {
			w.lastErr = ""
		}
	}
	polled := w.tree.polled
	switch {
	case polled == 0:
		h.Mode = "inotify"
	case polled == len(w.tree.dirs) || w.fsw == nil:
		h.Mode = "polling " + w.pollIvl.String()
	default:
		h.Mode = "mixed"
	}
	var notes []string
	if w.tree.limitErr != nil {
		what := "watch limit (fs.inotify.max_user_watches)"
		if errors.Is(w.tree.limitErr, syscall.EMFILE) {
			what = "instance limit (fs.inotify.max_user_instances)"
		}
		notes = append(notes, fmt.Sprintf("inotify %s reached: polling %d folders every %s", what, polled, w.pollIvl))
	}
	for _, name := range sortedKeys(w.tree.remoteSeen) {
		notes = append(notes, fmt.Sprintf("%s filesystem: polling every %s (inotify cannot see remote changes)", name, w.pollIvl))
	}
	if w.tree.otherErr != nil {
		notes = append(notes, w.tree.otherErr.Error())
	}
	if h.Err != "" {
		notes = append(notes, h.Err)
	}
	h.Err = strings.Join(notes, "; ")
	return h
}
