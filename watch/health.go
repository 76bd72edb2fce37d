package watch

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// eventsName names what reports changes: fsnotify's backend on this system.
var eventsName = map[bool]string{true: "inotify", false: "kqueue"}[runtime.GOOS == "linux"]

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
		h.Mode = eventsName
	case polled == len(w.tree.dirs) || w.fsw == nil:
		h.Mode = "polling " + w.pollIvl.String()
	default:
		h.Mode = "mixed"
	}
	var notes []string
	if b := w.tree.fds; b.over > 0 {
		notes = append(notes, fmt.Sprintf("%d folders did not fit the %d descriptors watching may hold (half the open-file limit, %d): polling them every %s",
			b.over, b.limit, b.soft, w.pollIvl))
	}
	if w.tree.limitErr != nil {
		what := "inotify watch limit (fs.inotify.max_user_watches)"
		switch {
		case w.tree.fds.budgeted() && errors.Is(w.tree.limitErr, syscall.EMFILE):
			what = "open-file limit (RLIMIT_NOFILE)"
		case errors.Is(w.tree.limitErr, syscall.EMFILE):
			what = "inotify instance limit (fs.inotify.max_user_instances)"
		}
		notes = append(notes, fmt.Sprintf("%s reached: polling %d folders every %s", what, polled, w.pollIvl))
	}
	for _, name := range sortedKeys(w.tree.remoteSeen) {
		notes = append(notes, fmt.Sprintf("%s filesystem: polling every %s (%s cannot see remote changes)", name, w.pollIvl, eventsName))
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
