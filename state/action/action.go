// Package action changes run state: one code path for dashboard keys, subcommands and tests.
//
// Every action is Plan → Preview → Apply → Journal:
//
//	p, err := action.PlanStep(run, opts)      // also PlanUnlock, PlanCheck, PlanRetry, PlanPause, PlanResume, PlanUndo
//	if err != nil { show err; return }        // refused: gate not met, live lock, read-only, ... (p.Summary still set)
//	show p.Summary and p.Preview()            // unified diff of the exact bytes, plus the log line to append
//	switch p.Confirm.Kind {
//	case action.ConfirmYesNo:  ask y/N
//	case action.ConfirmTyped:  ask the user to type p.Confirm.Word (an unknown lock's holder)
//	}
//	err = action.Apply(p, action.ApplyOptions{Typed: whatTheyTyped})
//
// A plan holds the new bytes of each file, computed from the bytes read at plan time, and a snapshot of those
// bytes (size, mtime, SHA-256) as the precondition. Apply takes the run's lock when the convention has one
// (resumable: LOCK_FILE created exclusively), re-checks every precondition, writes each file atomically
// (state/atomicfile), appends the audit line to the run's log, releases the lock and records the action in
// the journal (state/journal), which is what PlanUndo reads. When a precondition fails Apply changes nothing
// and returns an error matching atomicfile.ErrChanged ("changed on disk since you looked"). Every refusal is
// a *Refused error, or atomicfile's *ChangedError / *UnsafePathError, all with a reason fit to show a person.
//
// Safety rules enforced here, not by callers: never write outside the run root (symlinks are resolved and
// checked), never write a file that was not read for the plan, never edit immutable-contract keys, never
// touch files owned by another user unless Options.Force, never write anything with Options.ReadOnly, never
// clear a live lock, never replace a log (append only).
package action

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/aymanbagabas/go-udiff"

	"runwatch/model"
	"runwatch/state/atomicfile"
	"runwatch/state/journal"
)

// Action names, as used in the journal, subcommands and audit lines.
const (
	ActUnlock  = "unlock"
	ActStep    = "step"
	ActCheck   = "check"
	ActUncheck = "uncheck"
	ActRetry   = "retry"
	ActPause   = "pause"
	ActResume  = "resume"
	ActUndo    = "undo"
)

// Options are the caller's choices for planning and applying.
type Options struct {
	// Env gives the time, host and process facts (state.NewEnv in the program; fakes in tests).
	Env model.Env
	// User is recorded in audit lines, the journal and the run lock; empty means the current user.
	User string
	// Reason is the person's why, recorded in the audit line and the journal.
	Reason string
	// Force allows files owned by another user, and clears an unknown lock without the typed word.
	Force bool
	// ReadOnly refuses every action.
	ReadOnly bool
	// JournalPath overrides $XDG_STATE_HOME/runwatch/journal.jsonl.
	JournalPath string
}

// ConfirmKind is how a person must confirm a plan before Apply.
type ConfirmKind int

const (
	// ConfirmYesNo is a plain y/N question.
	ConfirmYesNo ConfirmKind = iota
	// ConfirmTyped requires typing Confirm.Word (or Force): clearing a lock whose liveness is unknown.
	ConfirmTyped
)

// Confirm says how to confirm a plan.
type Confirm struct {
	Kind ConfirmKind
	Word string
}

// FileChange is one file a plan writes or removes.
type FileChange struct {
	// Path is the real path written (symlinks inside the run root resolved).
	Path string
	// Snap is the precondition: the file as read at plan time (Exists=false: must still be absent).
	Snap atomicfile.Snapshot
	Old  []byte
	New  []byte
	// Remove deletes the file (claimed by quarantine rename, verified, then removed) instead of writing New.
	Remove bool
}

// Plan is a computed action, ready to preview and apply.
type Plan struct {
	Action  string
	RunPath string // the run's StatePath: run identity everywhere
	RunID   string
	Kind    model.Kind
	Root    string // the run root no write may leave
	Files   []FileChange
	// LogPath/LogLine: the audit line appended to the run's log ("" when the convention has no log).
	LogPath string
	LogLine string
	// LockPath is the run lock Apply takes (resumable LOCK_FILE); empty when the convention has none.
	LockPath string
	Summary  string
	Confirm  Confirm
	// Refusal is why the action may not be applied (nil when it may); the Plan* functions return it too.
	Refusal error

	opts       Options
	undoes     string
	logMissing bool
}

// ApplyOptions are the person's answers at apply time.
type ApplyOptions struct {
	// Typed is what the person typed for a ConfirmTyped plan.
	Typed string
}

// Refused is a refusal with a reason for a person.
type Refused struct{ Reason string }

func (r *Refused) Error() string { return r.Reason }

