package model

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ProcInspector answers questions about local processes. The state package supplies the real one; tests
// supply fakes or spawn real children.
type ProcInspector interface {
	// Alive reports whether pid exists. EPERM counts as alive (the process exists, it is just not ours).
	Alive(pid int) bool
	// StartTime returns when pid started, if it can be known.
	StartTime(pid int) (time.Time, bool)
}

// KernelThreadChecker is implemented by inspectors that can tell kernel threads apart: a kernel thread is
// alive, started at boot, and never the holder of a lock file, so a lock naming one is stale.
type KernelThreadChecker interface {
	KernelThread(pid int) bool
}

// Env is what judging needs from the world.
type Env struct {
	Now        time.Time
	Host       string
	StaleAfter time.Duration
	Proc       ProcInspector
	// StageOrders is the config's stage_order: the order of resumable tasks whose writer keeps it in code.
	StageOrders []StageOrderRule
	// Elsewhere answers for the processes of other machines runwatch reaches (package remote), so a lock
	// held there is judged there; nil leaves such locks unknown.
	Elsewhere Elsewhere
	// Liveness are the thresholds of the judgements the clock decides (JudgeTime); readers do not use them.
	Liveness LivenessRules
	// NoArtifactListing leaves a resumable run's ResumableDetail.Artifacts nil: for a reader whose output
	// never shows the listing (the dashboard), which would hold it for every run (issue 35).
	NoArtifactListing bool
}

// ErrAsking is an Elsewhere's answer while the question is on its way to the machine: the lock is unknown
// until the answer comes, and judged again then.
var ErrAsking = errors.New("asking")

// Elsewhere finds the machine a lock names among the machines runwatch reaches, and asks it about its
// processes.
type Elsewhere interface {
	// On returns the facts of process pid (0: none wanted) on the reached machine whose own host name is
	// host, and that machine's label. reached is false when no reached machine has that name (why then says
	// which machines could not be asked their name); err is set when the machine is known but cannot be
	// asked now (it is down).
	On(host string, pid int) (proc ProcInspector, label string, reached bool, why string, err error)
}

// DefaultStaleAfter is the jonggrang convention's own rule (cleanStaleLocks, 30 minutes).
const DefaultStaleAfter = 30 * time.Minute

// pidReuseSlack absorbs clock granularity: /proc start times have clock-tick resolution and lock timestamps
// are often second-precision.
const pidReuseSlack = 2 * time.Second

// SameHost compares host names the way people mean them: case-insensitively, and "box" equals "box.lan".
func SameHost(a, b string) bool {
	short := func(h string) string {
		h = strings.ToLower(strings.TrimSpace(h))
		if i := strings.IndexByte(h, '.'); i > 0 {
			h = h[:i]
		}
		return h
	}
	return short(a) == short(b)
}

