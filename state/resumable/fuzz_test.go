package resumable

import (
	"os"
	"path/filepath"
	"testing"

	"runwatch/model"
	rt "runwatch/state/resumable/resumabletest"
)

// FuzzLoad feeds arbitrary bytes as state.env, checklist.state.env and run.lock: Load must never panic and
// must always return a consistent run.
func FuzzLoad(f *testing.F) {
	src := rt.Source()
	for _, run := range []string{rt.IRM, rt.Mining, rt.Sphinx, rt.Broken, rt.Export} {
		dir := filepath.Join(src, "reports", run)
		state, _ := os.ReadFile(filepath.Join(dir, "state.env"))
		checklist, _ := os.ReadFile(filepath.Join(dir, "checklist.state.env"))
		lock, _ := os.ReadFile(filepath.Join(dir, "run.lock"))
		f.Add(state, checklist, lock)
	}
	f.Add([]byte("CURRENT_STAGE=S1\nS1_DONE=1\n"), []byte("CB_S1_A=x\n"), []byte(`{"pid": -1}`))
	// One folder per fuzz process, rewritten each time: a fresh temp dir per input costs more than Load.
	dir := filepath.Join(f.TempDir(), "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	env := testEnv(f)
	f.Fuzz(func(t *testing.T, state, checklist, lock []byte) {
		for name, data := range map[string][]byte{"state.env": state, "checklist.state.env": checklist, "run.lock": lock} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := Load(filepath.Join(dir, "state.env"), env)
		if r.Status == "" || r.Progress.Total != len(r.Stages) || r.Resumable == nil {
			t.Fatalf("inconsistent run: status %q progress %+v stages %d", r.Status, r.Progress, len(r.Stages))
		}
		for _, s := range r.Stages {
			if s.Key == "" || s.Checklist == nil {
				t.Fatalf("stage %+v", s)
			}
		}
		for _, p := range r.Problems {
			if p.Code == "" || p.Message == "" {
				t.Fatalf("problem %+v", p)
			}
		}
		for _, l := range r.Locks {
			if l.Verdict == "" || len(l.Reasons) == 0 {
				t.Fatalf("lock not judged: %+v", l)
			}
		}
		if r.HasErrors() && r.Status == model.StatusPaused {
			t.Fatalf("a run with an error-severity problem is %q", r.Status)
		}
	})
}
