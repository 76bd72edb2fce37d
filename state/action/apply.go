package action

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"runwatch/model"
	"runwatch/plural"
	"runwatch/state/atomicfile"
	"runwatch/state/jonggrang"
	"runwatch/state/journal"
	"runwatch/state/procinfo"
)

// JournalError means the action was applied but could not be recorded in the journal (so undo will not
// see it).
type JournalError struct{ Err error }

func (e *JournalError) Error() string {
	return "applied, but the journal could not be written (undo will not know this action): " + e.Err.Error()
}
func (e *JournalError) Unwrap() error { return e.Err }

// AuditError means the change was applied (and journaled) but its audit line could not be appended to the
// run's log.
type AuditError struct {
	LogPath, Line, ID string
	Err               error
}

func (e *AuditError) Error() string {
	return fmt.Sprintf("applied, but the audit line could not be appended to %s (%v); the change is in the journal as %s; the line was: %s",
		e.LogPath, e.Err, e.ID, strings.TrimSpace(e.Line))
}
func (e *AuditError) Unwrap() error { return e.Err }

// OverwroteError means the change was applied, but a writer that takes no lock had renamed its own version
// over a file between runwatch's last check and its rename, and runwatch's rename replaced it. Their bytes
// are the journal entry's old bytes, so undo puts them back.
type OverwroteError struct {
	ID, RunID string
	Files     []string
	Journaled bool
}

func (e *OverwroteError) Error() string {
	where := "they are kept in the journal entry " + e.ID + " (old bytes), and `runwatch undo " + e.RunID + "` puts them back while nothing else has changed the file"
	if !e.Journaled {
		where = "the journal could not be written, so they are lost"
	}
	return fmt.Sprintf("applied, but %s was written by another writer between runwatch's last check and its rename, and runwatch's version replaced theirs; %s",
		strings.Join(e.Files, ", "), where)
}

// Applied reports whether err, returned by Apply, still means the change was made (with a warning: audit
// line or journal missing, or a concurrent write overwritten). Every other error from Apply means nothing
// was changed.
func Applied(err error) bool {
	var j *JournalError
	var a *AuditError
	var o *OverwroteError
	return errors.As(err, &j) || errors.As(err, &a) || errors.As(err, &o)
}

func (p *Plan) journalPath() (string, error) {
	if p.opts.JournalPath != "" {
		return p.opts.JournalPath, nil
	}
	return journal.DefaultPath(os.Getenv) // a caller that passes no path means this process's environment
}

func (p *Plan) proc() model.ProcInspector {
	if p.opts.Env.Proc != nil {
		return p.opts.Env.Proc
	}
	return procinfo.System{}
}

// ownerAlive is the liveness of a local pid and, when known, its start time.
func (p *Plan) ownerAlive(pid int) (bool, time.Time) {
	pr := p.proc()
	if !pr.Alive(pid) {
		return false, time.Time{}
	}
	t, _ := pr.StartTime(pid)
	return true, t
}

// findPending lists, at plan time, the intents a crash left for this run (their owner is dead), so the
// preview can say they will be finished first.
func (p *Plan) findPending() {
	jp, err := p.journalPath()
	if err != nil {
		return
	}
	intents, _, err := journal.Pending(jp, p.RunPath)
	if err != nil {
		return
	}
	for _, in := range intents {
		if p.intentOwnerDead(in) {
			p.pending = append(p.pending, in)
		}
	}
}

func (p *Plan) intentOwnerDead(in journal.Intent) bool {
	if in.OwnerHost != atomicfile.HostTag() {
		return false
	}
	if in.PID == os.Getpid() {
		return false
	}
	alive, started := p.ownerAlive(in.PID)
	return !alive || !in.PIDStart.IsZero() && !started.IsZero() && !started.Equal(in.PIDStart)
}

var ownStart = func() time.Time {
	t, _ := procinfo.System{}.StartTime(os.Getpid())
	return t
}()