// JudgeLock sets Verdict, Reasons and AgeSeconds on l by the rules docs/USAGE.md lists (its paragraph
// "Lock verdicts"). The judgement is always explained.
func JudgeLock(l *Lock, env Env) {
	l.Reasons = nil
	l.age = ageText{}
	staleAfter := env.StaleAfter
	if staleAfter <= 0 {
		staleAfter = DefaultStaleAfter
	}
	var age time.Duration
	if l.AcquiredAt != nil {
		age = env.Now.Sub(*l.AcquiredAt)
		l.AgeSeconds = int64(age / time.Second)
	}
	verdict := func(v Verdict, format string, args ...any) {
		l.Verdict = v
		l.Reasons = append(l.Reasons, fmt.Sprintf(format, args...))
	}
	// aged adds the reason that holds the lock's age: kept apart, so a screen renders it when it draws.
	aged := func(head, tail string) {
		l.age = newAgeText(head, *l.AcquiredAt, tail, age < 0, env.Now)
		l.Reasons = append(l.Reasons, l.age.was)
	}

	if l.ParseError != "" {
		verdict(VerdictStale, "unparsable: %s", l.ParseError)
		return
	}
	l.JudgedOn = ""
	here := " on this host"
	if l.Host != "" && env.Host != "" && !SameHost(l.Host, env.Host) {
		unknown := func(format string, args ...any) {
			verdict(VerdictUnknown, format, args...)
			if l.AcquiredAt != nil {
				aged("age ", "")
			}
		}
		if env.Elsewhere == nil {
			unknown("held on %s; liveness cannot be checked here", l.Host)
			return
		}
		proc, label, reached, why, err := env.Elsewhere.On(l.Host, l.PID)
		switch {
		case !reached && why != "":
			unknown("held on %s; liveness cannot be checked here (%s)", l.Host, why)
			return
		case !reached:
			unknown("held on %s, which is none of the hosts runwatch reaches; liveness cannot be checked here", l.Host)
			return
		case errors.Is(err, ErrAsking):
			unknown("held on %s; asking %s about pid %d", l.Host, label, l.PID)
			return
		case err != nil:
			unknown("held on %s (%s), which cannot be asked now: %v", l.Host, label, err)
			return
		}
		// The same rules, with that machine's process facts: the verdict is as good as one made there.
		env.Proc, env.Host, here = proc, l.Host, ""
		l.JudgedOn = label
		defer func() {
			if len(l.Reasons) > 0 {
				l.Reasons[0] = "judged on " + label + ": " + l.Reasons[0]
			}
		}()
	}
	if l.AcquiredAt != nil && age < -time.Minute {
		aged("acquired_at is ", " in the future")
	}
	switch {
	case l.PID < 0 || l.PID > maxPID:
		verdict(VerdictUnknown, "pid %d is not a valid process id", l.PID)
		return
	case l.PID > 0 && env.Proc != nil:
		if !env.Proc.Alive(l.PID) {
			verdict(VerdictStale, "pid %d is not running%s", l.PID, here)
			return
		}
		if kc, ok := env.Proc.(KernelThreadChecker); ok && kc.KernelThread(l.PID) {
			verdict(VerdictStale, "pid %d is a kernel thread, which never holds a lock file", l.PID)
			return
		}
		if l.AcquiredAt != nil {
			if started, ok := env.Proc.StartTime(l.PID); ok && started.After(l.AcquiredAt.Add(pidReuseSlack)) {
				verdict(VerdictStale, "pid %d started at %s, after the lock was taken at %s (pid reused)",
					l.PID, started.UTC().Format(time.RFC3339), l.AcquiredAt.UTC().Format(time.RFC3339))
				return
			}
		}
		verdict(VerdictLive, "pid %d is running", l.PID)
		if l.AcquiredAt != nil && age > staleAfter {
			aged("age ", " exceeds "+HumanDuration(staleAfter)+", but the process is alive")
		}
		return
	}
	// No pid (or pid 0): only the age can speak, and only the jonggrang convention defines an age rule.
	if l.PID == 0 && l.Kind == KindResumable {
		verdict(VerdictUnknown, "no pid recorded; liveness cannot be checked")
		return
	}
	if l.AcquiredAt == nil {
		verdict(VerdictUnknown, "no usable timestamp and no pid; the convention never expires such a lock")
		return
	}
	if age < 0 {
		// The convention's age rule compares a negative age with stale-after, so it never expires this lock;
		// calling it live would claim knowledge nobody has.
		l.Reasons = nil
		l.Verdict = VerdictUnknown
		aged("acquired_at is ", " in the future and there is no pid; the convention never expires such a lock")
		return
	}
	if age > staleAfter {
		l.Verdict = VerdictStale
		aged("age ", " exceeds "+HumanDuration(staleAfter))
		return
	}
	l.Verdict = VerdictLive
	aged("age ", " is within "+HumanDuration(staleAfter))
}

// maxPID is Linux's PID_MAX_LIMIT (2^22); anything above can never be a process.
const maxPID = 1 << 22

// HumanDuration renders a duration compactly: 45s, 5m, 2h0m, 3d4h.
func HumanDuration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// JudgementOutdated reports whether judging the run's locks and parallel groups again under env would change
// a verdict. A lock holder that crashes, a pid-less lock ageing past stale-after and a worker that exits all
// change the truth without touching a file, so a watcher must ask this on a timer, not wait for an event.
//
// Only a live verdict can go out of date: a dead pid stays dead (a reused one is caught by its start time), a
// lock stale by age only gets older, and what makes a lock unknown (another host, no timestamp, a bad pid)
// does not change with time. So only live locks are judged again, which keeps a quiet dashboard quiet; and
// locks held on another machine while runwatch reaches machines (one of them may come back).
func JudgementOutdated(r *Run, env Env) bool {
	for _, l := range r.Locks {
		if !lockMayChange(&l, env) {
			continue
		}
		again := l
		again.Reasons = nil
		JudgeLock(&again, env)
		// The words around the age change too: a live holder's lock gets older than stale-after, a time in
		// the future comes.
		if again.Verdict != l.Verdict || again.age.head != l.age.head || again.age.tail != l.age.tail {
			return true
		}
	}
	if r.Jonggrang != nil && env.Proc != nil {
		for _, g := range r.Jonggrang.Groups {
			if g.PID > 0 && g.Alive != env.Proc.Alive(g.PID) {
				return true
			}
		}
	}
	if at := compactionTurnsStaleAt(r); !at.IsZero() && !env.Now.Before(at) {
		return true // the gate no longer trusts its state: a read says stale, not blocking
	}
	return false
}

