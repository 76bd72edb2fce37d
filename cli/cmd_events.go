package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"runwatch/config"
	"runwatch/fleet"
	"runwatch/gcpolicy"
	"runwatch/model"
	"runwatch/remote"
	"runwatch/state"
	"runwatch/state/runlog"
	"runwatch/status"
	"runwatch/termsafe"
	"runwatch/watch"
)

func init() {
	register(command{
		name:    "events",
		group:   groupRead,
		summary: "print run changes as JSON lines (run-added, run-changed, run-removed, log-appended, watch-health, attention)",
		args:    "[PATH...]",
		paths:   true,
		about:   strings.TrimSpace(eventsHelp),
		examples: []example{
			{"follow every change under the current directory", "runwatch events"},
			{"wait up to 2 hours for a run to complete, then notify", "runwatch events ~/.config/opencode/reports --until completed --run irm-backfill --timeout 2h && notify-send done"},
			{"only the status changes, with jq", `runwatch events | jq -c 'select(.type == "run-changed" and (.changed | index("status")))'`},
		},
		completeArgs: []string{argPaths},
		define:       defineEvents,
	})
}

// Exit codes of events beyond 0 (stopped, or --until reached) and 2 (usage).
const (
	exitEventsFailed      = 1
	exitEventsTimeout     = 3
	exitEventsInterrupted = 130 // only with --until: the awaited status was never seen
)

const eventsHelp = `
Prints one JSON object per line, flushed as it happens:
  {"type":"run-added","at":T,"run":RUN}              first one per run that exists at start, then new runs
  {"type":"watch-health","at":T,"health":{...}}      the local folders' watcher (none with remote roots alone):
                                                     after the initial runs, then when mode or error change
  {"type":"host-health","at":T,"host":{...}}         a remote root's host: connecting, live, reconnecting
                                                     (with retry_at), failed (with the error)
  {"type":"run-changed","at":T,"changed":[FIELD...],"run":RUN}   FIELDs are the run's JSON keys that differ
  {"type":"run-removed","at":T,"state_path":P,"id":ID,"dir":D}
  {"type":"log-appended","at":T,"path":LOG,"state_path":P,"id":ID,"entries":[...],"truncated":B,"rotated":B,
   "skipped":N}                                      N entries dropped for a reader that fell far behind
  {"type":"attention","at":T,"transition":"entered"|"completed","id":ID,"state_path":P,"dir":D,"status":S,
   "attention":{...}}                                a run entered needing you (attention.code says why) or
                                                     completed: once per state, flaps within 10s held back,
                                                     nothing for the state at start (as runwatch notify)
RUN has the shape of one element of "runs" in status --json. With "continued":true, entries[0] is the last
entry of the previous log-appended line of the same log again, grown by continuation lines written later; it
replaces that entry (same offset and time). An entry without a timestamp appears only when its entry is out
of reach (more than 64 KiB back); it continues the last entry of the previous log-appended line of that log.
A host that cannot be reached at start ends events as it fails status (exit 6); one lost later is said on
stderr and tried again.
Exit: 0 when interrupted or when --until is reached, 1 if watching cannot start, 2 usage, 3 --timeout,
6 a host never reached, 130 interrupted while waiting for --until.

`

var runStatuses = []model.RunStatus{
	model.StatusRunning, model.StatusPaused, model.StatusAwaitingInput, model.StatusStalled, model.StatusFailed,
	model.StatusBlocked, model.StatusCompleted, model.StatusUnknown,
}

// runEvents prints a run-added line for every run that exists when it starts, then a watch-health line,
// then one line per change until interrupted, until --until is reached (0) or --timeout passes (3).
func defineEvents(fs *flagSet) runFunc {
	var common commonFlags
	common.register(fs)
	poll := fs.Duration("poll", 0, "poll at this interval instead of using inotify (e.g. 2s, for network filesystems)")
	until := fs.String("until", "", "exit 0 once the run named by --run has this `STATUS` ("+statusList()+")")
	runArg := fs.String("run", "", "the `RUN` --until waits for: its directory, state file, or a unique id prefix")
	timeout := fs.Duration("timeout", 0, "exit 3 if still running after this long (0: no limit)")
	return func(paths []string, stdout, stderr io.Writer) int {
		return runEvents(paths, common, poll, until, runArg, timeout, stdout, stderr)
	}
}