// Apply carries out a plan: finish what a crash left half done on this run, remove dead owners' leftovers,
// check every file (non-blocking, regular, one link for the log) before taking the lock, take the run lock,
// re-check the preconditions, write the intent, change the files, append the audit line, journal the entry,
// release the lock. An error means nothing was changed, unless Applied(err) says otherwise.
func Apply(p *Plan, ao ApplyOptions) error {
	if err := p.confirmed(ao); err != nil {
		return err
	}
	jp, err := p.journalPath()
	if err != nil {
		return fmt.Errorf("no journal, so nothing was written: %w", err)
	}
	// The journal's lock is taken first and held to the end: an action that could not journal its entry
	// must not have changed anything yet. Its wait is bounded, and a refusal names the holder.
	jl, err := p.opts.lockJournal(jp)
	if err != nil {
		return fmt.Errorf("%w; nothing was changed", err)
	}
	if p.root != nil {
		p.root.BeforeRename = p.opts.Seams.BeforeRename
	}
	p.journalLock = jl
	defer func() {
		p.journalLock = nil
		jl.Release()
	}()
	p.recoverPending(jp)
	p.setAsideOrphans(jp)
	p.removeLeftovers(p.touched()...)
	if err := p.checkFiles(); err != nil {
		return err
	}
	if p.LockPath != "" {
		release, err := p.takeRunLock()
		if err != nil {
			return err
		}
		defer release()
	}
	if p.opts.Seams.locked != nil {
		p.opts.Seams.locked(p)
	}
	for _, f := range p.Files {
		if err := p.root.Check(f.Snap); err != nil {
			return err
		}
		if err := recheckWhole(f); err != nil {
			return err
		}
	}
	entry, in := p.intent()
	// The intent is durable before the first file changes: a crash from here on is finished or reported
	// by the next action on this run.
	if err := journal.WriteIntent(jp, in); err != nil {
		return fmt.Errorf("the journal's intent could not be written, so nothing was changed: %w", err)
	}
	logged, overwrote, err := p.changeFiles(jp, &entry, &in)
	if err != nil {
		return err
	}
	if p.opts.Seams.changed != nil {
		p.opts.Seams.changed(p)
	}
	var auditErr error
	if p.LogLine != "" && !logged {
		if err := p.root.Append(p.LogPath, []byte(p.LogLine), !p.opts.Force); err != nil {
			auditErr = &AuditError{LogPath: p.LogPath, Line: p.LogLine, ID: p.ID, Err: err}
		} else {
			logged = true
		}
	}
	jerr := p.journal(jp, entry, logged)
	if len(overwrote) > 0 {
		return &OverwroteError{ID: p.ID, RunID: p.RunID, Files: overwrote, Journaled: jerr == nil}
	}
	if auditErr != nil {
		return auditErr
	}
	return jerr
}

// confirmed refuses a plan that may not be applied as it stands: none, read-only, refused when planned,
// without its run root, or without the typed word its confirmation asks.
func (p *Plan) confirmed(ao ApplyOptions) error {
	switch {
	case p == nil:
		return refusef("no plan")
	case p.opts.ReadOnly:
		return refusef("read-only mode: %s is not allowed", p.Action)
	case p.Refusal != nil:
		return p.Refusal
	case p.root == nil:
		return refusef("the plan holds no run root; plan the action again")
	case p.Confirm.Kind == ConfirmTyped && !p.opts.Force && ao.Typed != p.Confirm.Word:
		return refusef("not confirmed: type %q exactly to clear a lock whose liveness is unknown (or use --force)", p.Confirm.Word)
	}
	return nil
}

// checkFiles looks at every file this action touches before the lock is taken, without opening it: a
// FIFO, device or linked log planted since the plan refuses the action here, and nothing waits or is held.
func (p *Plan) checkFiles() error {
	for _, f := range p.Files {
		if err := p.root.CheckFile(f.Path, !p.opts.Force, false); err != nil {
			return err
		}
	}
	if p.LogLine != "" {
		if err := p.root.CheckFile(p.LogPath, !p.opts.Force, true); err != nil {
			return err
		}
	}
	return nil
}

