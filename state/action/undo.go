package action

import (
	"fmt"
	"os"
	"strings"

	"runwatch/model"
	"runwatch/plural"
	"runwatch/state/atomicfile"
	"runwatch/state/journal"
	"runwatch/termsafe"
)

// planUndo restores the bytes the run's last (not yet undone) action replaced, only where each file still
// holds exactly what that action wrote.
func planUndo(p *Plan, run model.Run) error {
	path := p.opts.JournalPath
	if path == "" {
		var err error
		if path, err = journal.DefaultPath(os.Getenv); err != nil {
			return err
		}
	}
	e, torn, err := journal.FindUndoable(path, run.StatePath)
	if err != nil {
		return err
	}
	if torn > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the journal %s has %s a crash cut short among the newest it read; "+
			"%s skipped (an action %s began is journaled whole once recovered)", path, plural.Count(torn, "line", "lines"),
			plural.Word(torn, "it is", "they are"), plural.Word(torn, "it", "they")))
	}
	if e == nil {
		return refusef("the journal %s has no action on %s to undo", path, run.ID)
	}
	p.undoes = e.ID
	if len(e.Files) == 0 {
		return refusef("the last action on %s (%s at %s) changed no file", run.ID, e.Action, e.When.Format("2006-01-02 15:04:05Z07:00"))
	}
	var tookOver []string // audit fields of runwatch's own dead lock replaced by the undo of an unlock
	for _, f := range e.Files {
		real, err := atomicfile.Resolve(p.Root, f.Path)
		if err != nil {
			return err
		}
		if err := p.root.CheckFile(real, !p.opts.Force, false); err != nil {
			return err
		}
		data, snap, err := p.root.Read(real)
		if err != nil {
			return err
		}
		switch {
		case f.NewExists && !snap.Exists:
			return refusef("cannot undo %s: %s was removed since", e.Action, f.Path)
		case f.NewExists && snap.SHA256 != f.NewSHA256:
			return refusef("cannot undo %s: %s has moved on since (it no longer holds what %s wrote at %s)",
				e.Action, f.Path, e.Action, e.When.Format("15:04:05"))
		case !f.NewExists && snap.Exists:
			// The lock an unlock removed has come back as runwatch's own lock of a runwatch that was killed:
			// taken over, as every other action takes it over, by putting the removed lock back in its place.
			why, dead := "", false
			if e.Action == string(ActUnlock) && f.OldExists {
				why, dead = p.ownDeadLock(data)
			}
			if !dead {
				return refusef("cannot undo %s: %s exists again", e.Action, f.Path)
			}
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s is %s: the undo takes it over, putting back the lock the unlock removed", f.Path, why))
			tookOver = append(tookOver, "stale_lock_replaced=1", kv("payload", termsafe.Plain(string(data), 4096)), kv("why", why))
		}
		fc := FileChange{Path: real, Snap: snap, Old: data}
		if f.OldExists {
			fc.New = f.Old
			if atomicfile.Hash(f.Old) != f.OldSHA256 {
				return fmt.Errorf("journal entry %s is damaged: the old bytes of %s do not match their hash", e.ID, f.Path)
			}
			if !snap.Exists {
				fc.Snap.Mode = f.Mode
			}
		} else {
			fc.Remove = true
		}
		p.Files = append(p.Files, fc)
	}
	p.Summary = fmt.Sprintf("undo %s of %s (%s)", e.Action, e.When.Format("2006-01-02 15:04:05Z07:00"), e.Summary)
	if run.Kind == model.KindResumable {
		// Undoing an unlock restores LOCK_FILE itself, so it cannot be taken as a lock first.
		if e.Action != string(ActUnlock) {
			if _, err := p.readResumable(run, false); err != nil {
				return err
			}
			if err := p.refuseIfLocked(run); err != nil {
				return err
			}
		} else {
			p.LogPath = logPathOf(run)
		}
		return p.setLog(p.LogPath, "runwatch_undo", append([]string{kv("action", e.Action), kv("undoes", e.ID),
			kv("files", strings.Join(baseNames(e.Files), ","))}, tookOver...)...)
	}
	return refuseIfRunning(run)
}

func baseNames(files []journal.File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path[strings.LastIndexByte(f.Path, '/')+1:]
	}
	return out
}
