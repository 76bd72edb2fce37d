package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"runwatch/model"
	"runwatch/state/procinfo"
	"runwatch/watch"
)

// FactsCommand is the hidden subcommand a runwatch answers Facts with: `runwatch __procs [PID...]`.
const FactsCommand = "__procs"

// Facts is what FactsCommand prints: the machine's own host name (what the locks its processes write say)
// and the facts of the processes asked about, by which another runwatch judges a lock held there.
type Facts struct {
	Protocol int        `json:"protocol"`
	Host     string     `json:"host"`
	Procs    []ProcFact `json:"procs"`
}

// ProcFact is one process as its own machine sees it.
type ProcFact struct {
	PID          int        `json:"pid"`
	Alive        bool       `json:"alive"`
	KernelThread bool       `json:"kernel_thread,omitempty"`
	Started      *time.Time `json:"started,omitempty"`
}

// LocalFacts answers FactsCommand on this machine.
func LocalFacts(pids []int) Facts {
	host, _ := os.Hostname()
	f := Facts{Protocol: ProtocolVersion, Host: host, Procs: []ProcFact{}}
	var sys procinfo.System
	for _, pid := range pids {
		p := ProcFact{PID: pid, Alive: sys.Alive(pid)}
		if p.Alive {
			p.KernelThread = sys.KernelThread(pid)
			if t, ok := sys.StartTime(pid); ok {
				p.Started = &t
			}
		}
		f.Procs = append(f.Procs, p)
	}
	return f
}

// ParsePIDs reads FactsCommand's arguments.
func ParsePIDs(args []string) ([]int, error) {
	var pids []int
	for _, a := range args {
		n, err := strconv.Atoi(a)
		if err != nil || n <= 0 || n > 1<<22 {
			return nil, fmt.Errorf("%q is not a process id", a)
		}
		pids = append(pids, n)
	}
	return pids, nil
}

// Elsewhere judges locks on the machines of the remote roots (model.Elsewhere): it learns each machine's
// own host name once, and asks the machine a lock names about the lock's pid, through the watcher's
// ControlMaster when there is one. On asks every time and waits for the answer; Watching answers at once.
type Elsewhere struct {
	ssh   SSH
	conns []connection
	// here is this machine's own host name: a host's runwatch calls a lock naming it unknown, and this
	// machine's process table answers for it.
	here string

	mu       sync.Mutex
	names    map[string]nameAnswer // by connection label
	facts    map[factKey]factAnswer
	learning chan struct{} // closed when the round of asking names in progress ends; nil when none is
	asking   map[factKey]bool
}

type nameAnswer struct {
	name string
	err  error
	at   time.Time
}

type factKey struct {
	label string
	pid   int
}

type factAnswer struct {
	fact ProcFact
	err  error
	at   time.Time
}

// ThisMachine is the label of a lock judged by the process table of the machine runwatch runs on.
const ThisMachine = "this machine"

// nameRetry is how soon a machine that did not say its name is asked again.
const nameRetry = 5 * time.Second

// NewElsewhere reaches the machines of roots.
func NewElsewhere(s SSH, roots []Root) *Elsewhere {
	here, _ := os.Hostname()
	return &Elsewhere{ssh: s, conns: group(roots), here: here, names: map[string]nameAnswer{}, facts: map[factKey]factAnswer{},
		asking: map[factKey]bool{}}
}

// On implements model.Elsewhere by asking now and waiting: what a command and an action's plan judge by,
// so no write rests on an older answer.
func (e *Elsewhere) On(host string, pid int) (model.ProcInspector, string, bool, string, error) {
	return e.on(host, pid, true, func(c connection) (factAnswer, bool) { return e.askFact(c, host, pid), true })
}

// on finds the machine called host (waiting for the names or not) and answers with what fact says of pid
// there (ok=false: no answer yet).
func (e *Elsewhere) on(host string, pid int, wait bool, fact func(c connection) (factAnswer, bool)) (model.ProcInspector, string, bool, string, error) {
	if e == nil || len(e.conns) == 0 {
		return nil, "", false, "", nil
	}
	if e.here != "" && model.SameHost(host, e.here) {
		return procinfo.System{}, ThisMachine, true, "", nil
	}
	c, why := e.find(host, wait)
	if c == nil {
		return nil, "", false, why, nil
	}
	if !validPID(pid) {
		return procFacts{}, c.label, true, "", nil
	}
	a, ok := fact(*c)
	switch {
	case !ok:
		return nil, c.label, true, "", model.ErrAsking
	case a.err != nil:
		return nil, c.label, true, "", a.err
	}
	return procFacts{a.fact}, c.label, true, "", nil
}

