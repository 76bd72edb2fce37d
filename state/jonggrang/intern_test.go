package jonggrang

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"runwatch/model"
)

// The words every feature's manifest repeats (phase numbers and names, agents' roles and statuses, the
// outputs' phases) are held once, however many features the dashboard shows (issue 35).
func TestFeaturesShareTheirPhaseWords(t *testing.T) {
	t.Parallel()
	p := copyFixture(t)
	a := Load(p.feature(fidLogin), realEnv())
	runtime.GC() // a word interned stays so across collections
	b := Load(p.feature(fidTypo), realEnv())
	shared := func(what, x, y string) {
		if x != y {
			t.Fatalf("%s: %q and %q", what, x, y)
		}
		if unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s %q is held by each feature", what, x)
		}
	}
	shared("phase key", a.Stages[0].Key, b.Stages[0].Key)
	shared("phase name", a.Stages[0].Name, b.Stages[0].Name)
	ja, jb := a.Jonggrang, b.Jonggrang
	if len(ja.Agents) == 0 || len(ja.PhaseOutputs) == 0 || len(ja.ActivePhases) == 0 || len(jb.ActivePhases) == 0 {
		t.Fatal("the login feature has no agents or outputs, or a feature no active phases")
	}
	shared("active phase", ja.ActivePhases[0], jb.ActivePhases[0])
	shared("agent status", ja.Agents[0].Status, model.Intern(ja.Agents[0].Status))
	shared("agent role", ja.Agents[0].Role, model.Intern(ja.Agents[0].Role))
	shared("output role", ja.PhaseOutputs[0].Role, model.Intern(ja.PhaseOutputs[0].Role))
	shared("output phase", ja.PhaseOutputs[0].Phase, model.Intern(ja.PhaseOutputs[0].Phase))
	shared("status", a.RawStatus, model.Intern(a.RawStatus))
	shared("work type", ja.WorkType, model.Intern(ja.WorkType))
	shared("pipeline mode", ja.PipelineMode, model.Intern(ja.PipelineMode))
	if len(a.Flags) == 0 || len(ja.Tasks) == 0 {
		t.Fatal("the login feature has no validation flags or tasks")
	}
	shared("validation flag", a.Flags[0].Name, model.Intern(a.Flags[0].Name))
	shared("task status", ja.Tasks[0].Status, model.Intern(ja.Tasks[0].Status))
	files := 0
	for i := range a.Stages {
		for _, f := range a.Stages[i].OutputFiles() {
			files++
			shared("output file type", f.Type, model.Intern(f.Type))
			shared("output file task", f.TaskID, model.Intern(f.TaskID))
		}
	}
	if files == 0 {
		t.Fatal("the login feature's phases list no output files")
	}
}

// A feature's lists are made as long as what they hold: grown by appending they held up to twice their
// room for as long as the run is shown (issue 35).
func TestFeatureListsHoldNoSpareRoom(t *testing.T) {
	t.Parallel()
	p := copyFixture(t)
	r := Load(p.feature(fidLogin), realEnv())
	j := r.Jonggrang
	tight := func(what string, n, room int) {
		if n == 0 {
			t.Errorf("the login feature has no %s", what)
		} else if room != n {
			t.Errorf("%s: %d held in room for %d", what, n, room)
		}
	}
	tight("active phases", len(j.ActivePhases), cap(j.ActivePhases))
	tight("agents", len(j.Agents), cap(j.Agents))
	tight("validation flags", len(r.Flags), cap(r.Flags))
	tight("phase outputs", len(j.PhaseOutputs), cap(j.PhaseOutputs))
	tight("progress lines", len(j.ProgressTail), cap(j.ProgressTail))
	for i := range r.Stages {
		if files := r.Stages[i].OutputFiles(); len(files) > 0 {
			tight("output files of phase "+r.Stages[i].Key, len(files), cap(files))
		}
	}
}

// An id a manifest spells several times (an agent's, in the files it wrote and in its phase outputs) is held
// once by the run (issue 35).
func TestAFeatureHoldsEachAgentIDOnce(t *testing.T) {
	t.Parallel()
	p := copyFixture(t)
	r := Load(p.feature(fidLogin), realEnv())
	ids := map[string]*byte{}
	for _, a := range r.Jonggrang.Agents {
		ids[a.ID] = unsafe.StringData(a.ID)
	}
	files, outputs := 0, 0
	for i := range r.Stages {
		for _, f := range r.Stages[i].OutputFiles() {
			if at, ok := ids[f.AgentID]; ok {
				files++
				if unsafe.StringData(f.AgentID) != at {
					t.Errorf("output file %s: its agent %q is a copy of the agent's id", f.Path, f.AgentID)
				}
			}
		}
	}
	for _, o := range r.Jonggrang.PhaseOutputs {
		if at, ok := ids[o.AgentID]; ok {
			outputs++
			if unsafe.StringData(o.AgentID) != at {
				t.Errorf("phase output %s: its agent %q is a copy of the agent's id", o.File, o.AgentID)
			}
		}
	}
	if files == 0 || outputs == 0 {
		t.Fatalf("the login feature's agents wrote %d output files and %d phase outputs: the test needs both", files, outputs)
	}
}

// A feature read by the path it was found at keeps that string, in its run, its problems and the agents'
// cache, whichever read parsed its manifest first (its own, or a sibling's for the locks): the finder keeps
// the path too (issue 35).
func TestAFeatureKeepsThePathItWasFoundAt(t *testing.T) {
	p, _ := liveLoginProject(t)
	env := realEnv()
	_ = Load(p.feature(fidLogin), env) // parses its siblings' manifests for their agents
	for _, fid := range []string{fidBilling, fidLogin} {
		found := strings.Clone(filepath.Join(p.feature(fid), ManifestName))
		r := LoadFound(p.feature(fid), found, env)
		if unsafe.StringData(r.StatePath) != unsafe.StringData(found) {
			t.Errorf("%s: the run's state path is a copy of the path it was found at", fid)
		}
		for _, pr := range r.Problems {
			if pr.Path == found && unsafe.StringData(pr.Path) != unsafe.StringData(found) {
				t.Errorf("%s: problem %s names a copy of the path it was found at", fid, pr.Code)
			}
		}
		agentCache.Lock()
		for k := range agentCache.m {
			if k == found && unsafe.StringData(k) != unsafe.StringData(found) {
				t.Errorf("%s: the agents' cache keeps a copy of the path it was found at", fid)
			}
		}
		agentCache.Unlock()
	}
}