func runEvents(paths []string, common commonFlags, poll *time.Duration, until, runArg *string, timeout *time.Duration, stdout, stderr io.Writer) int {
	defer gcpolicy.Events.Apply(common.getenv)()
	if (*until == "") != (*runArg == "") {
		return usageError(stderr, "events", "--until and --run go together")
	}
	if *until != "" && !knownStatus(*until) {
		return usageError(stderr, "events", "--until %q is not a run status (%s)", *until, statusList())
	}
	if *timeout < 0 || *poll < 0 {
		return usageError(stderr, "events", "durations must not be negative")
	}
	cfg, err := common.resolve(config.Overrides{Poll: *poll})
	if err != nil {
		return configError(stderr, "events", err)
	}
	// The config's poll is checked where it is read; without --poll it is what the local watch uses.
	if err := watch.CheckPoll(*poll); err != nil {
		return usageError(stderr, "events", "--%v", err)
	}
	roots, code := openRoots(common.getenv, "events", paths, cfg, common.given(*poll), stderr)
	if roots == nil {
		return code
	}
	src, err := roots.Watch(false)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch events: %v\n", err)
		return exitEventsFailed
	}
	defer src.Close()
	// Before the first line, so that a signal sent once a line is seen is always handled here.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	// Only for the runwatch that asked over ssh, and so reads it (remote.CompactEnv).
	compact := stdinLinked(common.getenv) && common.getenv(remote.CompactEnv) == "1"
	st := &eventStream{em: &eventWriter{out: stdout, known: map[string]model.Run{}, compact: compact},
		target: newRunTarget(*runArg, *until), hosts: newHostsSaid("events"), beats: stdinLinked(common.getenv)}
	if code, done := st.start(src, stderr); done {
		return code
	}
	done := make(chan struct{})
	defer close(done)
	gone := readerGone(stdout, done)
	stdinGone := stdinEnded(common.getenv)
	// For the runwatch that follows this one over ssh (remote.StdinLinkEnv), a line every
	// remote.HeartbeatEvery, so it can tell a quiet host from one that lags (issue 35). A person's events
	// prints none.
	var beat <-chan time.Time
	var hold *updateHold
	if stdinGone != nil {
		hold = newUpdateHold(remote.LinkedUpdateEvery)
		t := time.NewTicker(remote.HeartbeatEvery)
		defer t.Stop()
		beat = t.C
	}
	var deadline <-chan time.Time
	if *timeout > 0 {
		t := time.NewTimer(*timeout)
		defer t.Stop()
		deadline = t.C
	}
	for {
		var code int
		var end bool
		select {
		case ru := <-src.RemoteUpdates():
			code, end = st.remote(ru, stderr)
		case u, ok := <-src.LocalUpdates():
			if !ok {
				return exitOK
			}
			if hold != nil {
				if u, ok = hold.add(u, time.Now()); !ok {
					continue
				}
			}
			code, end = st.local(u, stderr)
		case now := <-hold.due():
			code, end = st.local(hold.flush(now), stderr)
		case <-gone:
			return exitOK // nobody reads: the pipe or connection the lines went to is gone
		case <-stdinGone:
			return exitOK // the runwatch that asked over ssh is gone (remote.StdinLinkEnv)
		case now := <-beat:
			if err := st.em.line(heartbeatEvent{Type: "heartbeat", At: now.UTC()}); err != nil {
				return st.em.failed(stderr, err)
			}
		case <-deadline:
			fmt.Fprintf(stderr, "runwatch events: timed out after %s\n", *timeout)
			return exitEventsTimeout
		case <-sigs:
			if st.target != nil {
				return exitEventsInterrupted
			}
			return exitOK
		}
		if end {
			return code
		}
	}
}

// newRunTarget is the run --run names and the status --until waits for, or nil.
func newRunTarget(runArg, until string) *runTarget {
	if runArg == "" {
		return nil
	}
	target := &runTarget{arg: runArg, status: model.RunStatus(until)}
	if abs, err := filepath.Abs(runArg); err == nil {
		if _, err := os.Stat(abs); err == nil {
			target.path = abs
		}
	}
	return target
}

