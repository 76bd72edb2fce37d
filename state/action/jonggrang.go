package action

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"runwatch/model"
	"runwatch/state/atomicfile"
	"runwatch/state/jonggrang"
	"runwatch/state/yamledit"
	"runwatch/termsafe"
)

// manifestRereadDelay is how long to wait before re-reading a manifest that did not read whole, and
// manifestAgreeDelay the pause before the second read that must agree with the first.
const (
	manifestRereadDelay = 50 * time.Millisecond
	manifestAgreeDelay  = 5 * time.Millisecond
	manifestReads       = 4
)

// manifest is a MANIFEST.yaml as read for an action.
type manifest struct {
	path string
	data []byte
	snap atomicfile.Snapshot
	root *yaml.Node
	// phases indexes the phases mapping, key as written → its value (a later duplicate wins, as in
	// yamledit.Lookup): plans visit every phase, and a lookup each through the mapping was quadratic.
	phases map[string]*yaml.Node
}

// readManifest plans only from a read that is whole (docs/FORMATS.md C.2): the bytes parse, carry none of the
// marks of a prefix cut at a line end (jonggrang.TornReasons: active_phases naming phases the file lacks, the
// keys the writer always writes missing), and a second read a moment later gives the same bytes. jonggrang
// writes the file in place without a lock, so any single read may be the first part of a write in progress,
// and such a prefix often parses.
func (p *Plan) readManifest(run model.Run) (*manifest, error) {
	if run.Kind != model.KindJonggrang {
		return nil, refusef("%s is a %s run; this action needs a jonggrang (MANIFEST.yaml) run", run.ID, run.Kind)
	}
	var why string
	for attempt := 0; attempt < manifestReads; attempt++ {
		if attempt > 0 {
			time.Sleep(manifestRereadDelay)
		}
		real, data, snap, err := p.readForEdit(run.StatePath)
		if err != nil {
			return nil, err
		}
		root, err := yamledit.Parse(data)
		if err != nil {
			why = err.Error()
			continue
		}
		if torn := jonggrang.TornReasons(data); len(torn) > 0 {
			why = "it looks cut short: " + strings.Join(torn, "; ")
			continue
		}
		time.Sleep(manifestAgreeDelay)
		_, again, _, err := p.readForEdit(run.StatePath)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(again, data) {
			why = "two reads a moment apart disagree (a writer is at work)"
			continue
		}
		return &manifest{path: real, data: data, snap: snap, root: root}, nil
	}
	return nil, refusef("%s cannot be edited safely: %s, in %d reads over %s; nothing was planned. If a writer is at work, try again; if it stays so, the file was left cut short: restore it (e.g. from git)",
		run.StatePath, why, manifestReads, time.Duration(manifestReads-1)*manifestRereadDelay)
}

func (m *manifest) str(path ...string) string {
	n := yamledit.Lookup(m.root, path...)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return ""
	}
	return n.Value
}

// activePhases is active_phases in numeric order, or the phases map's keys when the list is missing.
func (m *manifest) activePhases() []string {
	var out []string
	if n := yamledit.Lookup(m.root, "active_phases"); n != nil && n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode {
				out = append(out, c.Value)
			}
		}
	}
	if len(out) == 0 {
		if n := yamledit.Lookup(m.root, "phases"); n != nil && n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				out = append(out, n.Content[i].Value)
			}
		}
	}
	model.SortNumericKeys(out)
	return out
}

// phaseIndex builds m.phases once.
func (m *manifest) phaseIndex() map[string]*yaml.Node {
	if m.phases != nil {
		return m.phases
	}
	m.phases = map[string]*yaml.Node{}
	if n := yamledit.Lookup(m.root, "phases"); n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Kind == yaml.ScalarNode {
				m.phases[n.Content[i].Value] = n.Content[i+1]
			}
		}
	}
	return m.phases
}