// compactionTurnsStaleAt is when the run's compaction state, trusted now, stops being trusted (zero: no
// state, already stale, or no time to count from).
func compactionTurnsStaleAt(r *Run) time.Time {
	if r.Jonggrang == nil || r.Jonggrang.Compaction == nil || r.Jonggrang.Compaction.Stale {
		return time.Time{}
	}
	return r.Jonggrang.Compaction.TrustedUntil
}

// JudgementMayChange reports whether time passing alone can ever make JudgementOutdated true for the run:
// a live lock, a lock held on another machine while runwatch reaches machines, a parallel group with a pid,
// a compaction state still trusted.
// A watcher needs no liveness timer while no run it holds has one.
func JudgementMayChange(r *Run, env Env) bool {
	for i := range r.Locks {
		if lockMayChange(&r.Locks[i], env) {
			return true
		}
	}
	if r.Jonggrang != nil && env.Proc != nil {
		for _, g := range r.Jonggrang.Groups {
			if g.PID > 0 {
				return true
			}
		}
	}
	return !compactionTurnsStaleAt(r).IsZero()
}

// JudgementNeedsPolling is JudgementMayChange without what JudgementComesAt foresees: what only a look at the
// processes (or another machine) can tell, at any moment. A watcher polls only for this; the rest needs one
// wake-up at a known instant.
func JudgementNeedsPolling(r *Run, env Env) bool {
	for i := range r.Locks {
		if lockNeedsPolling(&r.Locks[i], env) {
			return true
		}
	}
	if r.Jonggrang != nil && env.Proc != nil {
		for _, g := range r.Jonggrang.Groups {
			if g.PID > 0 {
				return true
			}
		}
	}
	return false
}

// JudgementComesAt is the earliest instant time alone changes the run's judgement at a time known ahead
// (zero: none): an acquired_at in the future among its locks (a clock that skews between writer and reader
// puts it there; so does a generated workspace dated ahead), or a compaction state turning stale.
func JudgementComesAt(r *Run) time.Time {
	at := compactionTurnsStaleAt(r)
	for i := range r.Locks {
		if a := r.Locks[i].age; a.ahead && (at.IsZero() || a.from().Before(at)) {
			at = a.from()
		}
	}
	return at
}

func lockMayChange(l *Lock, env Env) bool {
	// One whose acquired_at lies in the future is judged by its age once that time has come.
	return lockNeedsPolling(l, env) || l.age.ahead
}

// lockNeedsPolling: a live holder can exit at any moment, and a lock judged on another machine can turn
// from unknown (that machine was down) to known; an acquired_at in the future does not make either wait.
func lockNeedsPolling(l *Lock, env Env) bool {
	return l.Verdict == VerdictLive || (l.Verdict == VerdictUnknown && env.Elsewhere != nil && l.Host != "" && !SameHost(l.Host, env.Host))
}

// JudgeLocksHeldElsewhere judges again the locks of a run read by another machine's runwatch (env.Host is
// that machine's name) that it could only call unknown because they name a third machine, which runwatch
// here reaches (env.Elsewhere). The run's lock problems, crash signs, status and attention follow the new
// verdicts. It reports whether anything changed.
func JudgeLocksHeldElsewhere(r *Run, env Env) bool {
	if env.Elsewhere == nil || env.Host == "" {
		return false
	}
	changed := false
	for i := range r.Locks {
		l := &r.Locks[i]
		if l.Host == "" || SameHost(l.Host, env.Host) || (l.Verdict != VerdictUnknown && l.JudgedOn == "") {
			continue
		}
		again := *l
		again.Kind = r.Kind
		JudgeLock(&again, env)
		if again.Verdict == l.Verdict && strings.Join(again.Reasons, "\n") == strings.Join(l.Reasons, "\n") {
			continue
		}
		changed = true
		r.Problems = dropLockProblems(r.Problems, l.Path)
		reasons := strings.Join(again.Reasons, "; ")
		switch again.Verdict {
		case VerdictStale:
			r.AddProblem(SeverityWarning, CodeLockStale, l.Path, fmt.Sprintf("lock %s is stale: %s", l.Path, reasons))
			if r.Kind == KindJonggrang && !l.Shared {
				r.CrashSigns = append(r.CrashSigns, fmt.Sprintf("lock of agent %s is stale: %s", l.Holder, reasons))
			}
		case VerdictUnknown:
			r.AddProblem(SeverityWarning, CodeLockUnknown, l.Path, fmt.Sprintf("lock %s: %s", l.Path, reasons))
		}
		*l = again
	}
	if changed {
		FinalizeRun(r)
	}
	return changed
}

func dropLockProblems(ps []Problem, path string) []Problem {
	out := ps[:0:0]
	for _, p := range ps {
		if p.Path == path && (p.Code == CodeLockUnknown || p.Code == CodeLockStale) {
			continue
		}
		out = append(out, p)
	}
	return out
}
