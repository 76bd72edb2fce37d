package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"runwatch/model"
	"runwatch/watch"
)

// State is how well runwatch sees a host.
type State = model.HostState

const (
	StateConnecting   = model.HostConnecting
	StateLive         = model.HostLive
	StateReconnecting = model.HostReconnecting
	StateFailed       = model.HostFailed
)

// HostHealth is one host's connection.
type HostHealth = model.HostHealth

// Update is one batch from a host, in watch.Update's shape: Removed holds Run.Key values. Hosts is every
// host's health after it.
// Its Initial marks the runs a host had when runwatch first reached it: what is there at start-up, not
// news (a notifier primes on them, as on the local snapshot).
type Update struct {
	watch.Update
	Hosts []HostHealth
}

// Merge folds a later Update into u, so that applying u equals applying both in order. Runs are told apart
// by Run.Key, as Removed names them: two hosts often hold the same paths.
func (u *Update) Merge(later Update) {
	gone := make(map[string]bool, len(later.Changed)+len(later.Removed))
	for _, r := range later.Changed {
		gone[r.Key()] = true
	}
	for _, k := range later.Removed {
		gone[k] = true
	}
	if len(gone) > 0 {
		u.Changed = slices.DeleteFunc(u.Changed, func(r *model.Run) bool { return gone[r.Key()] })
		u.Removed = slices.DeleteFunc(u.Removed, func(k string) bool { return gone[k] })
	}
	u.Changed = append(u.Changed, later.Changed...)
	u.Removed = append(u.Removed, later.Removed...)
	u.Appended = append(u.Appended, later.Appended...)
	u.Health, u.At, u.Hosts = later.Health, later.At, later.Hosts
	u.Initial = u.Initial && later.Initial
}

// Backoff bounds between connection attempts.
const (
	firstBackoff = 500 * time.Millisecond
	maxBackoff   = 30 * time.Second
	// stableFor is how long a connection must have lasted for its end to start the backoff over.
	stableFor = maxBackoff
	// firstLineWithin is how long a new connection may take to say its first line.
	firstLineWithin = 20 * time.Second
	// maxLine bounds one JSON line: a run with thousands of stages is large (its state file is at most
	// 1 MiB), an endless line is an attack. A longer line is read past, not kept, and fails the host.
	maxLine = 16 << 20
	// keepLineBuffer is the most room kept for the next line once one is read.
	keepLineBuffer = 1 << 20
	// maxHeld bounds what one host's runs may make us hold, summed over the lines of the runs it has now:
	// every consumer keeps a copy of each, so this is what a host that sends run after run costs.
	maxHeld = 64 << 20
)

// Watcher follows remote roots: one ssh process per connection, reconnecting with backoff.
type Watcher struct {
	ssh     SSH
	updates chan Update
	cancel  context.CancelFunc
	done    sync.WaitGroup
	// closeOnce closes updates once every sender has stopped.
	closeOnce sync.Once

	mu     sync.Mutex
	health map[string]HostHealth
	order  []string

	judge judgeElsewhere
}

// Options pass the local command line's watching flags on to every remote runwatch.
type Options struct {
	// Args are added to `runwatch events` on each host (e.g. --stale-after 10m).
	Args []string
	// Backoff overrides the first retry delay (tests).
	Backoff time.Duration
	// LagAfter overrides LagAfter (tests).
	LagAfter time.Duration
	// Elsewhere, when set, judges here the locks a host could only call unknown because they name another
	// machine that runwatch here reaches; they are judged again every JudgeEvery while a judgement among
	// them can change with time (elsewhere.go's judgeAgain).
	Elsewhere  *Elsewhere
	JudgeEvery time.Duration
	StaleAfter time.Duration
}

// Watch starts following roots. Updates arrive on Updates until Close.
func Watch(s SSH, roots []Root, opts Options) *Watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watcher{ssh: s, updates: make(chan Update, 64), cancel: cancel, health: map[string]HostHealth{}}
	w.judge = judgeElsewhere{e: opts.Elsewhere, staleAfter: opts.StaleAfter, held: map[string]heldRun{},
		wake: make(chan struct{}, 1), after: time.After}
	if opts.Elsewhere != nil {
		every := opts.JudgeEvery
		if every <= 0 {
			every = 2 * time.Second
		}
		w.judge.watching = opts.Elsewhere.Watching(every)
		w.done.Add(1)
		go func() {
			defer w.done.Done()
			w.judgeAgain(ctx, every)
		}()
	}
	for _, c := range group(roots) {
		w.order = append(w.order, c.label)
		w.health[c.label] = HostHealth{Host: c.label, State: StateConnecting, Since: time.Now()}
	}
	for _, c := range group(roots) {
		w.done.Add(1)
		go func() {
			defer w.done.Done()
			w.follow(ctx, c, opts)
		}()
	}
	return w
}