// phaseKey finds the phases map key for a phase number as written anywhere (10 and '10' are both "10").
func (m *manifest) phaseKey(num string) (string, bool) {
	_, ok := m.phaseIndex()[num]
	return num, ok
}

// phaseStr is m.phaseStr(key, path...) through the index.
func (m *manifest) phaseStr(key string, path ...string) string {
	n := yamledit.Lookup(m.phaseIndex()[key], path...)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return ""
	}
	return n.Value
}

func msTime(p *Plan) string { return p.opts.now().Format("2006-01-02T15:04:05.000Z") }

// edits builds yamledit edits, skipping values already in place so the diff shows only real changes.
type edits struct {
	m   *manifest
	out []yamledit.Edit
}

func (e *edits) set(v yamledit.Value, path ...string) {
	n := yamledit.Lookup(e.m.root, path...)
	if n != nil && n.Kind == yaml.ScalarNode {
		isNull := n.ShortTag() == "!!null"
		if v == yamledit.Null() && isNull || v != yamledit.Null() && !isNull && n.Value == v.String() {
			return
		}
	}
	e.out = append(e.out, yamledit.Edit{Path: path, Value: v})
}

func (p *Plan) finishManifest(m *manifest, e *edits) error {
	e.set(yamledit.String(msTime(p)), "updated_at")
	newData, err := yamledit.Apply(m.data, e.out)
	if err != nil {
		return fmt.Errorf("%s: %w", m.path, err)
	}
	p.Files = []FileChange{{Path: m.path, Snap: m.snap, Old: m.data, New: newData, redo: yamlRedo(m.root, e.out)}}
	return nil
}

// refuseIfRunning refuses while the run is judged running: jonggrang writers take no lock and rewrite the
// whole manifest, so an edit now would be lost or would clobber theirs.
func refuseIfRunning(run model.Run) error {
	for _, l := range run.Locks {
		if l.Verdict == model.VerdictLive {
			return refusef("a live lock is held: %s (%s); refusing while an agent works", lockHolder(l), strings.Join(l.Reasons, "; "))
		}
	}
	return refuseIfGroupRunning(run)
}

// refuseIfGroupRunning refuses while a parallel group works on this feature in a worktree: the main copy of
// the manifest is stale and is overwritten when the worker exits.
func refuseIfGroupRunning(run model.Run) error {
	if run.Jonggrang != nil {
		for _, g := range run.Jonggrang.Groups {
			if g.Alive && g.FeatureID == run.ID {
				return refusef("a parallel group for %s is running (pid %d); the manifest copy here is stale", run.ID, g.PID)
			}
		}
	}
	return nil
}

func awaitingInput(m *manifest, key string) bool {
	return m.phaseStr(key, "status") == "failed" &&
		strings.HasPrefix(strings.TrimSpace(m.phaseStr(key, "output", "error")), model.AwaitingInputPrefix)
}

// planJonggrangStep completes the current phase of a paused (or awaiting-input) run and moves on.
func planJonggrangStep(p *Plan, run model.Run) error {
	m, err := p.readManifest(run)
	if err != nil {
		return err
	}
	if err := refuseIfRunning(run); err != nil {
		return err
	}
	cur := m.str("current_phase")
	if cur == "" {
		return refusef("%s has no current_phase (status %q): nothing to step", run.ID, m.str("status"))
	}
	key, ok := m.phaseKey(cur)
	if !ok {
		return refusef("current_phase %s has no entry under phases", cur)
	}
	status := m.str("status")
	if !model.JonggrangSteppable(status, m.phaseStr(key, "status"), m.phaseStr(key, "output", "error")) {
		return refusef("step needs a paused run or a phase awaiting input; %s is %q and phase %s is %q",
			run.ID, status, key, m.phaseStr(key, "status"))
	}
	e := &edits{m: m}
	e.set(yamledit.String("completed"), "phases", key, "status")
	e.set(yamledit.String(msTime(p)), "phases", key, "completed_at")
	cleared := ""
	if awaitingInput(m, key) {
		// The person gave the input: a completed phase must not keep showing the pause as its error.
		e.set(yamledit.Null(), "phases", key, "output")
		cleared = "; its \"Awaiting human input\" error is cleared"
	}
	active := m.activePhases()
	next := ""
	for i, a := range active {
		if a == cur || !model.NumericLess(a, cur) && !model.NumericLess(cur, a) {
			if i+1 < len(active) {
				next = active[i+1]
			}
		}
	}
	if next != "" {
		e.set(yamledit.Number(next), "current_phase")
		e.set(yamledit.String("paused"), "status")
		p.Summary = fmt.Sprintf("mark phase %s (%s) completed and move current_phase to %s; the run stays paused%s", key, m.phaseStr(key, "name"), next, cleared)
	} else {
		e.set(yamledit.Null(), "current_phase")
		e.set(yamledit.String("completed"), "status")
		p.Summary = fmt.Sprintf("mark the last phase %s (%s) completed; the run is completed%s", key, m.phaseStr(key, "name"), cleared)
	}
	return p.finishManifest(m, e)
}

