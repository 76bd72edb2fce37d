package watch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"runwatch/model"
)

// c2Project makes a jonggrang project with an empty features folder and returns its root and that folder.
func c2Project(t *testing.T) (root, features string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "app")
	features = filepath.Join(root, ".jonggrang", ".output", "features")
	if err := os.MkdirAll(features, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".jonggrang", "locks"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root, features
}

// c2Manifest is a manifest as js-yaml writes it (testdata/jonggrang-c2), with its feature id replaced.
func c2Manifest(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../testdata/jonggrang-c2/.jonggrang/.output/features/reopened-cart-mlopc001/MANIFEST.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// createManifest makes the feature folder and then writes the file, as the convention's createManifest does:
// a reader can see the folder empty in between. The new feature is never handed out as blocked.
func TestNewFeatureFolderIsNotBlockedBeforeItsManifest(t *testing.T) {
	root, features := c2Project(t)
	// A grace far longer than the gap below, so the outcome does not depend on scheduling.
	v := newView(t, Options{Paths: []string{root}, grace: time.Minute})
	dir := filepath.Join(features, "reopened-cart-mlopc001")
	sp := filepath.Join(dir, "MANIFEST.yaml")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A gap longer than the reader's own second look (30 ms), so only the watcher's grace covers it; any gap
	// shorter than the grace passes.
	time.Sleep(200 * time.Millisecond)
	writeFile(t, sp, c2Manifest(t))
	v.until("the new feature", func() bool { r, ok := v.run(sp); return ok && r.RawStatus == "in_progress" })
	for _, st := range v.statuses[sp] {
		if st == model.StatusBlocked {
			t.Fatalf("the new feature was handed out as %v before its manifest was written", v.statuses[sp])
		}
	}
	if v.removed[sp] != 0 {
		t.Fatal("the new feature was reported removed")
	}
}

// A feature folder that stays empty past the grace is shown: its manifest is missing.
func TestEmptyFeatureFolderPastTheGraceIsShown(t *testing.T) {
	root, features := c2Project(t)
	v := newView(t, Options{Paths: []string{root}, grace: 20 * time.Millisecond})
	dir := filepath.Join(features, "stuck-mlopc009")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(dir, "MANIFEST.yaml")
	v.until("the empty feature, with its manifest missing", func() bool {
		r, ok := v.run(sp)
		if !ok {
			return false
		}
		for _, p := range r.Problems {
			if p.Code == model.CodeManifestMissing {
				return true
			}
		}
		return false
	})
}

// A plan waiting for approval (plan.md, no manifest) is not a run; it becomes one when its manifest appears.
func TestPlannedFeatureBecomesARunWithItsManifest(t *testing.T) {
	root, features := c2Project(t)
	v := newView(t, Options{Paths: []string{root}, grace: time.Minute})
	planned := filepath.Join(features, "planned-search-mlopc003")
	writeFile(t, filepath.Join(planned, "plan.md"), "# Plan: full-text search\n")
	// A second feature created after the plan: once it is seen, the plan's folder has been too.
	other := filepath.Join(features, "reopened-cart-mlopc001", "MANIFEST.yaml")
	writeFile(t, other, c2Manifest(t))
	v.until("the other feature", func() bool { _, ok := v.run(other); return ok })
	sp := filepath.Join(planned, "MANIFEST.yaml")
	if _, ok := v.run(sp); ok || len(v.statuses[sp]) > 0 {
		t.Fatalf("the planned feature was handed out as a run: %v", v.statuses[sp])
	}
	writeFile(t, sp, c2Manifest(t))
	v.until("the planned feature, now with a manifest", func() bool { _, ok := v.run(sp); return ok })
	for _, st := range v.statuses[sp] {
		if st == model.StatusBlocked {
			t.Fatalf("statuses %v", v.statuses[sp])
		}
	}
}