// Updates delivers batches in the order each host sent them.
func (w *Watcher) Updates() <-chan Update { return w.updates }

// Hosts is every host's health now, in the order the roots were given.
func (w *Watcher) Hosts() []HostHealth {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]HostHealth, 0, len(w.order))
	for _, h := range w.order {
		out = append(out, w.health[h])
	}
	return out
}

// Close stops every ssh process, waits for them, and closes Updates.
func (w *Watcher) Close() {
	w.cancel()
	w.done.Wait()
	w.closeOnce.Do(func() { close(w.updates) })
}

type connection struct {
	label string
	root  Root // the first root; Path is not used
	paths []string
	roots []Root
}

// group puts the roots of one host (same destination and port) on one connection.
func group(roots []Root) []connection {
	var out []connection
	idx := map[string]int{}
	for _, r := range roots {
		i, ok := idx[r.Conn()]
		if !ok {
			i = len(out)
			idx[r.Conn()] = i
			out = append(out, connection{label: r.Label(), root: r})
		}
		out[i].paths = append(out[i].paths, r.Path)
		out[i].roots = append(out[i].roots, r)
	}
	return out
}

func (w *Watcher) setHealth(label string, f func(*HostHealth)) HostHealth {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.health[label]
	f(&h)
	w.health[label] = h
	return h
}

func (w *Watcher) send(ctx context.Context, u Update) bool {
	u.Hosts = w.Hosts()
	if u.At.IsZero() {
		u.At = time.Now()
	}
	select {
	case w.updates <- u:
		return true
	case <-ctx.Done():
		return false
	}
}

// follow keeps one host's stream going until ctx ends: connect, read, and on any failure mark its runs
// stale, say why, wait, and connect again.
func (w *Watcher) follow(ctx context.Context, c connection, opts Options) {
	backoff := opts.Backoff
	if backoff <= 0 {
		backoff = firstBackoff
	}
	delay := backoff
	known := map[string]model.Run{} // by Key, as last received
	everLive := false
	var masterDone chan struct{} // closed when this connection's ControlMaster exits
	for attempt := 0; ctx.Err() == nil; attempt++ {
		if attempt > 0 {
			now := time.Now()
			at := now.Add(delay)
			w.send(ctx, Update{})
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(at)):
			}
			delay = min(delay*2, maxBackoff)
		}
		w.setHealth(c.label, func(h *HostHealth) {
			if attempt > 0 {
				h.State = StateReconnecting
			}
			h.RetryAt = nil
		})
		w.send(ctx, Update{})
		if !masterUp(masterDone) {
			// Best effort: without a master, actions connect on their own.
			if m, err := w.ssh.MasterCmd(ctx, c.root); err == nil && m != nil {
				done := make(chan struct{})
				masterDone = done
				go func() { _ = m.Wait(); close(done) }()
			}
		}
		started := time.Now()
		wasLive, err := w.stream(ctx, c, opts, known, !everLive)
		everLive = everLive || wasLive
		if ctx.Err() != nil {
			return
		}
		if wasLive && time.Since(started) >= stableFor {
			// Only a connection that held starts the backoff over: one that goes live and fails at once,
			// again and again, is a failing host, and is tried less and less often.
			delay = backoff
		}
		now := time.Now()
		retry := now.Add(delay)
		state := StateReconnecting
		var refused *hostFailure
		if errors.As(err, &refused) {
			state = StateFailed
			delay = maxBackoff
			retry = now.Add(delay)
		}
		w.setHealth(c.label, func(h *HostHealth) {
			h.State, h.Error, h.Since, h.RetryAt = state, err.Error(), now, &retry
		})
		// What the host showed last stays on screen, marked with when it stopped being current; runs marked
		// by an earlier try are on screen so already (sent again with every try, a host of 1,000 runs staying
		// down had the dashboard take all of them in again each time).
		var stale []model.Run
		for k, r := range known {
			if r.Remote.StaleSince == nil {
				ref := *r.Remote // a copy: the run already sent shares the old one
				ref.StaleSince = &now
				r.Remote = &ref
				known[k] = r
				stale = append(stale, r)
			}
		}
		sortRuns(stale)
		w.judge.send(c.label, stale, func(judged []model.Run) bool {
			return w.send(ctx, Update{Update: watch.Update{Changed: model.RunPointers(judged), At: now}})
		})
	}
}