// Watching is e for a watcher, which must never wait on a network: it answers from what the machines said
// last (asking again in the background once an answer is older than maxAge), and until a machine first
// answers its locks are unknown with model.ErrAsking. The watcher's liveness timer judges them again.
func (e *Elsewhere) Watching(maxAge time.Duration) model.Elsewhere {
	if e != nil && len(e.conns) > 0 {
		e.learnNames() // from the start, so the first locks read find the names (nearly) known
	}
	return watching{e, maxAge}
}

type watching struct {
	e      *Elsewhere
	maxAge time.Duration
}

func (w watching) On(host string, pid int) (model.ProcInspector, string, bool, string, error) {
	e := w.e
	return e.on(host, pid, false, func(c connection) (factAnswer, bool) {
		k := factKey{c.label, pid}
		e.mu.Lock()
		defer e.mu.Unlock()
		a, ok := e.facts[k]
		if (!ok || time.Since(a.at) > w.maxAge) && !e.asking[k] {
			e.asking[k] = true
			go func() {
				e.askFact(c, host, pid)
				e.mu.Lock()
				delete(e.asking, k)
				e.mu.Unlock()
			}()
		}
		return a, ok
	})
}

// NameOf is the host name the machine of the connection labelled label gave, if it has answered.
func (e *Elsewhere) NameOf(label string) (string, bool) {
	if e == nil {
		return "", false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	a, ok := e.names[label]
	return a.name, ok && a.err == nil && a.name != ""
}

func validPID(pid int) bool { return pid > 0 && pid <= 1<<22 }

// askFact asks c about pid and keeps the answer.
func (e *Elsewhere) askFact(c connection, host string, pid int) factAnswer {
	f, err := e.ask(c, pid)
	a := factAnswer{err: err, at: time.Now()}
	switch {
	case err != nil:
	case !model.SameHost(f.Host, host):
		// The connection now reaches another machine (an alias moved): its processes say nothing here.
		a.err = fmt.Errorf("%s is now %s", c.label, f.Host)
	case len(f.Procs) != 1 || f.Procs[0].PID != pid:
		a.err = fmt.Errorf("%s answered for other processes than pid %d", c.label, pid)
	default:
		a.fact = f.Procs[0]
	}
	e.mu.Lock()
	e.keepFact(factKey{c.label, pid}, a)
	if err == nil && !model.SameHost(f.Host, host) {
		e.names[c.label] = nameAnswer{name: f.Host, at: a.at}
	}
	e.mu.Unlock()
	return a
}

// maxFacts bounds the process facts kept: the pids asked about come from lock files, which any host's runs
// can fill with ever new ones. An answer dropped is asked for again when a lock needs it.
const maxFacts = 4096

// keepFact keeps a, dropping the oldest answers past maxFacts. Callers hold mu.
func (e *Elsewhere) keepFact(k factKey, a factAnswer) {
	e.facts[k] = a
	for len(e.facts) > maxFacts {
		var oldest factKey
		first := true
		for k, f := range e.facts {
			if first || f.at.Before(e.facts[oldest].at) {
				oldest, first = k, false
			}
		}
		delete(e.facts, oldest)
	}
}

// find is the connection reached as host (its ssh destination's host names it) whose machine calls itself
// host; why names the machines that could not say, or that call themselves host under another name. Without
// wait it only starts asking the names it lacks.
func (e *Elsewhere) find(host string, wait bool) (*connection, string) {
	done := e.learnNames()
	if wait {
		<-done
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var unanswered, claims []string
	found, asking := -1, false
	for i, c := range e.conns {
		a, ok := e.names[c.label]
		switch {
		case !ok:
			asking = true
			unanswered = append(unanswered, fmt.Sprintf("asking %s its host name", c.label))
		case a.err != nil:
			unanswered = append(unanswered, fmt.Sprintf("%s did not say its host name: %v", c.label, a.err))
		case !model.SameHost(a.name, host):
		case !model.SameHost(c.root.Host, host):
			// Its word alone: a machine reached by another name (an alias, an address, or another machine
			// altogether) that says it is host may not judge host's locks, or one host could make any
			// machine's locks stale and clearable with a y.
			unanswered = append(unanswered, fmt.Sprintf("%s calls itself %s, but runwatch reaches it as %s: cannot check %s from here",
				c.label, host, c.root.Host, host))
		default:
			found = i
			claims = append(claims, c.label)
		}
	}
	// A host's name is only its word: when two destinations give the same one, either may be lying (or
	// both are honest machines that share a name), and neither may speak for the machine a lock names.
	if len(claims) > 1 {
		return nil, fmt.Sprintf("%s all call themselves %s: runwatch trusts none of them to judge its locks",
			strings.Join(claims, ", "), host)
	}
	if found >= 0 && !asking {
		return &e.conns[found], ""
	}
	if found >= 0 {
		// One still being asked may claim the name too; until it says, the name is not settled. (One that
		// could not answer does not hold the others up: it is named in its lock's reasons when it matters.)
		unanswered = append(unanswered, fmt.Sprintf("%s calls itself %s", e.conns[found].label, host))
	}
	sort.Strings(unanswered)
	return nil, strings.Join(unanswered, "; ")
}

// learnNames starts asking, in parallel, every machine whose name is not known yet (or whose last failure
// is older than nameRetry), unless a round is under way; the channel closes when the round ends.
func (e *Elsewhere) learnNames() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.learning != nil {
		return e.learning
	}
	var ask []connection
	for _, c := range e.conns {
		a, ok := e.names[c.label]
		if !ok || (a.err != nil && time.Since(a.at) > nameRetry) {
			ask = append(ask, c)
		}
	}
	done := make(chan struct{})
	if len(ask) == 0 {
		close(done)
		return done
	}
	e.learning = done
	var wg sync.WaitGroup
	for _, c := range ask {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := e.ask(c, 0)
			a := nameAnswer{name: f.Host, err: err, at: time.Now()}
			if err == nil && f.Host == "" {
				a.err = fmt.Errorf("its runwatch gave no host name")
			}
			e.mu.Lock()
			e.names[c.label] = a
			e.mu.Unlock()
		}()
	}
	go func() {
		wg.Wait()
		e.mu.Lock()
		e.learning = nil
		e.mu.Unlock()
		close(done)
	}()
	return done
}

