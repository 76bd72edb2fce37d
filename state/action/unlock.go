package action

import (
	"fmt"
	"path/filepath"
	"strings"

	"runwatch/model"
	"runwatch/termsafe"
)

// planUnlock clears stale locks. Without which: every stale lock of the run, as the convention's own cleanup
// does. With which (a path, file name or holder): that lock, which may also be unknown (typed confirmation).
// A live lock is never cleared.
func planUnlock(p *Plan, run model.Run, which string) error {
	var chosen []model.Lock
	var names []string
	for _, l := range run.Locks {
		names = append(names, fmt.Sprintf("%s (%s)", lockHolder(l), l.Verdict))
		if which == "" {
			if l.Verdict == model.VerdictStale {
				chosen = append(chosen, l)
			}
			continue
		}
		base := filepath.Base(l.Path)
		if l.Path == which || base == which || base == which+".lock" || l.Holder == which {
			chosen = append(chosen, l)
		}
	}
	switch {
	case len(run.Locks) == 0:
		return refusef("%s holds no lock files", run.ID)
	case which != "" && len(chosen) == 0:
		return refusef("%s has no lock %q (locks: %s)", run.ID, which, strings.Join(names, ", "))
	case which != "" && len(chosen) > 1:
		return refusef("%q names %d locks of %s; give the lock's path", which, len(chosen), run.ID)
	case len(chosen) == 0:
		return refusef("%s has no stale lock (locks: %s); an unknown lock is cleared only by naming it", run.ID, strings.Join(names, ", "))
	}
	var what []string
	for _, l := range chosen {
		switch l.Verdict {
		case model.VerdictLive:
			return refusef("refusing to clear a live lock: %s holds %s (%s)", lockHolder(l), l.Path, strings.Join(l.Reasons, "; "))
		case model.VerdictUnknown:
			word := l.Holder
			if word == "" {
				word = run.ID
			}
			p.Confirm = Confirm{Kind: ConfirmTyped, Word: termsafe.Plain(word, 80)}
		case model.VerdictStale:
		default:
			return refusef("lock %s has no verdict; reload the run", l.Path)
		}
		real, data, snap, err := p.readForEdit(l.Path)
		if err != nil {
			return err
		}
		if !sameAsJudged(string(data), l.Raw) {
			return refusef("lock %s changed since it was judged %s; reload the run", l.Path, l.Verdict)
		}
		p.Files = append(p.Files, FileChange{Path: real, Snap: snap, Old: data, Remove: true})
		what = append(what, fmt.Sprintf("%s lock %s (%s: %s)", l.Verdict, filepath.Base(l.Path), lockHolder(l), strings.Join(l.Reasons, "; ")))
	}
	p.Summary = "clear " + strings.Join(what, "; ")
	if run.Kind == model.KindResumable {
		l := chosen[0]
		return p.setLog(logPathOf(run), "stale_lock_cleared", "payload="+termsafe.Plain(l.Raw, 4096), kv("lock", relTo(run.Dir, l.Path)),
			kv("verdict", string(l.Verdict)), kv("why", termsafe.Plain(strings.Join(l.Reasons, "; "), 300)))
	}
	return nil
}

// sameAsJudged compares the lock bytes read now with the (possibly capped) bytes the reader judged.
func sameAsJudged(now, judged string) bool {
	if now == judged {
		return true
	}
	const capped = 1024 // readers cap Raw at a few KiB; a long lock is compared on its head
	return len(judged) > capped && len(now) > capped && now[:capped] == judged[:capped]
}

func relTo(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}