// planJonggrangRetry resets a failed phase the way the upstream reopen does.
func planJonggrangRetry(p *Plan, run model.Run, phase string) error {
	m, err := p.readManifest(run)
	if err != nil {
		return err
	}
	if err := refuseIfRunning(run); err != nil {
		return err
	}
	var failed []string
	for _, k := range m.activePhases() {
		if pk, ok := m.phaseKey(k); ok && m.phaseStr(pk, "status") == "failed" {
			failed = append(failed, pk)
		}
	}
	key := ""
	switch {
	case phase != "":
		k, ok := m.phaseKey(phase)
		if !ok {
			return refusef("%s has no phase %s", run.ID, phase)
		}
		if st := m.phaseStr(k, "status"); st != "failed" {
			return refusef("phase %s is %q, not failed; only a failed phase can be retried", k, st)
		}
		key = k
	case len(failed) == 1:
		key = failed[0]
	case len(failed) == 0:
		return refusef("%s has no failed phase to retry", run.ID)
	default:
		sort.SliceStable(failed, func(i, j int) bool { return model.NumericLess(failed[i], failed[j]) })
		return refusef("%s has several failed phases (%s); name the one to retry", run.ID, strings.Join(failed, ", "))
	}
	e := &edits{m: m}
	e.set(yamledit.String("pending"), "phases", key, "status")
	if n := yamledit.Lookup(m.root, "phases", key, "output"); n != nil {
		e.set(yamledit.Null(), "phases", key, "output")
	}
	if n := yamledit.Lookup(m.root, "phases", key, "completed_at"); n != nil {
		e.set(yamledit.Null(), "phases", key, "completed_at")
	}
	e.set(yamledit.Number(key), "current_phase")
	e.set(yamledit.String("in_progress"), "status")
	p.Summary = fmt.Sprintf("retry phase %s (%s): status pending, error cleared, current_phase %s, run in_progress", key, m.phaseStr(key, "name"), key)
	if st := run.Stage(key); st != nil && strings.HasPrefix(strings.TrimSpace(st.ErrorText()), model.AwaitingInputPrefix) {
		// The brief's own warning for this phase, so the confirmation says what the brief would.
		p.Warnings = append(p.Warnings, fmt.Sprintf("phase %s is waiting for a person's answer (%s). %s Answer the questions "+
			"in the brief, then step past it (runwatch step), or resume in autonomous mode", key, termsafe.Plain(st.ErrorText(), 120), model.NoRetryAwaiting))
	}
	return p.finishManifest(m, e)
}

