package jonggrang

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"runwatch/model"
)

// ManifestName is the run state file of a feature.
const ManifestName = "MANIFEST.yaml"

// rereadDelay is how long to wait before reading a manifest again after it failed to parse. The writers
// truncate and rewrite in place (no temp file, no lock), so a reader can catch a half-written file; a write
// of a few KiB finishes well within this.
const rereadDelay = 30 * time.Millisecond

// loader holds the knobs tests need to exercise the re-read path deterministically.
type loader struct {
	retryDelay time.Duration
	// beforeRetry runs after a failed parse, before the wait and the second read.
	beforeRetry func(path string)
}

var defaultLoader = loader{retryDelay: rereadDelay}

// ProjectRootOf returns the project that holds a feature dir: <project>/.jonggrang/.output/features/<fid>.
func ProjectRootOf(featureDir string) string {
	return filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Clean(featureDir)))))
}

// Load reads one feature of a jonggrang project into a run: its MANIFEST.yaml (or, while a parallel group
// runs it, the worktree's live copy), phase output files, tasks and progress, plus the project's locks that
// belong to it and, for an incomplete run, the ephemeral gates. It never fails: everything it cannot read or
// understand is a problem on the run.
func Load(featureDir string, env model.Env) model.Run {
	return defaultLoader.loadAt(featureDir, "", env)
}

// LoadFound is Load of a feature found by its manifest's path, statePath: the run, its problems and the
// agents' cache keep that string, which the finder keeps too, not a copy of it (issue 35).
func LoadFound(featureDir, statePath string, env model.Env) model.Run {
	return defaultLoader.loadAt(featureDir, statePath, env)
}

func (ld loader) load(featureDir string, env model.Env) model.Run {
	return ld.loadAt(featureDir, "", env)
}

// loadAt is load; found is the manifest's path as its finder spells it, if known.
func (ld loader) loadAt(featureDir, found string, env model.Env) model.Run {
	dir := filepath.Clean(featureDir)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	root := ProjectRootOf(dir)
	statePath := filepath.Join(dir, ManifestName)
	if found == statePath {
		statePath = found
	}
	run := model.Run{
		ID:          filepath.Base(dir),
		Kind:        model.KindJonggrang,
		Dir:         dir,
		StatePath:   statePath,
		ProjectRoot: root,
		Jonggrang:   &model.JonggrangDetail{},
	}
	var probs, groupProbs problemSink
	groups := readGroups(root, env, &groupProbs)
	run.Jonggrang.Groups = groups

	m, mtime := ld.readManifest(run.StatePath, &probs)
	probs = append(probs, groupProbs...)
	dataDir, dataRoot := dir, root
	if m != nil {
		if g := liveGroupFor(groups, run.ID, m.FeatureID); g != nil {
			if wm, wdir, wroot := ld.readWorktreeCopy(g, root, dir, run.StatePath, &probs); wm != nil {
				m, dataDir, dataRoot = wm, wdir, wroot
				run.Jonggrang.WorktreeCopyOf = filepath.Join(wdir, ManifestName)
			}
		}
		applyManifest(&run, m, mtime, &probs)
	}

	d := run.Jonggrang
	d.PhaseOutputs = readPhaseOutputs(dataDir, &probs)
	shareAgentIDs(d.PhaseOutputs, d.Agents)
	d.Tasks = readTasks(dataDir, &probs)
	d.ProgressTail, d.Interruptions = readProgress(dataDir, &probs)

	// A run that says it is completed is not waiting on anyone: project-wide locks and gates are shown on
	// the features that can still be affected by them.
	incomplete := m == nil || !strings.EqualFold(strings.TrimSpace(m.Status), "completed")
	if m != nil {
		attachLocks(&run, m, dataRoot, incomplete, env, &probs)
	}
	if m != nil && incomplete {
		var gate *model.Gate
		if d.Feedback, gate = readFeedback(dataRoot, &probs); gate != nil {
			run.Gates = append(run.Gates, *gate)
		}
		if d.Compaction, gate = readCompaction(dataRoot, env, &probs); gate != nil {
			run.Gates = append(run.Gates, *gate)
		}
		d.SessionRoles = readSessionRoles(dataRoot, &probs)
	}
	if incomplete {
		noteInterruptedGroups(&run, groups, m, &probs)
	}
	for _, s := range run.Stages {
		if s.Status == model.StageFailed && strings.HasPrefix(strings.TrimSpace(s.ErrorText()), model.AwaitingInputPrefix) {
			probs.add(model.SeverityWarning, model.CodeAwaitingInput, run.StatePath,
				"phase %s (%s) is waiting for a person: %s", s.Key, s.Name, s.ErrorText())
		}
	}
	run.Problems = append(run.Problems, probs...)
	run.ActiveAt = lastWrite(&run, m, mtime)
	model.FinalizeRun(&run)
	return run
}