// askWithin bounds one question: a machine that does not answer leaves its locks unknown, it must not hold
// up the judging of every other run for long.
const askWithin = 15 * time.Second

func (e *Elsewhere) ask(c connection, pid int) (Facts, error) {
	ctx, cancel := context.WithTimeout(context.Background(), askWithin)
	defer cancel()
	args := []string{FactsCommand}
	if pid > 0 {
		args = append(args, strconv.Itoa(pid))
	}
	out, stderr, code, err := e.ssh.Run(ctx, c.root, args...)
	if err != nil {
		return Facts{}, err
	}
	if code != 0 {
		if code == 2 {
			return Facts{}, fmt.Errorf("its runwatch is older than this one and cannot judge locks: upgrade it (%s)", InstallHint(c.root))
		}
		return Facts{}, fmt.Errorf("%s", strings.TrimPrefix(Explain(c.root, code, stderr), c.label+": "))
	}
	var f Facts
	if err := json.Unmarshal(out, &f); err != nil {
		return Facts{}, fmt.Errorf("its runwatch's answer is not JSON (%v)", err)
	}
	if msg, ok := protocolSkew(c.root, f.Protocol); !ok {
		return Facts{}, errors.New(strings.TrimPrefix(msg, c.label+": "))
	}
	return f, nil
}

// procFacts is one process's facts as a model.ProcInspector.
type procFacts struct{ f ProcFact }

func (p procFacts) Alive(pid int) bool { return pid == p.f.PID && p.f.Alive }
func (p procFacts) StartTime(pid int) (time.Time, bool) {
	if pid != p.f.PID || p.f.Started == nil {
		return time.Time{}, false
	}
	return *p.f.Started, true
}
func (p procFacts) KernelThread(pid int) bool { return pid == p.f.PID && p.f.KernelThread }

// judgeElsewhere judges, for a Watcher, the locks of its hosts' runs that name a third machine: a host's
// runwatch calls those unknown (it cannot reach that machine), and runwatch here may. A lock's holder
// can exit there without the host's runwatch sending anything, so such runs are judged again on a timer.
type judgeElsewhere struct {
	e          *Elsewhere
	watching   model.Elsewhere
	staleAfter time.Duration

	// mu is held from judging a run to sending it, by the stream and the timer alike, so the timer never
	// sends an older copy of a run after the stream sent a newer one.
	mu   sync.Mutex
	held map[string]heldRun // by Run.Key: runs with a lock naming another machine than their host

	// wake tells judgeAgain that the held runs changed, so it looks again whether any needs the timer.
	wake chan struct{}
	// after starts judgeAgain's one timer (time.After; a test counts and fires them).
	after func(time.Duration) <-chan time.Time
}