// intent is the journal entry this action will write and the intent that precedes it: each file's old
// bytes, new hash and the temp or claim name its change goes through.
func (p *Plan) intent() (journal.Entry, journal.Intent) {
	entry := journal.Entry{
		ID: p.ID, When: p.opts.now(), Who: p.opts.user(), Host: p.opts.Env.Host, Action: string(p.Action),
		Run: p.RunPath, RunID: p.RunID, Summary: p.Summary, Reason: p.opts.Reason, Undoes: p.undoes,
	}
	in := journal.Intent{Root: p.root.Path(), LogPath: p.LogPath, Planned: p.LogLine, PID: os.Getpid(), PIDStart: ownStart,
		OwnerHost: atomicfile.HostTag()}
	if p.LogLine != "" {
		if info, err := p.root.Lstat(p.LogPath); err == nil {
			in.LogOffset = info.Size
		}
	}
	for _, f := range p.Files {
		rec := journal.File{Path: f.Path, OldExists: f.Snap.Exists, Mode: f.Snap.Mode}
		if f.Snap.Exists {
			rec.OldSHA256, rec.Old = f.Snap.SHA256, f.Old
		}
		if f.Remove {
			rec.Claim = atomicfile.NewClaimName(filepath.Base(f.Path))
		} else {
			rec.NewExists, rec.NewSHA256 = true, atomicfile.Hash(f.New)
			rec.Temp = atomicfile.NewTempName(filepath.Base(f.Path))
		}
		entry.Files = append(entry.Files, rec)
	}
	in.Entry = entry
	return entry, in
}

// changeFiles makes each file's change, in order: whether the audit line was appended on the way (the
// resumable convention logs a lock's payload before it goes), and the files whose displaced bytes were
// kept. On an error the journal says what was changed before it, if anything.
func (p *Plan) changeFiles(jp string, entry *journal.Entry, in *journal.Intent) (logged bool, overwrote []string, err error) {
	for i, f := range p.Files {
		rec := &entry.Files[i]
		if f.Remove {
			err = p.root.RemoveIfUnchanged(f.Snap, rec.Claim, func() error {
				if p.LogLine == "" || logged {
					return nil
				}
				if err := p.root.Append(p.LogPath, []byte(p.LogLine), !p.opts.Force); err != nil {
					return err
				}
				logged = true
				return nil
			})
		} else {
			var d *atomicfile.Displaced
			d, err = p.root.Replace(f.Snap, f.New, rec.Temp)
			if err == nil && d != nil && d.PutBack {
				// A writer landed between the check and the rename; its file is back in place.
				d, err = p.redoRaced(jp, in, i, d)
				var pb *PutBackError
				if errors.As(err, &pb) {
					entry.Raced = err.Error()
				} else {
					entry.Raced = strings.Join(p.Raced, "; ")
				}
			}
			if d != nil {
				overwrote = append(overwrote, f.Path)
				rec.Displaced = true
				rec.Old, rec.OldSHA256 = d.Data, d.SHA256
			}
		}
		if err == nil {
			continue
		}
		switch {
		case i == 0 && entry.Raced != "":
			// Our bytes were in place for a moment: the journal says so, with no file to undo.
			entry.Files = nil
			entry.Summary = "not applied (a writer's change was put back): " + entry.Summary
			p.journal(jp, *entry, false)
		case i == 0:
			journal.RemoveIntent(jp, p.ID)
		default:
			entry.Files = entry.Files[:i]
			p.journal(jp, *entry, logged)
			err = fmt.Errorf("%w (the %s before it %s changed and %s in the journal as %s)", err,
				plural.Count(i, "file", "files"), plural.Word(i, "was", "were"), plural.Word(i, "is", "are"), p.ID)
		}
		return logged, overwrote, err
	}
	return logged, overwrote, nil
}

// recheckWhole re-checks at apply that a manifest edit starts from, and produces, a whole manifest: the
// bytes on disk still hash as planned, and neither they nor ours carry the marks of a torn write.
func recheckWhole(f FileChange) error {
	if f.Remove || filepath.Base(f.Path) != "MANIFEST.yaml" {
		return nil
	}
	for _, b := range [][]byte{f.Old, f.New} {
		if torn := jonggrang.TornReasons(b); len(torn) > 0 {
			return refusef("%s cannot be edited safely: it looks cut short (%s); nothing was written", f.Path, strings.Join(torn, "; "))
		}
	}
	return nil
}

// journal appends the completed entry and drops the intent. A failure keeps the intent, so the next action
// records the entry.
func (p *Plan) journal(jp string, e journal.Entry, logged bool) error {
	if logged {
		e.LogLine = p.LogLine
	}
	if err := p.record(jp, e); err != nil {
		return &JournalError{Err: err}
	}
	return nil
}

