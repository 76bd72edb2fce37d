// Package action changes run state: one code path for dashboard keys, subcommands and tests.
//
// Every action is Plan → Preview → Apply → Journal:
//
//	p, err := action.PlanStep(run, "", opts)  // also PlanUnlock, PlanCheck, PlanRetry, PlanPause, PlanResume, PlanUndo
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
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

	"runwatch/model"
	"runwatch/plural"
	"runwatch/state/atomicfile"
	"runwatch/state/journal"
	"runwatch/termsafe"
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
	// Expect, when not nil, is what the preview the person confirmed started from (Plan.Starts: File →
	// SHA256): a plan made now from other bytes, or of other files, is refused with *NotAsShownError.
	Expect map[string]string
	// LockWait bounds the wait for the journal's lock; 0 means journal.DefaultLockWait.
	LockWait time.Duration
	// Seams are set by tests only.
	Seams Seams
}

// Seams are the points where a test plays the world at one exact moment of an action (a writer landing, a
// crash, a full disk). They travel with the Options of one call, so the tests that set them run in parallel;
// the zero value is the program's.
type Seams struct {
	// BeforeRename runs in every replacement between its precondition check and its rename
	// (atomicfile.Root.BeforeRename).
	BeforeRename func()
	// BeforeJournalAppend runs with the journal locked, just before an entry's line is written
	// (journal.Lock.BeforeAppend).
	BeforeJournalAppend func(f *os.File, line []byte)
	// locked runs after the run lock is taken, changed after the files are changed (before the audit line).
	locked, changed func(*Plan)
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
	// redo makes the same edit on a writer's newer bytes (raced.go); nil where the action does not.
	redo redoFunc
}

// Plan is a computed action, ready to preview and apply.
type Plan struct {
	Action  Verb
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
	// lockDir is LockPath's folder when it does not exist yet and lies inside the run folder: Apply creates
	// it to take the lock where the run's writer looks, and removes it after if it is empty.
	lockDir string
	Summary string
	// Warnings are consequences a person must read before confirming (e.g. the writer will undo this change);
	// Preview shows them first.
	Warnings []string
	Confirm  Confirm
	// Refusal is why the action may not be applied (nil when it may); the Plan* functions return it too.
	Refusal error

	// ID names the action in the journal, its intent and its audit line.
	ID string
	// Recovered says what Apply found and finished of earlier actions a crash interrupted.
	Recovered []string
	// Raced says what Apply did when a writer that takes no lock landed between its last check and its
	// rename: the writer's file put back and the same edit made on it (raced.go).
	Raced []string

	opts       Options
	undoes     string
	logMissing bool
	root       *atomicfile.Root
	pending    []journal.Intent
	// journalLock is the journal's lock while Apply holds it, from before the first change to the entry.
	journalLock *journal.Lock
	lockRunID   string
	takeover    string // why the run lock found at plan time is runwatch's own dead one, taken over at apply
	dir         string // the run's folder, which Question names files under
}

// ApplyOptions are the person's answers at apply time.
type ApplyOptions struct {
	// Typed is what the person typed for a ConfirmTyped plan.
	Typed string
}

// Refused is a refusal with a reason for a person. First, when set, is the action that must come before
// this one (unlock a stale lock before a step): a dashboard names its key instead of asking anything else.
type Refused struct {
	Reason string
	First  Verb
}

func (r *Refused) Error() string { return r.Reason }

func refusef(format string, args ...any) error { return &Refused{Reason: fmt.Sprintf(format, args...)} }

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

// lockJournal takes the journal's lock at jp, waiting at most LockWait.
func (o Options) lockJournal(jp string) (*journal.Lock, error) {
	wait := o.LockWait
	if wait <= 0 {
		wait = journal.DefaultLockWait
	}
	l, err := journal.Acquire(jp, wait)
	if err != nil {
		return nil, err
	}
	l.BeforeAppend = o.Seams.BeforeJournalAppend
	return l, nil
}

func (o Options) now() time.Time {
	if o.Env.Now.IsZero() {
		return time.Now().UTC()
	}
	return o.Env.Now.UTC()
}

// newPlan starts a plan; the read-only rule is checked before anything is read. The run root is opened now
// and held until the plan is applied or dropped: every read and write of the plan is resolved beneath that
// descriptor, so a folder swapped for a symlink while the person reads the confirmation cannot redirect it.
func newPlan(action Verb, run model.Run, opts Options) (*Plan, error) {
	p := &Plan{Action: action, RunPath: run.StatePath, RunID: run.ID, Kind: run.Kind, opts: opts, Root: runRoot(run), dir: run.Dir}
	p.ID = newID(opts.now())
	if opts.ReadOnly {
		return p, p.refuse(refusef("read-only mode: %s is not allowed", action))
	}
	if run.Archived {
		return p, p.refuse(refusef("%s is archived (a *.reset-* folder); actions are refused on archived runs", run.ID))
	}
	root, err := atomicfile.OpenRoot(p.Root)
	if err != nil {
		return p, p.refuse(err)
	}
	p.root = root
	p.findPending()
	return p, nil
}