// hostFailure ends a host's stream for a reason a reconnect will not mend by itself (its runwatch is too
// old; it sent more than runwatch holds from a host): the host is marked failed, with why, and tried again
// only at the longest backoff.
type hostFailure struct{ msg string }

func (e *hostFailure) Error() string { return e.msg }

// wireEvent is one line of `runwatch events`, whatever its type.
type wireEvent struct {
	Protocol  int              `json:"protocol"`
	Type      string           `json:"type"`
	At        time.Time        `json:"at"`
	Run       *model.Run       `json:"run"`
	StatePath string           `json:"state_path"`
	Path      string           `json:"path"`
	Entries   []model.LogEntry `json:"entries"`
	Truncated bool             `json:"truncated"`
	Rotated   bool             `json:"rotated"`
	Skipped   int              `json:"skipped"`
	Health    *watch.Health    `json:"health"`
}

// stream runs one `runwatch events` on the host and feeds its lines into updates until it ends. It returns
// whether the host got as far as live, and why it ended.
func (w *Watcher) stream(ctx context.Context, c connection, opts Options, known map[string]model.Run, first bool) (bool, error) {
	args := append([]string{"events"}, opts.Args...)
	args = append(args, "--")
	args = append(args, c.paths...)
	if err := CheckProgram(w.ssh.Remote); err != nil {
		return false, &hostFailure{msg: c.label + ": " + err.Error()}
	}
	cmd := w.ssh.StreamCmd(ctx, c.root, args...)
	stdout, err := streamStdout(cmd)
	if err != nil {
		return false, err
	}
	// Never written to: held open while the stream lives, its end is the remote runwatch's cue to stop.
	if _, err := cmd.StdinPipe(); err != nil {
		return false, err
	}
	stderr := &tailBuffer{max: 8 << 10}
	cmd.Stderr = stderr
	if err := startChild(cmd); err != nil {
		return false, fmt.Errorf("%s: cannot start ssh: %v", c.label, err)
	}
	// A connection that says nothing at all is ended and tried again: under load an attempt was seen to
	// hang before its first line with nothing to say why (ssh's own keepalives only start once connected).
	answered := make(chan struct{})
	var silent atomic.Bool
	go func() {
		select {
		case <-answered:
		case <-ctx.Done():
		case <-time.After(firstLineWithin):
			silent.Store(true)
			_ = cmd.Cancel()
		}
	}()
	// A host whose runwatch says heartbeats and then falls silent lags (LagAfter): its stream is ended, so
	// its runs are marked stale and it is connected again.
	lag := newLagWatch(opts.LagAfter, func() { _ = cmd.Cancel() })
	defer lag.stop()
	lag.answered = func() { closeOnce(answered) }
	live, readErr := w.read(ctx, c, stdout, known, first, lag)
	closeOnce(answered)
	lag.stop()
	if readErr != nil {
		_ = cmd.Cancel()
	}
	waitErr := cmd.Wait()
	if lag.lagged.Load() && ctx.Err() == nil {
		return live, fmt.Errorf("%s: its runwatch said nothing for %s (it says something every %s): it lags; its runs are as last seen",
			c.label, lag.after, HeartbeatEvery)
	}
	if readErr != nil && ctx.Err() == nil {
		// What the stream did wrong is the news, not that ssh then ended because it was stopped for it.
		var hf *hostFailure
		if errors.As(readErr, &hf) {
			return live, readErr
		}
		return live, fmt.Errorf("%s: %v", c.label, readErr)
	}
	code := 0
	var ee interface{ ExitCode() int }
	if errors.As(waitErr, &ee) {
		code = ee.ExitCode()
	}
	if silent.Load() {
		return live, fmt.Errorf("%s: no answer within %s", c.label, firstLineWithin)
	}
	if code == 0 && readErr == nil {
		return live, fmt.Errorf("%s: the remote runwatch stopped", c.label)
	}
	msg := Explain(c.root, code, stderr.Bytes())
	if Predates(code, stderr.Bytes()) {
		return live, &hostFailure{msg: msg}
	}
	if code != 255 && (code == 2 || strings.Contains(msg, "flag provided but not defined") || strings.Contains(msg, "not a runwatch command")) {
		return live, &hostFailure{msg: fmt.Sprintf("%s: its runwatch is older than this one (it does not know events as this one runs it): upgrade the one on %s (%s)",
			c.label, c.label, InstallHint(c.root))}
	}
	return live, errors.New(msg)
}