// planJonggrangStatus sets the run status for pause (paused) and resume (in_progress, or running while a
// live agent still works on it).
func planJonggrangStatus(p *Plan, run model.Run, to string) error {
	m, err := p.readManifest(run)
	if err != nil {
		return err
	}
	if to == "paused" {
		if err := refusePauseThatCannotStick(run, m); err != nil {
			return err
		}
	}
	if err := refuseIfGroupRunning(run); err != nil {
		return err
	}
	status := m.str("status")
	switch {
	case to == "paused" && (status == "paused" || status == "completed"):
		return refusef("%s is %q; nothing to pause", run.ID, status)
	case to == "running" && status == "in_progress":
		return refusef("%s is already waiting to be resumed (status %q): the manifest needs no change; start the orchestrator's own resume (%s)", run.ID, status, orchestratorResume)
	case to == "running" && status != "paused":
		return refusef("%s is %q, not paused; only a paused run can be resumed", run.ID, status)
	}
	e := &edits{m: m}
	note := ""
	switch {
	case to == "running" && liveLock(run) == nil:
		// Writing `running` would make an idle run look like it runs. in_progress is the word the
		// convention's own reopen writes for "waiting to be resumed", and its resume accepts it as it does
		// running.
		to = "in_progress"
		note = fmt.Sprintf("; nothing runs the feature now: start the orchestrator's own resume (%s), which continues at phase %s",
			orchestratorResume, orNone(m.str("current_phase")))
	case to == "paused":
		if key := runningPhase(m); key != "" {
			note = fmt.Sprintf("; phase %s is marked running but no live lock holds it: if an orchestrator is still running it, its next completePhase writes status running over this pause", key)
		}
	}
	e.set(yamledit.String(to), "status")
	p.Summary = fmt.Sprintf("set run status %s → %s%s", status, to, note)
	return p.finishManifest(m, e)
}

// orchestratorResume is how the convention resumes a feature; the subcommand changed name between versions.
const orchestratorResume = "`jonggrang orchestrate --resume`, or `jonggrang work --resume` in versions with the work loop"

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// liveLock is the first live lock of the run, or nil.
func liveLock(run model.Run) *model.Lock {
	for i, l := range run.Locks {
		if l.Verdict == model.VerdictLive {
			return &run.Locks[i]
		}
	}
	return nil
}

// runningPhase is the key of a phase the manifest marks running ("" when none): the current phase first.
func runningPhase(m *manifest) string {
	if cur := m.str("current_phase"); cur != "" {
		if key, ok := m.phaseKey(cur); ok && m.phaseStr(key, "status") == "running" {
			return key
		}
	}
	for _, k := range m.activePhases() {
		if key, ok := m.phaseKey(k); ok && m.phaseStr(key, "status") == "running" {
			return key
		}
	}
	return ""
}

// refusePauseThatCannotStick refuses a pause while a phase runs under a live agent lock or a live parallel
// worker. Nothing in the convention writes paused: its loop reads the status only between phases, and the
// completePhase that ends the running phase writes running (or completed) over whatever is there, so the
// pause would be lost without a trace.
func refusePauseThatCannotStick(run model.Run, m *manifest) error {
	if run.Jonggrang != nil {
		for _, g := range run.Jonggrang.Groups {
			if g.Alive && g.FeatureID == run.ID {
				return refusef("pause would not stick: a parallel worker (pid %d) runs %s in worktree %s and writes its own copy of the manifest, which is copied over this one when it exits. "+
					"Instead: let the worker finish, then pause here; or stop the worker yourself (runwatch never kills a process)", g.PID, run.ID, termsafe.Plain(g.WorktreePath, 200))
			}
		}
	}
	key := runningPhase(m)
	l := liveLock(run)
	if key == "" || l == nil {
		return nil
	}
	return refusef("pause would not stick: phase %s (%s) is running under the live lock of %s (%s); the orchestrator reads the status only between phases, and the completePhase that ends phase %s writes status running over a pause. "+
		"Instead: pause once phase %s has completed (the run is then between phases), or stop the orchestrator yourself (runwatch never kills a process)",
		key, termsafe.Plain(m.phaseStr(key, "name"), 80), lockHolder(*l), strings.Join(l.Reasons, "; "), key, key)
}