func (p *Plan) refuse(err error) error {
	p.Refusal = err
	if p.Summary == "" {
		p.Summary = err.Error()
	}
	return err
}

// Close releases the run root the plan holds. Apply does not close it (a caller may show the plan again);
// a plan dropped without Close is released by the garbage collector.
func (p *Plan) Close() error {
	if p == nil || p.root == nil {
		return nil
	}
	return p.root.Close()
}

// runRoot is the directory no write may leave: the jonggrang project (locks live beside the features) or
// the resumable run folder.
func runRoot(run model.Run) string {
	if run.Kind == model.KindJonggrang && run.ProjectRoot != "" {
		return run.ProjectRoot
	}
	return run.Dir
}

// readForEdit resolves path inside the root, checks ownership and reads it, beneath the held root and
// without blocking: the only way a file gets into a plan.
func (p *Plan) readForEdit(path string) (string, []byte, atomicfile.Snapshot, error) {
	real, err := atomicfile.Resolve(p.Root, path)
	if err != nil {
		return "", nil, atomicfile.Snapshot{}, err
	}
	if err := p.root.CheckFile(real, !p.opts.Force, false); err != nil {
		return "", nil, atomicfile.Snapshot{}, err
	}
	data, snap, err := p.root.Read(real)
	if err != nil {
		return "", nil, snap, err
	}
	if !snap.Exists {
		return "", nil, snap, refusef("%s does not exist", path)
	}
	return real, data, snap, nil
}

// setLog plans the audit line for logs that exist in the convention. The line carries the action's id, so a
// recovery after a crash can tell whether it was appended.
func (p *Plan) setLog(path, event string, fields ...string) error {
	real, err := atomicfile.Resolve(p.Root, path)
	if err != nil {
		return err
	}
	if err := p.root.CheckFile(real, !p.opts.Force, true); err != nil {
		return err
	}
	p.LogPath = real
	if _, err := p.root.Lstat(real); err != nil {
		p.logMissing = true
	}
	p.LogLine = logLine(p.opts.now(), event, append(fields, "tool=runwatch", kv("user", p.opts.user()), p.reasonField(), kv("action_id", p.ID))...)
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

// kv renders key=value, quoting values that hold spaces, quotes, '=', a rune termsafe hides or invalid
// UTF-8, so one audit line stays one line, parses back, and shows no raw control to whoever reads run.log.
func kv(key, value string) string {
	if value == "" || strings.ContainsAny(value, " \t\"'=\\") || strings.IndexFunc(value, termsafe.Hidden) >= 0 || !utf8.ValidString(value) {
		return key + "=" + strconv.Quote(value)
	}
	return key + "=" + value
}

// Preview shows exactly what Apply will do: a unified diff per file, removals, and the log line.
func (p *Plan) Preview() string {
	var b strings.Builder
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	for _, in := range p.pending {
		fmt.Fprintf(&b, "first finish %s %s, which a crash interrupted (see the journal's pending/%s.json)\n", in.Action, in.ID, in.ID)
	}
	if p.takeover != "" {
		fmt.Fprintf(&b, "take over the run lock %s (%s), with a stale_lock_replaced line in the log\n", p.LockPath, p.takeover)
	}
	switch {
	case p.lockDir != "":
		fmt.Fprintf(&b, "take run lock %s (released after), creating its folder %s as its writer does (removed after if empty)\n", p.LockPath, p.lockDir)
	case p.LockPath != "":
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

// Question is what a confirmation asks: what will be written, the files named under the run's folder
// ("Write this change to state.env and run.log?"). "Apply this change?" said nothing of where.
func (p *Plan) Question() string {
	var write, remove []string
	for _, f := range p.Files {
		if f.Remove {
			remove = append(remove, p.underRun(f.Path))
		} else {
			write = append(write, p.underRun(f.Path))
		}
	}
	logged := p.LogLine != "" && !slices.Contains(write, p.underRun(p.LogPath))
	var does []string
	if len(remove) > 0 {
		does = append(does, "remove "+plural.And(remove))
	}
	switch {
	case len(write) > 0 && logged:
		does = append(does, "write this change to "+plural.And(append(write, p.underRun(p.LogPath))))
	case len(write) > 0:
		does = append(does, "write this change to "+plural.And(write))
	case logged:
		does = append(does, "append to "+p.underRun(p.LogPath))
	}
	if len(does) == 0 {
		return "Apply this change?"
	}
	q := strings.Join(does, " and ") + "?"
	return strings.ToUpper(q[:1]) + q[1:]
}

// underRun is path relative to the run's folder when it lies inside it (Files hold real paths, symlinks
// resolved, so the folder's real path is tried too), else path whole.
func (p *Plan) underRun(path string) string {
	for _, dir := range []string{p.dir, realDir(p.dir)} {
		if dir == "" {
			continue
		}
		if rel, err := filepath.Rel(dir, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return rel
		}
	}
	return path
}

func realDir(dir string) string {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil || dir == "" {
		return ""
	}
	return real
}