// shareAgentIDs points the phase outputs' agent ids at the manifest's spelling of the same ids, which the run
// keeps anyway (issue 35).
func shareAgentIDs(outputs []model.PhaseOutput, agents []model.Agent) {
	for i := range outputs {
		for _, a := range agents {
			if outputs[i].AgentID == a.ID {
				outputs[i].AgentID = a.ID
				break
			}
		}
	}
}

// lastWrite is the latest of the manifest's mtime and updated_at, its phases' and agents' times and the
// phase outputs' timestamps: when anything last worked on the feature, as far as its files say.
func lastWrite(run *model.Run, m *manifest, mtime time.Time) *time.Time {
	if m == nil {
		return nil
	}
	last := mtime
	note := func(t *time.Time) {
		if t != nil && t.After(last) {
			last = *t
		}
	}
	note(&run.UpdatedAt)
	for _, s := range run.Stages {
		note(s.StartedAt)
		note(s.CompletedAt)
	}
	for _, a := range run.Jonggrang.Agents {
		note(a.StartedAt)
		note(a.CompletedAt)
	}
	for _, o := range run.Jonggrang.PhaseOutputs {
		note(o.Timestamp)
	}
	if last.IsZero() {
		return nil
	}
	last = last.UTC()
	return &last
}

// readManifest reads and parses a manifest, reading it a second time after a short wait when the first
// read looks torn. It returns nil after adding an error problem when the manifest cannot be used.
func (ld loader) readManifest(path string, probs *problemSink) (*manifest, time.Time) {
	var first problemSink
	data, st, ok := readManifestBytes(path, &first)
	if !ok && len(first) == 1 && first[0].Code == model.CodeManifestMissing {
		// createManifest makes the folder, then writes the file: a folder seen between the two gets the same
		// second look as a torn write.
		if ld.beforeRetry != nil {
			ld.beforeRetry(path)
		}
		time.Sleep(ld.retryDelay)
		first = nil
		data, st, ok = readManifestBytes(path, &first)
	}
	*probs = append(*probs, first...)
	if !ok {
		return nil, time.Time{}
	}
	m, err := parsedOnce(path, data, st)
	// A rewrite cut at a line boundary is still valid YAML: a read that looks cut short is as suspect as a
	// syntax error, and is read again the same way.
	if err != nil || len(m.tornReasons()) > 0 {
		if ld.beforeRetry != nil {
			ld.beforeRetry(path)
		}
		time.Sleep(ld.retryDelay)
		if data, st, ok = readManifestBytes(path, probs); !ok {
			return nil, time.Time{}
		}
		if m, err = parseManifest(data); err != nil {
			probs.add(model.SeverityError, model.CodeManifestUnparsable, path,
				"%s: not valid YAML (read twice, %s apart): %v%s", path, ld.retryDelay, err, yamlHint(err, data))
			return nil, time.Time{}
		}
		if why := m.tornReasons(); len(why) > 0 {
			probs.add(model.SeverityError, model.CodeManifestTorn, path,
				"%s looks cut short (read twice, %s apart): %s; every write of the convention has these, so "+
					"the file was cut during a write (or edited by hand). Shown as read; no action plans from it "+
					"until the writer rewrites it whole", path, ld.retryDelay, strings.Join(why, "; "))
		}
	}
	for _, n := range m.notes {
		probs.add(n.sev, n.code, path, "%s: %s", path, n.msg)
	}
	return m, st.ModTime()
}