func refusef(format string, args ...any) error { return &Refused{Reason: fmt.Sprintf(format, args...)} }

// JournalError means the action was applied but could not be recorded in the journal (so undo will not
// see it).
type JournalError struct{ Err error }

func (e *JournalError) Error() string {
	return "applied, but the journal could not be written (undo will not know this action): " + e.Err.Error()
}
func (e *JournalError) Unwrap() error { return e.Err }

// immutableKeys are the resumable convention's immutable-contract keys: never edited.
var immutableKeys = map[string]bool{
	"RUN_ID": true, "RUN_ROOT": true, "REPO_ROOT": true, "PLAN_PATH": true, "BASE_PIN_SHA": true,
	"TASK_NAME": true, "ARTIFACT_ROOT": true, "LOCK_FILE": true, "CONTROL_RUN_ROOT": true,
	"TARGET_BRANCH": true, "BASE_BRANCH": true, "TARGET_REMOTE": true, "EXPECTED_OLD_REMOTE_SHA": true,
	"STATE_SCHEMA_VERSION": true, "CHECKLIST_SCHEMA_VERSION": true,
}

// IsImmutable reports whether a state key is part of the immutable contract.
func IsImmutable(key string) bool { return immutableKeys[strings.ToUpper(key)] }

func (o Options) user() string {
	if o.User != "" {
		return o.User
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "uid" + strconv.Itoa(os.Getuid())
}

func (o Options) now() time.Time {
	if o.Env.Now.IsZero() {
		return time.Now().UTC()
	}
	return o.Env.Now.UTC()
}

// newPlan starts a plan; the read-only rule is checked before anything is read.
func newPlan(action string, run model.Run, opts Options) (*Plan, error) {
	p := &Plan{Action: action, RunPath: run.StatePath, RunID: run.ID, Kind: run.Kind, opts: opts, Root: runRoot(run)}
	if opts.ReadOnly {
		return p, p.refuse(refusef("read-only mode: %s is not allowed", action))
	}
	if run.Archived {
		return p, p.refuse(refusef("%s is archived (a *.reset-* folder); actions are refused on archived runs", run.ID))
	}
	return p, nil
}

func (p *Plan) refuse(err error) error {
	p.Refusal = err
	if p.Summary == "" {
		p.Summary = err.Error()
	}
	return err
}

// runRoot is the directory no write may leave: the jonggrang project (locks live beside the features) or
// the resumable run folder.
func runRoot(run model.Run) string {
	if run.Kind == model.KindJonggrang && run.ProjectRoot != "" {
		return run.ProjectRoot
	}
	return run.Dir
}

// readForEdit resolves path inside the root, checks ownership and reads it: the only way a file gets into
// a plan.
func (p *Plan) readForEdit(path string) (string, []byte, atomicfile.Snapshot, error) {
	real, err := atomicfile.Resolve(p.Root, path)
	if err != nil {
		return "", nil, atomicfile.Snapshot{}, err
	}
	if !p.opts.Force {
		if err := atomicfile.CheckOwner(real); err != nil {
			return "", nil, atomicfile.Snapshot{}, err
		}
	}
	data, snap, err := atomicfile.Read(real)
	if err != nil {
		return "", nil, snap, err
	}
	if !snap.Exists {
		return "", nil, snap, refusef("%s does not exist", path)
	}
	return real, data, snap, nil
}

// setLog plans the audit line for logs that exist in the convention.
func (p *Plan) setLog(path, event string, fields ...string) error {
	real, err := atomicfile.Resolve(p.Root, path)
	if err != nil {
		return err
	}
	if !p.opts.Force {
		if err := atomicfile.CheckOwner(real); err != nil {
			return err
		}
	}
	p.LogPath = real
	if _, err := os.Lstat(real); err != nil {
		p.logMissing = true
	}
	p.LogLine = logLine(p.opts.now(), event, append(fields, "tool=runwatch", kv("user", p.opts.user()), p.reasonField())...)
	return nil
}

func (p *Plan) reasonField() string {
	if p.opts.Reason == "" {
		return ""
	}
	return kv("reason", p.opts.Reason)
}

// logLine formats a run.log entry in the convention's style: `[YYYY-MM-DDTHH:MM:SSZ] event key=value ...`.
func logLine(now time.Time, event string, fields ...string) string {
	var b strings.Builder
	b.WriteString("[" + now.UTC().Format("2006-01-02T15:04:05Z") + "] " + event)
	for _, f := range fields {
		if f != "" {
			b.WriteString(" " + f)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// kv renders key=value, quoting values that hold spaces, quotes, '=' or control characters so one audit
// line stays one line and parses back.
func kv(key, value string) string {
	if value == "" || strings.ContainsAny(value, " \t\"'=\\") || strings.IndexFunc(value, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return key + "=" + strconv.Quote(value)
	}
	return key + "=" + value
}

// Preview shows exactly what Apply will do: a unified diff per file, removals, and the log line.
func (p *Plan) Preview() string {
	var b strings.Builder
	if p.LockPath != "" {
		fmt.Fprintf(&b, "take run lock %s (released after)\n", p.LockPath)
	}
	for _, f := range p.Files {
		if f.Remove {
			fmt.Fprintf(&b, "remove %s\n", f.Path)
			b.WriteString(udiff.Unified(f.Path, "/dev/null", string(f.Old), ""))
			continue
		}
		if !f.Snap.Exists {
			fmt.Fprintf(&b, "create %s\n", f.Path)
		}
		b.WriteString(udiff.Unified(f.Path, f.Path, string(f.Old), string(f.New)))
	}
	if p.LogLine != "" {
		verb := "append to"
		if p.logMissing {
			verb = "create (it is missing) and append to"
		}
		fmt.Fprintf(&b, "%s %s:\n+%s", verb, p.LogPath, p.LogLine)
	}
	return b.String()
}

// Apply carries out a plan. See the package comment for the order of steps.
func Apply(p *Plan, ao ApplyOptions) error {
	if p == nil {
		return refusef("no plan")
	}
	if p.opts.ReadOnly {
		return refusef("read-only mode: %s is not allowed", p.Action)
	}
	if p.Refusal != nil {
		return p.Refusal
	}
	if p.Confirm.Kind == ConfirmTyped && !p.opts.Force && ao.Typed != p.Confirm.Word {
		return refusef("not confirmed: type %q exactly to clear a lock whose liveness is unknown (or use --force)", p.Confirm.Word)
	}
	if p.LockPath != "" {
		release, err := p.takeRunLock()
		if err != nil {
			return err
		}
		defer release()
	}
	for _, f := range p.Files {
		if !p.opts.Force {
			if err := atomicfile.CheckOwner(f.Path); err != nil {
				return err
			}
		}
		if err := atomicfile.Check(f.Snap); err != nil {
			return err
		}
	}
	entry := journal.Entry{
		ID: newID(p.opts.now()), When: p.opts.now(), Who: p.opts.user(), Host: p.opts.Env.Host, Action: p.Action,
		Run: p.RunPath, RunID: p.RunID, Summary: p.Summary, Reason: p.opts.Reason, Undoes: p.undoes,
	}
	logged := false
	for i, f := range p.Files {
		rec := journal.File{Path: f.Path, OldExists: f.Snap.Exists, Mode: f.Snap.Mode}
		if f.Snap.Exists {
			rec.OldSHA256, rec.Old = f.Snap.SHA256, f.Old
		}
		var err error
		if f.Remove {
			err = atomicfile.RemoveIfUnchanged(f.Snap, func() error {
				// The resumable convention logs the lock's payload before it goes.
				if p.LogLine == "" || logged {
					return nil
				}
				if err := atomicfile.Append(p.LogPath, []byte(p.LogLine)); err != nil {
					return err
				}
				logged = true
				return nil
			})
		} else {
			err = atomicfile.Replace(f.Snap, f.New)
			rec.NewExists, rec.NewSHA256 = true, atomicfile.Hash(f.New)
		}
		if err != nil {
			if i > 0 {
				p.journal(entry, logged)
				return fmt.Errorf("%w (the %d file(s) before it were changed and are in the journal)", err, i)
			}
			return err
		}
		entry.Files = append(entry.Files, rec)
	}
	if p.LogLine != "" && !logged {
		if err := atomicfile.Append(p.LogPath, []byte(p.LogLine)); err != nil {
			if jerr := p.journal(entry, false); jerr != nil {
				return jerr
			}
			return fmt.Errorf("applied, but the audit line could not be appended: %w", err)
		}
		logged = true
	}
	return p.journal(entry, logged)
}

func (p *Plan) journal(e journal.Entry, logged bool) error {
	if logged {
		e.LogLine = p.LogLine
	}
	path := p.opts.JournalPath
	if path == "" {
		var err error
		if path, err = journal.DefaultPath(); err != nil {
			return &JournalError{Err: err}
		}
	}
	if err := journal.Append(path, e); err != nil {
		return &JournalError{Err: err}
	}
	return nil
}

func newID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails on Linux; uniqueness also rests on the nanosecond time
	return fmt.Sprintf("%s-%x", now.UTC().Format("20060102T150405.000000000Z"), b)
}

// IsRefusal reports whether err is a refusal or a safety stop rather than an I/O failure.
func IsRefusal(err error) bool {
	var r *Refused
	var c *atomicfile.ChangedError
	var u *atomicfile.UnsafePathError
	return errors.As(err, &r) || errors.As(err, &c) || errors.As(err, &u)
}