// nextJudgement is when the judgement of some held run here can next change with time alone: now+every
// while one can change at any moment (a lock judged live elsewhere, whose holder may exit, or unknown while
// that machine is reached, which may answer), else the earliest instant one changes at (an acquired_at
// still to come), else zero. A lock judged stale stays so: a run of only such locks needs no timer.
// Callers hold mu.
func (j *judgeElsewhere) nextJudgement(now time.Time, every time.Duration) time.Time {
	var at time.Time
	for _, h := range j.held {
		name, _ := j.e.NameOf(h.label)
		if model.JudgementNeedsPolling(&h.sent, model.Env{Host: name, Elsewhere: j.watching}) {
			return now.Add(every)
		}
		if c := model.JudgementComesAt(&h.sent); !c.IsZero() && (at.IsZero() || c.Before(at)) {
			at = c
		}
	}
	return at
}

type heldRun struct {
	label string
	raw   model.Run // as the host sent it
	sent  model.Run // as judged here, last sent
}

// run is r judged here, or r when nothing here can say more (or its host's name is not known yet).
func (j *judgeElsewhere) run(label string, r model.Run) model.Run {
	if j.e == nil {
		return r
	}
	name, ok := j.e.NameOf(label)
	if !ok || !namesAnother(r, name) {
		return r
	}
	r.Locks = append([]model.Lock(nil), r.Locks...)
	r.Problems = append([]model.Problem(nil), r.Problems...)
	r.CrashSigns = append([]string(nil), r.CrashSigns...)
	model.JudgeLocksHeldElsewhere(&r, model.Env{Now: time.Now(), Host: name, StaleAfter: j.staleAfter, Elsewhere: j.watching})
	return r
}

// send judges runs (as their host, label, sent them) and sends them with fn, holding mu throughout: every
// send of a judged run is then of the newest judgement. Runs with a lock naming another machine (or whose
// host's name is not known yet) are kept for the timer.
func (j *judgeElsewhere) send(label string, runs []model.Run, fn func(judged []model.Run) bool) bool {
	if j.e == nil {
		return fn(runs)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	judged := make([]model.Run, len(runs))
	name, known := j.e.NameOf(label)
	for i, r := range runs {
		judged[i] = j.run(label, r)
		if !known || namesAnother(r, name) {
			j.held[r.Key()] = heldRun{label: label, raw: r, sent: judged[i]}
		} else {
			delete(j.held, r.Key())
		}
	}
	j.poke()
	return fn(judged)
}

func (j *judgeElsewhere) forget(key string) {
	if j.e == nil {
		return
	}
	j.mu.Lock()
	delete(j.held, key)
	j.mu.Unlock()
	j.poke()
}

func (j *judgeElsewhere) poke() {
	select {
	case j.wake <- struct{}{}:
	default: // already told
	}
}

func namesAnother(r model.Run, host string) bool {
	for _, l := range r.Locks {
		if l.Host != "" && !model.SameHost(l.Host, host) {
			return true
		}
	}
	return false
}

// judgeAgain sends, every interval while some held run's judgement can change at any moment, or once at
// the instant a known one comes (nextJudgement), the held runs whose judgement here changed. With none it sets no timer and wakes only when the stream holds
// another run: a fleet whose foreign locks are all stale, or that has none, costs nothing.
func (w *Watcher) judgeAgain(ctx context.Context, every time.Duration) {
	j := &w.judge
	var due <-chan time.Time
	for {
		if due == nil {
			now := time.Now()
			j.mu.Lock()
			next := j.nextJudgement(now, every)
			j.mu.Unlock()
			if !next.IsZero() {
				due = j.after(max(0, next.Sub(now)))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-j.wake:
			continue
		case <-due:
			due = nil
		}
		j.mu.Lock()
		var changed []model.Run
		for k, h := range j.held {
			again := j.run(h.label, h.raw)
			if sameVerdicts(again, h.sent) {
				continue
			}
			h.sent = again
			j.held[k] = h
			changed = append(changed, again)
		}
		if len(changed) > 0 {
			sortRuns(changed)
			w.send(ctx, Update{Update: watch.Update{Changed: model.RunPointers(changed)}})
		}
		j.mu.Unlock()
	}
}

func sameVerdicts(a, b model.Run) bool {
	if len(a.Locks) != len(b.Locks) {
		return false
	}
	for i := range a.Locks {
		if a.Locks[i].Verdict != b.Locks[i].Verdict || strings.Join(a.Locks[i].Reasons, "\n") != strings.Join(b.Locks[i].Reasons, "\n") {
			return false
		}
	}
	return true
}
