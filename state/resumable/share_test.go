package resumable

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"unsafe"

	"runwatch/model"
	rt "runwatch/state/resumable/resumabletest"
)

// TestRunsShareEqualChecklistsAndFlags: two runs whose checklist items, flags and gates are equal hold one
// array of each (a watcher holds every run's), and read as they did; a run whose items differ holds its own.
func TestRunsShareEqualChecklistsAndFlags(t *testing.T) {
	root := rt.Copy(t)
	state := filepath.Join(rt.Run(root, rt.IRM), "state.env")
	a, b := Load(state, testEnv(t)), Load(state, testEnv(t))
	firstItems := func(r model.Run) *model.ChecklistItem {
		for _, s := range r.Stages {
			if len(s.Checklist) > 0 {
				return unsafe.SliceData(s.Checklist)
			}
		}
		t.Fatal("no checklist")
		return nil
	}
	if len(a.Flags) == 0 {
		t.Fatal("no flags")
	}
	if len(a.Gates) == 0 {
		t.Fatal("no gate")
	}
	if firstItems(a) != firstItems(b) || unsafe.SliceData(a.Flags) != unsafe.SliceData(b.Flags) ||
		unsafe.SliceData(a.Gates) != unsafe.SliceData(b.Gates) {
		t.Error("equal runs hold checklists, flags or gates of their own")
	}
	for i := range a.Stages {
		if len(a.Stages[i].Checklist) != cap(a.Stages[i].Checklist) {
			t.Errorf("stage %s's checklist holds room to spare", a.Stages[i].Key)
		}
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("the runs read otherwise:\n%s\n%s", ja, jb)
	}
	checklist := filepath.Join(filepath.Dir(state), "checklist.state.env")
	writeFile(t, checklist, "CB_S1_OTHER=\"1\"\n")
	c := Load(state, testEnv(t))
	if len(c.Stages[0].Checklist) != 1 || c.Stages[0].Checklist[0].Key != "CB_S1_OTHER" || !c.Stages[0].Checklist[0].Done {
		t.Errorf("the changed run's first stage holds %+v", c.Stages[0].Checklist)
	}
}