func readManifestBytes(path string, probs *problemSink) ([]byte, os.FileInfo, bool) {
	data, st, err := readCapped(path, maxManifestBytes)
	var big *errTooLarge
	switch {
	case err == nil:
		return data, st, true
	case errors.Is(err, os.ErrNotExist):
		probs.add(model.SeverityError, model.CodeManifestMissing, path, "%s: the feature folder has no %s", path, ManifestName)
	case errors.As(err, &big):
		probs.add(model.SeverityError, model.CodeManifestTooLarge, path, "%s: %v; not loaded", path, err)
	default:
		probs.add(model.SeverityError, model.CodeManifestUnreadable, path, "%s: cannot read: %v", path, err)
	}
	return nil, nil, false
}

// liveGroupFor finds a running parallel group, with a live pid, that works on this feature.
func liveGroupFor(groups []model.Group, dirName, featureID string) *model.Group {
	for i := range groups {
		g := &groups[i]
		if g.Alive && strings.EqualFold(g.Status, "running") && g.WorktreePath != "" &&
			(g.FeatureID == dirName || (featureID != "" && g.FeatureID == featureID)) {
			return g
		}
	}
	return nil
}

// readWorktreeCopy reads the worktree's copy of this feature's manifest. While a group runs, the worker
// writes only there and the server copies it back when the worker exits, so the main copy is stale.
func (ld loader) readWorktreeCopy(g *model.Group, root, dir, mainPath string, probs *problemSink) (*manifest, string, string) {
	rel, err := filepath.Rel(root, dir)
	wroot := filepath.Clean(g.WorktreePath)
	if err != nil || !filepath.IsAbs(wroot) {
		probs.add(model.SeverityWarning, model.CodeWorktreeStale, mainPath,
			"group %s is running in worktree %q, which is not an absolute path; showing the main copy, which is stale while the group runs", g.FeatureID, truncate(g.WorktreePath, 200))
		return nil, "", ""
	}
	wdir := filepath.Join(wroot, rel)
	wpath := filepath.Join(wdir, ManifestName)
	var wprobs problemSink
	wm, _ := ld.readManifest(wpath, &wprobs)
	if wm == nil {
		msgs := make([]string, 0, len(wprobs))
		for _, p := range wprobs {
			msgs = append(msgs, p.Message)
		}
		probs.add(model.SeverityWarning, model.CodeWorktreeStale, mainPath,
			"group %s (pid %d) is running, but its worktree copy cannot be used (%s); showing the main copy, which is stale while the group runs", g.FeatureID, g.PID, strings.Join(msgs, "; "))
		return nil, "", ""
	}
	*probs = append(*probs, wprobs...)
	probs.add(model.SeverityInfo, model.CodeWorktreeStale, mainPath,
		"group %s (pid %d) is running in a worktree; showing its live copy %s (this copy is stale until the group exits)", g.FeatureID, g.PID, wpath)
	return wm, wdir, wroot
}