// streamStdout is the pipe a stream's ssh writes the host's lines to, made to hold streamPipeBytes.
func streamStdout(cmd *exec.Cmd) (io.ReadCloser, error) {
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		growPipe(stdout)
	}
	return stdout, err
}

// lagWatch ends a stream whose runwatch has said a heartbeat and then nothing for after: its timer runs
// only while a line is waited for, never while the lines read are handed on (a dashboard busy, or
// stopped, must not take its hosts for lagging).
type lagWatch struct {
	after    time.Duration
	timer    *time.Timer
	beats    bool
	lagged   atomic.Bool
	answered func()
}

func newLagWatch(after time.Duration, end func()) *lagWatch {
	if after <= 0 {
		after = LagAfter
	}
	l := &lagWatch{after: after, answered: func() {}}
	l.timer = time.AfterFunc(after, func() {
		l.lagged.Store(true)
		end()
	})
	l.timer.Stop()
	return l
}

// waiting is said before the stream is read from, heard after each line.
func (l *lagWatch) waiting() {
	if l.beats {
		l.timer.Reset(l.after)
	}
}

func (l *lagWatch) heard(heartbeat bool) {
	l.timer.Stop()
	l.beats = l.beats || heartbeat
	l.answered()
}

func (l *lagWatch) stop() { l.timer.Stop() }

// read takes the stream's lines until it ends, telling lag when it waits and what it heard.
func (w *Watcher) read(ctx context.Context, c connection, r io.Reader, known map[string]model.Run, firstContact bool, lag *lagWatch) (bool, error) {
	lines := &lineReader{br: bufio.NewReaderSize(r, 256<<10)}
	names := newWireNames()
	live := false
	// After a reconnect the stream starts with run-added for every run the host has now; those not
	// re-added by the first watch-health line are gone.
	readded := map[string]bool{}
	var pending Update
	sentLive := false // a batch up to and including the first watch-health line has gone out
	healthChanged := false
	flush := func() bool {
		// An empty batch still goes out when the host's health changed: every consumer learns the health
		// only from batches (a host gone live with nothing else to say was never shown live).
		if len(pending.Changed)+len(pending.Removed)+len(pending.Appended) == 0 && live && !healthChanged {
			return true
		}
		healthChanged = false
		pending.Initial = firstContact && !sentLive
		sentLive = live
		ok := w.judge.send(c.label, model.RunValues(pending.Changed), func(judged []model.Run) bool {
			pending.Changed = model.RunPointers(judged)
			return w.send(ctx, pending)
		})
		pending = Update{}
		return ok
	}
	first := true
	held := map[string]int{} // by Run.Key: the size of the line each known run came in
	heldTotal := 0
	for {
		lag.waiting()
		line, err := lines.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				flush()
				return live, nil
			}
			var long *lineTooLong
			if errors.As(err, &long) {
				return live, &hostFailure{msg: c.label + ": " + long.Error()}
			}
			return live, err
		}
		now := time.Now()
		var ev wireEvent
		if jerr := decodeWire(line, &ev, names); jerr != nil {
			return live, fmt.Errorf("invalid line from the remote runwatch (%v): %s", jerr, quoteStart(line))
		}
		lag.heard(ev.Type == "heartbeat")
		if first {
			first = false
			if msg, ok := protocolSkew(c.root, ev.Protocol); !ok {
				return live, &hostFailure{msg: msg}
			}
		}
		w.setHealth(c.label, func(h *HostHealth) { h.LastSeen = &now })
		switch ev.Type {
		case "run-added", "run-changed":
			if ev.Run == nil {
				continue
			}
			run := *ev.Run
			run.Remote = &model.RemoteRef{Host: c.label, Root: rootFor(c, run.Dir).String()}
			k := run.Key()
			heldTotal += len(line) - held[k]
			held[k] = len(line)
			if heldTotal > maxHeld {
				return live, &hostFailure{msg: fmt.Sprintf("%s: sent more than runwatch holds from one host (%d runs in %d bytes, limit %d)",
					c.label, len(held), heldTotal, maxHeld)}
			}
			known[k] = run
			readded[k] = true
			pending.Changed = append(pending.Changed, &run)
		case "run-removed":
			k := (&model.Run{StatePath: ev.StatePath, Remote: &model.RemoteRef{Host: c.label}}).Key()
			heldTotal -= held[k]
			delete(held, k)
			delete(known, k)
			w.judge.forget(k)
			pending.Removed = append(pending.Removed, k)
		case "log-appended":
			// Only the log of a run this host has sent is kept: each log is bounded by itself, but a host
			// naming ever new paths would make every consumer hold one per path, with no run to show it on.
			owner, ok := known[(&model.Run{StatePath: ev.StatePath, Remote: &model.RemoteRef{Host: c.label}}).Key()]
			if !ok || owner.Log == nil || owner.Log.Path != ev.Path {
				continue
			}
			pending.Appended = append(pending.Appended, watch.LogAppend{Path: remoteKey(c.label, ev.Path),
				Entries: ev.Entries, Truncated: ev.Truncated, Rotated: ev.Rotated, Skipped: ev.Skipped})
		case "watch-health":
			if !live {
				live = true
				for k := range known {
					if !readded[k] {
						delete(known, k)
						w.judge.forget(k)
						pending.Removed = append(pending.Removed, k)
					}
				}
			}
			h := ev.Health
			healthChanged = true
			w.setHealth(c.label, func(hh *HostHealth) {
				if hh.State != StateLive {
					hh.Since = now
				}
				hh.State, hh.Error, hh.RetryAt, hh.Runs = StateLive, "", nil, len(known)
				if h != nil {
					hh.WatchMode, hh.WatchError = h.Mode, h.Err
				}
			})
		}
		w.setHealth(c.label, func(hh *HostHealth) { hh.Runs = len(known) })
		if lines.br.Buffered() == 0 {
			if !flush() {
				return live, ctx.Err()
			}
		}
	}
}