// record appends e, done, to the journal at jp without its temp and claim files (gone once an action is
// done) and drops its intent; a failure keeps the intent, so the next action records it.
func (p *Plan) record(jp string, e journal.Entry) error {
	for i := range e.Files {
		e.Files[i].Temp, e.Files[i].Claim = "", ""
	}
	repaired, err := p.appendJournal(jp, e)
	if repaired != "" {
		p.Recovered = append(p.Recovered, repaired)
	}
	if err != nil {
		return err
	}
	journal.RemoveIntent(jp, e.ID)
	return nil
}

// appendJournal appends e under the lock Apply holds, or takes the lock for it (recoverRun, in the tests).
func (p *Plan) appendJournal(jp string, e journal.Entry) (string, error) {
	if p.journalLock != nil {
		return p.journalLock.Append(e)
	}
	l, err := p.opts.lockJournal(jp)
	if err != nil {
		return "", err
	}
	defer l.Release()
	return l.Append(e)
}

func newID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails on Linux; uniqueness also rests on the nanosecond time
	return fmt.Sprintf("%s-%x", now.UTC().Format("20060102T150405.000000000Z"), b)
}

// recoverPending finishes, or reports, each action on this run that a crash interrupted (its intent is
// still pending and its owner is dead). Per file it finds whether the change happened: the file holds the
// new hash (done), the old one (not done), or neither (someone changed it since: reported, never guessed
// at). A change that happened gets its missing audit line appended once (looked up by action id in what
// the log gained since the intent) and its journal entry; one that did not happen is dropped.
func (p *Plan) recoverPending(jp string) {
	journal.CleanPendingTemps(jp, func(host string, pid int) bool {
		if host != atomicfile.HostTag() || pid == os.Getpid() {
			return false
		}
		alive, _ := p.ownerAlive(pid)
		return !alive
	})
	for _, in := range p.pending {
		if has, err := journal.Has(jp, in.ID); err == nil && has {
			journal.RemoveIntent(jp, in.ID)
			p.Recovered = append(p.Recovered, fmt.Sprintf("%s %s had been journaled already; its leftover intent was removed", in.Action, in.ID))
			continue
		}
		if filepath.Clean(in.Root) != p.root.Path() {
			p.setAside(jp, in, fmt.Sprintf("it was interrupted by a crash under %s, not this run root", in.Root))
			continue
		}
		logged := in.Planned == "" || p.logHas(in.LogPath, in.LogOffset, in.ID)
		// A torn line beginning its entry says the action reached its journal append, which comes after
		// every change: a file found as it was before was put back since (or, removed, put there again).
		reached, _ := journal.BeganAppend(jp, in.ID)
		applied, notApplied, unknown := 0, 0, []string{}
		for _, f := range in.Files {
			outcome := p.recoverFile(f, logged, in.Planned != "")
			if reached && outcome == "not-applied" {
				outcome = "unknown"
				if !f.NewExists {
					outcome = "applied"
				}
			}
			switch outcome {
			case "applied":
				applied++
			case "not-applied":
				notApplied++
			default:
				unknown = append(unknown, f.Path)
			}
		}
		e := in.Entry
		switch {
		case len(unknown) > 0:
			e.Files = nil
			e.Recovered = fmt.Sprintf("a crash interrupted it; at recovery by %s, %s held neither the bytes before nor the bytes it was writing (changed since by someone else), so it is recorded without files and cannot be undone", p.ID, strings.Join(unknown, ", "))
		case applied == 0:
			journal.RemoveIntent(jp, in.ID)
			p.Recovered = append(p.Recovered, fmt.Sprintf("%s %s was interrupted by a crash before it changed anything; nothing to finish", in.Action, in.ID))
			continue
		default:
			e.Recovered = "a crash interrupted it after its change; finished by " + p.ID
		}
		if reached {
			e.Recovered += "; its first journal append was cut short by the crash (that torn line is kept and skipped)"
		}
		if applied > 0 && !logged {
			line := strings.TrimSuffix(in.Planned, "\n") + " " + kv("recovered_by", p.ID) + "\n"
			if err := p.root.Append(in.LogPath, []byte(line), !p.opts.Force); err == nil {
				e.LogLine = line
				e.Recovered += "; its missing audit line was appended"
			} else {
				e.Recovered += "; its audit line is missing and could not be appended: " + err.Error()
			}
		} else if logged && in.Planned != "" {
			e.LogLine = in.Planned
		}
		if err := p.record(jp, e); err != nil {
			p.Recovered = append(p.Recovered, fmt.Sprintf("%s %s: %s; but the journal could not be written: %v", in.Action, in.ID, e.Recovered, err))
			continue
		}
		p.Recovered = append(p.Recovered, fmt.Sprintf("%s %s: %s", in.Action, in.ID, e.Recovered))
	}
	p.pending = nil
}