// applyManifest copies what the manifest says onto the run.
func applyManifest(run *model.Run, m *manifest, mtime time.Time, probs *problemSink) {
	d := run.Jonggrang
	if m.FeatureID != "" {
		if m.FeatureID != run.ID {
			probs.add(model.SeverityInfo, model.CodeManifestInvalid, run.StatePath,
				"%s: feature_id %q differs from its folder name %q", run.StatePath, truncate(m.FeatureID, 80), run.ID)
		}
		if m.FeatureID != run.ID {
			run.ID = m.FeatureID
		} // else the folder's name, which its path holds already
	}
	run.Title = m.Description
	if run.Title == "" {
		run.Title = run.ID
	}
	run.RawStatus = m.Status
	if m.Status != "" && !knownRunStatus[strings.ToLower(strings.TrimSpace(m.Status))] {
		probs.add(model.SeverityWarning, model.CodeUnknownStatus, run.StatePath,
			"%s: unknown run status %q", run.StatePath, truncate(m.Status, 60))
	}
	if m.UpdatedAt != nil {
		run.UpdatedAt, run.UpdatedText = *m.UpdatedAt, m.UpdatedText
	} else {
		run.UpdatedAt = mtime.UTC()
	}
	run.Stages = m.Phases
	if !m.PhasesPresent || len(m.Phases) == 0 {
		probs.add(model.SeverityWarning, model.CodeNoStages, run.StatePath, "%s: the manifest lists no phases", run.StatePath)
	}
	if m.CurrentPhase != "" {
		run.CurrentStage = m.CurrentPhase
		if run.Stage(m.CurrentPhase) == nil && len(m.Phases) > 0 {
			probs.add(model.SeverityError, model.CodeCurrentStageUnknown, run.StatePath,
				"%s: current_phase %s is not among the phases", run.StatePath, truncate(m.CurrentPhase, 30))
		}
	}
	if strings.EqualFold(strings.TrimSpace(m.Status), "completed") {
		var open []string
		for _, s := range m.Phases {
			if !s.Status.Done() {
				open = append(open, s.Key)
			}
		}
		if len(open) > 0 {
			probs.add(model.SeverityWarning, model.CodeManifestInvalid, run.StatePath,
				"%s: status is completed but phases %s are neither completed nor skipped", run.StatePath, strings.Join(limit(open, 8), ", "))
		}
	}
	run.Flags = m.Validation
	d.WorkType = m.WorkType
	d.PipelineMode = m.PipelineMode
	d.HasUI = m.HasUI
	d.CreatedAt, d.CreatedText = m.CreatedAt, m.CreatedText
	d.ContextUsage = m.ContextUsage
	d.ActivePhases = m.ActivePhases
	d.Agents = m.Agents
}

// noteInterruptedGroups records a parallel group that stopped without finishing as a crash sign on its
// feature: the manifest may still say running, but nothing is working on it.
func noteInterruptedGroups(run *model.Run, groups []model.Group, m *manifest, probs *problemSink) {
	fid := ""
	if m != nil {
		fid = m.FeatureID
	}
	for _, g := range groups {
		if !g.Interrupted || (g.FeatureID != run.ID && (fid == "" || g.FeatureID != fid)) {
			continue
		}
		why := fmt.Sprintf("orchestration group %s has status %q but ", g.FeatureID, g.Status)
		switch {
		case strings.EqualFold(g.Status, "interrupted"):
			why = fmt.Sprintf("orchestration group %s was interrupted", g.FeatureID)
		case g.PID > 0:
			why += fmt.Sprintf("its pid %d is not running", g.PID)
		default:
			why += "no group of the run is alive"
		}
		if g.Error != "" {
			why += " (" + g.Error + ")"
		}
		run.CrashSigns = append(run.CrashSigns, why)
		probs.add(model.SeverityWarning, model.CodeGroupInterrupted, filepath.Join(EphemeralDir(run.ProjectRoot), "orchestration-run.json"), "%s", why)
	}
}