// remoteKey names a remote file (a run.log) so it can never be mistaken for a local path, nor for another
// host's file.
func remoteKey(host, path string) string { return model.RemoteKey(host, path) }

func rootFor(c connection, dir string) Root {
	best := c.roots[0]
	for _, r := range c.roots {
		if strings.HasPrefix(dir, r.Path) && len(r.Path) > len(best.Path) {
			best = r
		}
	}
	return best
}

// lineTooLong is a line over the limit, with how long it was (or at least was, for one that did not end
// within countUpTo).
type lineTooLong struct {
	n, limit int
	ended    bool
}

func (e *lineTooLong) Error() string {
	if !e.ended {
		return fmt.Sprintf("line too long (over %d bytes, limit %d)", e.n, e.limit)
	}
	return fmt.Sprintf("line too long (%d bytes, limit %d)", e.n, e.limit)
}

// lineReader reads a stream's lines into one buffer: the decoder copies what it keeps, and a new buffer a
// line was a third of what a dashboard allocated while its hosts' first runs came in (issue 35).
type lineReader struct {
	br  *bufio.Reader
	buf []byte
}

// next is the next line of at most maxLine bytes (readLine), valid until the next call.
func (l *lineReader) next() ([]byte, error) {
	line, err := readLine(l.br, maxLine, l.buf)
	if l.buf = line; cap(l.buf) > keepLineBuffer {
		l.buf = nil // a rare long line's room is not held for the stream's life
	}
	return line, err
}

// readLine reads one line of at most limit bytes into buf (from its start: the line read before it is
// gone). A longer one is read on without being kept, to say how long it was, for up to 16 times the limit.
func readLine(br *bufio.Reader, limit int, buf []byte) ([]byte, error) {
	buf = buf[:0]
	over := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if over == 0 && len(buf)+len(chunk) <= limit {
			buf = append(buf, chunk...)
		} else {
			if over == 0 {
				over, buf = len(buf), nil
			}
			over += len(chunk)
			if err == nil || over > 16*limit || !errors.Is(err, bufio.ErrBufferFull) {
				return nil, &lineTooLong{n: over, limit: limit, ended: err == nil}
			}
			continue
		}
		if err == nil {
			return buf, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if len(buf) > 0 && errors.Is(err, io.EOF) {
				return buf, nil
			}
			return nil, err
		}
	}
}

// quoteStart shows the start of a bad line, quoted, for the message that says it was bad.
func quoteStart(line []byte) string {
	const show = 80
	if len(line) > show {
		return strconv.Quote(string(line[:show])) + "…"
	}
	return strconv.Quote(strings.TrimRight(string(line), "\n"))
}

func sortRuns(runs []model.Run) {
	sort.Slice(runs, func(i, j int) bool { return runs[i].Key() < runs[j].Key() })
}

// tailBuffer keeps the last max bytes written: ssh's stderr can be chatty, its last lines say what failed.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.b...)
}

func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// masterUp reports whether the master whose end done signals is still running.
func masterUp(done chan struct{}) bool {
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}