// recoverFile settles one file of an interrupted action and removes its temp or quarantine file.
func (p *Plan) recoverFile(f journal.File, logged, hasLog bool) string {
	_, snap, err := p.root.Read(f.Path)
	if err != nil {
		return "unknown"
	}
	if f.NewExists {
		if f.Temp != "" {
			p.root.RemoveName(f.Path, f.Temp)
		}
		switch {
		case snap.Exists && snap.SHA256 == f.NewSHA256:
			return "applied"
		case snap.Exists == f.OldExists && (!snap.Exists || snap.SHA256 == f.OldSHA256):
			return "not-applied"
		}
		return "unknown"
	}
	// A removal: claimed (renamed to f.Claim), verified, logged, then deleted.
	_, claimed, cerr := p.root.ReadName(f.Path, f.Claim)
	if cerr == nil && claimed.Exists {
		if claimed.SHA256 == f.OldSHA256 && logged {
			p.root.RemoveName(f.Path, f.Claim) // the removal was logged: finish it
			return "applied"
		}
		// Claimed but never logged (or not the judged bytes): the removal never took effect for anyone who
		// reads the log, so the file goes back where it was (or, if that name is taken again, the copy goes).
		p.root.CleanLeftover(f.Path, atomicfile.Leftover{Name: f.Claim, Base: filepath.Base(f.Path), Claimed: true})
		return "not-applied"
	}
	switch {
	case hasLog && logged:
		// The line is logged only after the claim is verified, and the claim is gone: the removal finished
		// (a file at the name now, even with the same bytes, was put there since).
		return "applied"
	case snap.Exists && snap.SHA256 == f.OldSHA256:
		return "not-applied"
	case !snap.Exists && !hasLog:
		return "applied"
	}
	return "unknown"
}

// logHas reports whether the log gained a line naming action id since offset. Only what came after the
// intent is read, never the whole log.
func (p *Plan) logHas(path string, offset int64, id string) bool {
	if path == "" {
		return false
	}
	f, err := p.root.OpenRead(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return false
	}
	needle := []byte(kv("action_id", id))
	buf := make([]byte, 64<<10)
	var carry []byte
	for {
		n, err := f.Read(buf)
		chunk := append(carry, buf[:n]...)
		if bytes.Contains(chunk, needle) {
			return true
		}
		if len(chunk) > len(needle) {
			carry = append([]byte(nil), chunk[len(chunk)-len(needle):]...)
		} else {
			carry = chunk
		}
		if err != nil {
			return false
		}
	}
}

// touched lists every path the plan reads or writes.
func (p *Plan) touched() []string {
	var paths []string
	for _, f := range p.Files {
		paths = append(paths, f.Path)
	}
	return append(paths, p.LockPath, p.LogPath)
}

// removeLeftovers deletes the temp and quarantine files that dead owners left beside paths (a quarantined
// lock whose name is free is put back instead). Leftovers of live owners, and of other hosts, are left
// alone.
func (p *Plan) removeLeftovers(paths ...string) {
	seen := map[string]bool{}
	now := time.Now()
	for _, path := range paths {
		if path == "" || seen[filepath.Dir(path)] {
			continue
		}
		seen[filepath.Dir(path)] = true
		leftovers, err := p.root.Leftovers(path)
		if err != nil {
			continue
		}
		for _, l := range leftovers {
			if l.DeadOwner(now, p.ownerAlive) {
				if what, err := p.root.CleanLeftover(path, l); err == nil {
					p.Recovered = append(p.Recovered, what+" in "+filepath.Dir(path))
				}
			}
		}
	}
}