// attachLocks puts on the run the project locks that belong to it: those of its own agents, and, when the
// run is incomplete, those no feature of the project claims (someone may be working on this run without
// having registered).
func attachLocks(run *model.Run, m *manifest, root string, incomplete bool, env model.Env, probs *problemSink) {
	files, err := readLocks(root)
	if err != nil {
		probs.add(model.SeverityWarning, model.CodeLockUnreadable, LockDir(root), "%s: cannot list locks: %v", LockDir(root), err)
		return
	}
	own := map[string]bool{}
	for _, a := range m.Agents {
		own[a.ID] = true
	}
	var others map[string]bool
	for _, lf := range files {
		mine := false
		for _, id := range lf.agentIDs() {
			mine = mine || own[id]
		}
		if !mine {
			if !incomplete {
				continue
			}
			if others == nil {
				others = agentsOfOtherFeatures(root, filepath.Base(run.Dir))
			}
			claimed := false
			for _, id := range lf.agentIDs() {
				claimed = claimed || others[id]
			}
			if claimed {
				continue
			}
		}
		l := lf.lock
		l.Shared = !mine
		if lf.readErr != nil {
			var big *errTooLarge
			if !errors.As(lf.readErr, &big) {
				probs.add(model.SeverityWarning, model.CodeLockUnreadable, l.Path, "%s: cannot read lock: %v", l.Path, lf.readErr)
				continue
			}
			// No lock the convention writes is this large; its cleanup would delete it as unparsable.
			l.ParseError = lf.readErr.Error()
		}
		l = judge(l, env)
		run.Locks = append(run.Locks, l)
		reasons := strings.Join(l.Reasons, "; ")
		switch l.Verdict {
		case model.VerdictStale:
			probs.add(model.SeverityWarning, model.CodeLockStale, l.Path, "lock %s of %s is stale: %s", filepath.Base(l.Path), l.Holder, reasons)
			if mine {
				run.CrashSigns = append(run.CrashSigns, fmt.Sprintf("lock of agent %s is stale: %s", l.Holder, reasons))
			}
		case model.VerdictUnknown:
			probs.add(model.SeverityWarning, model.CodeLockUnknown, l.Path, "lock %s of %s: liveness unknown: %s", filepath.Base(l.Path), l.Holder, reasons)
		}
	}
}

// agentCache remembers the agent ids of sibling manifests by size and mtime, so loading every feature of a
// project does not parse every other feature's manifest again.
var agentCache = struct {
	sync.Mutex
	m map[string]cachedAgents
}{m: map[string]cachedAgents{}}

type cachedAgents struct {
	size int64
	mod  time.Time
	ids  []string
}

const agentCacheMax = 4096

// agentsOfOtherFeatures collects the agent ids registered in the project's other features' manifests.
func agentsOfOtherFeatures(root, self string) map[string]bool {
	ids := map[string]bool{}
	featuresDir := filepath.Join(root, ".jonggrang", ".output", "features")
	entries, err := os.ReadDir(featuresDir)
	if err != nil {
		return ids
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == self {
			continue
		}
		for _, id := range manifestAgents(filepath.Join(featuresDir, e.Name(), ManifestName)) {
			ids[id] = true
		}
	}
	return ids
}

// siblingParses hands a manifest parsed for its agent ids (manifestAgents) to the read of that feature
// itself, which would otherwise parse the same bytes a second time: with every feature of a project loaded,
// each manifest used to be parsed twice. An entry is taken only by a read of the same bytes, and only once.
var siblingParses = struct {
	sync.Mutex
	m map[string]siblingParse
}{m: map[string]siblingParse{}}

type siblingParse struct {
	data []byte
	m    *manifest
}

// siblingParsesMax bounds what a parse nobody takes (its feature was read before) can hold on to.
const siblingParsesMax = 256

// parsing holds the manifests being parsed at this moment, by a feature's own read or for their agents: a
// reader of the other kind waits for that parse and uses it instead of parsing the same file at the same
// time (two cores loading one project did so for about a quarter of its manifests). A parse never waits
// while it is registered, so no two readers can wait on each other.
var parsing = struct {
	sync.Mutex
	m map[string]chan struct{}
}{m: map[string]chan struct{}{}}