// eventStream writes events' lines: the runs, their attention transitions, and whether --until is reached.
type eventStream struct {
	em     *eventWriter
	att    *attentionWriter
	target *runTarget
	hosts  *hostsSaid
	// beats: a runwatch follows this one over ssh (remote.StdinLinkEnv) and is told it keeps up.
	beats bool
}

// start writes the first snapshot and the watcher's health; done says the command ends there, with code.
func (st *eventStream) start(src *fleet.Watch, stderr io.Writer) (code int, done bool) {
	now := time.Now()
	snap := src.Snapshot()
	if st.target != nil {
		// Refused before any line is printed, as brief refuses the same RUN: no one run, exit 1, no usage.
		if err := st.target.check(snap); err != nil {
			fmt.Fprintf(stderr, "runwatch events: %v\n", err)
			return exitNoRun, true
		}
	}
	// The runs at start go out a batchBytes at a time, not a write each: over ssh each write was a read and a
	// packet for sshd, the ssh here and the runwatch reading it (issue 35).
	err := st.em.batched(func() error {
		for _, r := range snap {
			if err := st.em.runLine(r, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return st.em.failed(stderr, err), true
	}
	if st.target != nil {
		if !st.target.matched {
			fmt.Fprintf(stderr, "runwatch events: no run matches %q yet; waiting for it to appear\n", st.target.arg)
		}
	}
	st.att = newAttentionWriter(snap, now)
	// The first heartbeat goes before the first watch-health line, with which the runwatch that follows
	// takes this one as live: said after it, a runwatch stopped between the two was never judged lagging,
	// as it had not said it beats (remote.LagAfter).
	if st.beats {
		if err := st.em.line(heartbeatEvent{Type: "heartbeat", At: now.UTC()}); err != nil {
			return st.em.failed(stderr, err), true
		}
	}
	if src.Local != nil {
		if err := st.em.healthLine(src.Local.Health(), now); err != nil {
			return st.em.failed(stderr, err), true
		}
	}
	if st.reached() {
		return exitOK, true
	}
	return 0, false
}

func (st *eventStream) reached() bool { return st.target != nil && st.target.reached(st.em.known) }

// remote writes a host's update; end says the command ends, with code.
func (st *eventStream) remote(ru remote.Update, stderr io.Writer) (code int, end bool) {
	if err := st.em.update(ru.Update); err != nil {
		return st.em.failed(stderr, err), true
	}
	if ru.Initial {
		// What a host has when first reached is the state at start, as the local snapshot is: primed, not
		// reported as runs that just entered needing you.
		st.att.tracker.Prime(model.RunValues(ru.Changed), ru.At)
	} else if err := st.att.lines(st.em, ru.Update); err != nil {
		return st.em.failed(stderr, err), true
	}
	if err := st.em.hostLines(ru.Hosts, ru.At); err != nil {
		return st.em.failed(stderr, err), true
	}
	if code, end := st.hosts.update(stderr, ru.Hosts); end {
		return code, true
	}
	return exitOK, st.reached()
}

// local writes the local watcher's update; end says the command ends, with code.
func (st *eventStream) local(u watch.Update, stderr io.Writer) (code int, end bool) {
	if err := st.em.update(u); err != nil {
		return st.em.failed(stderr, err), true
	}
	// The local watcher's health only: a host's batch carries none (its health is a host-health line), and
	// taking its empty one for the watcher's printed a watch-health line with no mode between two others.
	if err := st.em.healthLine(u.Health, u.At); err != nil {
		return st.em.failed(stderr, err), true
	}
	if err := st.att.lines(st.em, u); err != nil {
		return st.em.failed(stderr, err), true
	}
	return exitOK, st.reached()
}

func statusList() string {
	names := make([]string, len(runStatuses))
	for i, s := range runStatuses {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

func knownStatus(s string) bool {
	for _, st := range runStatuses {
		if string(st) == s {
			return true
		}
	}
	return false
}

// runTarget is the run --until waits for. It is matched against the watcher's runs, so a run that does not
// exist yet can be waited for.
type runTarget struct {
	arg     string
	path    string // arg as an absolute path, when it names something on disk
	status  model.RunStatus
	matched bool
}

// check rejects a RUN that names several runs (state.MatchRun): waiting on whichever changes first would be
// a guess.
func (t *runTarget) check(runs []model.Run) error {
	hits := t.named(runs)
	if len(hits) > 1 {
		names := make([]string, len(hits))
		for i, r := range hits {
			names[i] = r.ID + " (" + r.Dir + ")"
		}
		sort.Strings(names)
		return fmt.Errorf("--run %q matches %d runs:\n  %s", t.arg, len(hits), strings.Join(names, "\n  "))
	}
	t.matched = len(hits) > 0
	return nil
}

// named is the runs of runs that the target names, by the rule of every command that takes RUN.
func (t *runTarget) named(runs []model.Run) []model.Run {
	return state.MatchRun(runs, t.arg, t.path, func(r model.Run) state.RunName { return state.RunNameOf(&r) })
}

// reached reports whether the one run the target names has the awaited status; with several nothing is
// reached.
func (t *runTarget) reached(known map[string]model.Run) bool {
	keys := make([]string, 0, len(known))
	for k := range known {
		keys = append(keys, k)
	}
	pick := state.MatchRun(keys, t.arg, t.path, func(k string) state.RunName { r := known[k]; return state.RunNameOf(&r) })
	return len(pick) == 1 && known[pick[0]].Status == t.status
}

// eventWriter prints one JSON object per line, each with a single Write so a pipe reader gets whole lines
// as soon as they happen.
type eventWriter struct {
	out        io.Writer
	known      map[string]model.Run // by Run.Key, as last printed
	lastHealth *watch.Health
	lastHosts  map[string]model.HostHealth
	// lastEntry is the last entry printed per log, which continuation lines written later belong to.
	lastEntry map[string]model.LogEntry
	// batch holds an update's lines while it is written, so they go out in few writes (update).
	batch    []byte
	batching bool
	// compact writes runs in model.Run.AppendWireJSON's form, for a runwatch that asked (remote.CompactEnv).
	compact bool
}

// batchBytes is how much of an update's lines is held before it is written.
const batchBytes = 256 << 10

// withContinuation gives a batch's leading continuation lines back to their entry: the one printed last for
// this log, or (an entry written before watching began) the one read back from the file. No entry without a
// time is printed.
func (e *eventWriter) withContinuation(path string, entries []model.LogEntry) ([]model.LogEntry, bool) {
	if len(entries) == 0 || entries[0].HasTime {
		return entries, false
	}
	head, ok := e.lastEntry[path]
	if !ok {
		head, ok = runlog.EntryBefore(path, entries[0].Offset)
	}
	if !ok {
		return entries, false
	}
	head.Continuation = append(append(append([]string(nil), head.Continuation...), entries[0].Message), entries[0].Continuation...)
	head.Fields = append(append([]model.KV(nil), head.Fields...), entries[0].Fields...)
	return append([]model.LogEntry{head}, entries[1:]...), true
}

// hostLines prints host-health for each remote host whose state or error changed.
func (e *eventWriter) hostLines(hosts []model.HostHealth, at time.Time) error {
	if e.lastHosts == nil {
		e.lastHosts = map[string]model.HostHealth{}
	}
	for _, h := range hosts {
		if old, ok := e.lastHosts[h.Host]; ok && old.State == h.State && old.Error == h.Error {
			continue
		}
		e.lastHosts[h.Host] = h
		if err := e.line(hostEvent{Type: "host-health", At: at.UTC(), Host: h}); err != nil {
			return err
		}
	}
	return nil
}

type runEvent struct {
	Type    string     `json:"type"`
	At      time.Time  `json:"at"`
	Changed []string   `json:"changed,omitempty"`
	Run     *model.Run `json:"run,omitempty"`
	// run-removed names the run it last knew.
	StatePath string `json:"state_path,omitempty"`
	ID        string `json:"id,omitempty"`
	Dir       string `json:"dir,omitempty"`
	Host      string `json:"host,omitempty"`
}

// heartbeatEvent says the runwatch is there and keeping up, to another runwatch that follows it over ssh.
type heartbeatEvent struct {
	Type string    `json:"type"`
	At   time.Time `json:"at"`
}

type hostEvent struct {
	Type string           `json:"type"`
	At   time.Time        `json:"at"`
	Host model.HostHealth `json:"host"`
}

type logEvent struct {
	Type      string           `json:"type"`
	At        time.Time        `json:"at"`
	Path      string           `json:"path"`
	StatePath string           `json:"state_path,omitempty"`
	ID        string           `json:"id,omitempty"`
	Entries   []model.LogEntry `json:"entries"`
	Truncated bool             `json:"truncated,omitempty"`
	Rotated   bool             `json:"rotated,omitempty"`
	Skipped   int              `json:"skipped,omitempty"`
	// Continued: entries[0] is the previous line's last entry of this log again (same offset and time), now
	// with the continuation lines a later write appended to it (docs/FORMATS.md C.1); it replaces that entry.
	Continued bool `json:"continued,omitempty"`
}

type healthEvent struct {
	Type   string       `json:"type"`
	At     time.Time    `json:"at"`
	Health watch.Health `json:"health"`
}

func (e *eventWriter) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	// Every line names the protocol, whatever its type, so another runwatch reading this stream over ssh
	// (package remote) knows from the first line whether it can understand this one.
	if len(b) > 2 && b[0] == '{' {
		b = append([]byte(fmt.Sprintf(`{"protocol":%d,`, remote.ProtocolVersion)), b[1:]...)
	}
	return e.write(append(b, '\n'))
}

// write writes one whole line, made safe for a terminal, or adds it to the batch being written.
func (e *eventWriter) write(line []byte) error {
	out := termsafe.JSON(line)
	if e.batching {
		e.batch = append(e.batch, out...)
		if len(e.batch) < batchBytes {
			return nil
		}
		out, e.batch = e.batch, e.batch[:0]
	}
	_, err := e.out.Write(out)
	return err
}

func (e *eventWriter) failed(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "runwatch events: %v\n", err)
	return exitEventsFailed
}

// runLine prints run-added for a run not seen before, else run-changed naming the top-level fields that
// differ; a re-read that changed nothing prints nothing.
func (e *eventWriter) runLine(r model.Run, at time.Time) error {
	r = normalizeRun(r)
	old, seen := e.known[r.Key()]
	e.known[r.Key()] = r
	if !seen {
		return e.runEventLine("run-added", at, nil, &r)
	}
	changed, err := changedFields(old, r)
	if err != nil || len(changed) == 0 {
		return err
	}
	return e.runEventLine("run-changed", at, changed, &r)
}

// runEventLine writes what line writes of runEvent{Type: typ, At: at, Changed: changed, Run: r}, with the
// run by its own writer: through encoding/json its bytes were checked and compacted once more, a tenth of
// what a host's runwatch spends on its first 1,000 runs (issue 35; TestRunEventLineAsLine holds the bytes
// the same).
func (e *eventWriter) runEventLine(typ string, at time.Time, changed []string, r *model.Run) error {
	b := make([]byte, 0, 8<<10)
	b = append(b, `{"protocol":`...)
	b = strconv.AppendInt(b, remote.ProtocolVersion, 10)
	if e.compact {
		b = append(b, `,"compact":true`...)
	}
	b = append(b, `,"type":"`...)
	b = append(b, typ...) // one of ours: nothing to escape
	b = append(b, `","at":"`...)
	b = at.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if len(changed) > 0 {
		names, err := json.Marshal(changed)
		if err != nil {
			return err
		}
		b = append(append(b, `,"changed":`...), names...)
	}
	b = append(b, `,"run":`...)
	var err error
	if e.compact {
		b, err = r.AppendWireJSON(b)
	} else {
		b, err = r.AppendJSON(b)
	}
	if err != nil {
		return err
	}
	return e.write(append(b, '}', '\n'))
}

func (e *eventWriter) healthLine(h watch.Health, at time.Time) error {
	// LastChange and the watch count move with every batch; a line is for a change in how well we see.
	if e.lastHealth != nil && e.lastHealth.Mode == h.Mode && e.lastHealth.Err == h.Err {
		return nil
	}
	e.lastHealth = &h
	return e.line(healthEvent{Type: "watch-health", At: at.UTC(), Health: h})
}

// update writes an update's lines in one write (or one a batchBytes): written one at a time, a host whose
// logs flood sent a runwatch reading it over ssh a pipe read, a batch and a wake-up a line (issue 35).
func (e *eventWriter) update(u watch.Update) error {
	return e.batched(func() error { return e.updateLines(u) })
}

// batched writes the lines write makes in f in one write a batchBytes.
func (e *eventWriter) batched(f func() error) error {
	e.batching, e.batch = true, e.batch[:0]
	err := f()
	e.batching = false
	if len(e.batch) > 0 {
		if _, werr := e.out.Write(e.batch); err == nil {
			err = werr
		}
	}
	return err
}

func (e *eventWriter) updateLines(u watch.Update) error {
	at := u.At.UTC()
	for _, key := range u.Removed {
		old, ok := e.known[key]
		delete(e.known, key)
		ev := runEvent{Type: "run-removed", At: at, StatePath: key}
		if ok {
			ev.StatePath, ev.ID, ev.Dir = old.StatePath, old.ID, old.Dir
			if old.Remote != nil {
				ev.Host = old.Remote.Host
			}
		}
		if err := e.line(ev); err != nil {
			return err
		}
	}
	for _, r := range u.Changed {
		if err := e.runLine(*r, at); err != nil {
			return err
		}
	}
	for _, a := range u.Appended {
		if a.Truncated || a.Rotated {
			delete(e.lastEntry, a.Path)
		}
		entries, continued := e.withContinuation(a.Path, a.Entries)
		ev := logEvent{Type: "log-appended", At: at, Path: a.Path, Entries: entries, Truncated: a.Truncated,
			Rotated: a.Rotated, Skipped: a.Skipped, Continued: continued}
		if ev.Entries == nil {
			ev.Entries = []model.LogEntry{}
		}
		if n := len(entries); n > 0 && entries[n-1].HasTime {
			if e.lastEntry == nil {
				e.lastEntry = map[string]model.LogEntry{}
			}
			e.lastEntry[a.Path] = entries[n-1]
		}
		if r, ok := e.logOwner(a.Path); ok {
			ev.StatePath, ev.ID = r.StatePath, r.ID
		}
		if err := e.line(ev); err != nil {
			return err
		}
	}
	return nil
}

func (e *eventWriter) logOwner(path string) (model.Run, bool) {
	for _, r := range e.known {
		if r.Log == nil {
			continue
		}
		// A remote run's log arrives named ssh://host/path, so it can never be taken for a local file.
		if r.Log.Path == path || (r.Remote != nil && model.RemoteKey(r.Remote.Host, r.Log.Path) == path) {
			return r, true
		}
	}
	return model.Run{}, false
}

// normalizeRun gives a run the same JSON shape as status --json (empty lists as [], not null), so that a
// consumer can treat both outputs alike and "changed" never reports null-versus-empty.
func normalizeRun(r model.Run) model.Run {
	return status.Snapshot([]model.Run{r}, model.Env{Host: "-"}).Runs[0]
}

// changedFields lists the top-level JSON fields of a run whose values differ.
func changedFields(a, b model.Run) ([]string, error) {
	fa, err := jsonFields(a)
	if err != nil {
		return nil, err
	}
	fb, err := jsonFields(b)
	if err != nil {
		return nil, err
	}
	var out []string
	for k, v := range fb {
		if !bytes.Equal(fa[k], v) {
			out = append(out, k)
		}
	}
	for k := range fa {
		if _, ok := fb[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

func jsonFields(r model.Run) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	return m, json.Unmarshal(b, &m)
}

// stdinLinked says whether a runwatch follows this one over ssh, linked to its stdin (remote.StdinLinkEnv).
func stdinLinked(getenv func(string) string) bool { return getenv(remote.StdinLinkEnv) == "1" }

// stdinEnded is closed when stdin ends, for a runwatch events that another runwatch runs over ssh and
// that must end with it (remote.StdinLinkEnv); nil otherwise, since a person's `events </dev/null` or
// `ssh -n host runwatch events` must go on. getenv is the environment the command runs in.
func stdinEnded(getenv func(string) string) <-chan struct{} {
	if !stdinLinked(getenv) {
		return nil
	}
	ended := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(ended)
	}()
	return ended
}