// beginParse registers a parse of path and returns the func that ends it, or, when one is under way, the
// channel closed at its end.
func beginParse(path string) (end func(), busy <-chan struct{}) {
	parsing.Lock()
	defer parsing.Unlock()
	if ch, ok := parsing.m[path]; ok {
		return nil, ch
	}
	ch := make(chan struct{})
	parsing.m[path] = ch
	return func() {
		parsing.Lock()
		delete(parsing.m, path)
		parsing.Unlock()
		close(ch)
	}, nil
}

// parsedOnce parses a feature's own manifest, or takes the parse manifestAgents made of the same bytes, and
// remembers the agent ids for the other features' lock attribution.
func parsedOnce(path string, data []byte, st os.FileInfo) (*manifest, error) {
	if end, busy := beginParse(path); busy != nil {
		<-busy // perhaps a parse for its agents, which it hands on
	} else {
		defer end()
	}
	siblingParses.Lock()
	p, ok := siblingParses.m[path]
	delete(siblingParses.m, path)
	siblingParses.Unlock()
	if ok && bytes.Equal(p.data, data) {
		rekeyAgents(path)
		return p.m, nil
	}
	m, err := parseManifest(data)
	if err == nil && len(m.tornReasons()) == 0 {
		rememberAgents(path, st, m)
	}
	return m, err
}

// rekeyAgents keys the cached agents of path by this spelling of it, the feature's own read's, which its run
// keeps: a sibling's read that cached them spelled the path again.
func rekeyAgents(path string) {
	agentCache.Lock()
	defer agentCache.Unlock()
	if c, ok := agentCache.m[path]; ok {
		delete(agentCache.m, path)
		agentCache.m[path] = c
	}
}

func rememberAgents(path string, st os.FileInfo, m *manifest) []string {
	var ids []string
	if m != nil {
		for _, a := range m.Agents {
			ids = append(ids, a.ID)
		}
	}
	agentCache.Lock()
	if len(agentCache.m) >= agentCacheMax {
		agentCache.m = map[string]cachedAgents{}
	}
	agentCache.m[path] = cachedAgents{size: st.Size(), mod: st.ModTime(), ids: ids}
	agentCache.Unlock()
	return ids
}

func manifestAgents(path string) []string {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	agentCache.Lock()
	c, ok := agentCache.m[path]
	agentCache.Unlock()
	if ok && c.size == st.Size() && c.mod.Equal(st.ModTime()) {
		return c.ids
	}
	if end, busy := beginParse(path); busy != nil {
		<-busy // the feature's own read, which leaves its agents in the cache
		agentCache.Lock()
		c, ok := agentCache.m[path]
		agentCache.Unlock()
		if st, err := os.Stat(path); err == nil && ok && c.size == st.Size() && c.mod.Equal(st.ModTime()) {
			return c.ids
		}
	} else {
		defer end()
		// The feature's own read may have parsed it between the look above and this registration.
		agentCache.Lock()
		c, ok := agentCache.m[path]
		agentCache.Unlock()
		if ok && c.size == st.Size() && c.mod.Equal(st.ModTime()) {
			return c.ids
		}
	}
	data, st, err := readCapped(path, maxManifestBytes)
	if err != nil {
		return nil
	}
	// An unparsable sibling is remembered too (with no agents), so it is not parsed again on every load.
	m, err := parseManifest(data)
	if err != nil {
		m = nil
	} else {
		siblingParses.Lock()
		if len(siblingParses.m) >= siblingParsesMax {
			siblingParses.m = map[string]siblingParse{}
		}
		siblingParses.m[path] = siblingParse{data: data, m: m}
		siblingParses.Unlock()
	}
	return rememberAgents(path, st, m)
}

// yamlHint names the usual cause of yaml's least helpful message: a tab in indentation, which YAML forbids
// and hand edits often bring.
func yamlHint(err error, data []byte) string {
	if strings.Contains(err.Error(), "found character that cannot start any token") && bytes.Contains(data, []byte("\n\t")) {
		return " (a line is indented with a tab; YAML allows only spaces)"
	}
	return ""
}
