package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/model"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDiscoverBothConventionsArchivedAndSkips(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "app/.jonggrang/.output/features/feat-a/MANIFEST.yaml"), "feature_id: feat-a\n")
	if err := os.MkdirAll(filepath.Join(root, "app/.jonggrang/.output/features/no-manifest"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "reports/run-1/state.env"), "RUN_ID=\"1\"\n")
	write(t, filepath.Join(root, "reports/run-1/checklist.state.env"), "")
	write(t, filepath.Join(root, "reports/run-1/artifacts/nested/state.env"), "") // inside a run: not a run
	write(t, filepath.Join(root, "reports/old-20260215T215421Z.reset-20260215T221903Z/state.env"), "")
	write(t, filepath.Join(root, "reports/recovery.state.env"), "")
	write(t, filepath.Join(root, "reports/node_modules/x/state.env"), "")
	write(t, filepath.Join(root, "reports/.git/y/state.env"), "")

	locs, err := Discover([]string{root}, 4)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Location{}
	for _, l := range locs {
		rel, _ := filepath.Rel(root, l.StatePath)
		got[rel] = l
	}
	want := map[string]model.Kind{
		"app/.jonggrang/.output/features/feat-a/MANIFEST.yaml":          model.KindJonggrang,
		"app/.jonggrang/.output/features/no-manifest/MANIFEST.yaml":     model.KindJonggrang,
		"reports/run-1/state.env":                                       model.KindResumable,
		"reports/old-20260215T215421Z.reset-20260215T221903Z/state.env": model.KindResumable,
		"reports/recovery.state.env":                                    model.KindResumable,
	}
	if len(got) != len(want) {
		t.Fatalf("found %d runs, want %d: %v", len(got), len(want), got)
	}
	for rel, kind := range want {
		l, ok := got[rel]
		if !ok || l.Kind != kind {
			t.Errorf("%s: got %+v, want kind %s", rel, l, kind)
		}
	}
	if !got["reports/old-20260215T215421Z.reset-20260215T221903Z/state.env"].Archived {
		t.Error("reset folder not marked archived")
	}
	if p := got["app/.jonggrang/.output/features/feat-a/MANIFEST.yaml"].ProjectRoot; p != filepath.Join(root, "app") {
		t.Errorf("project root = %q", p)
	}
}

func TestDiscoverSurvivesSymlinkLoopAndBoundsDepth(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a/b/c/d/e/f/state.env"), "")
	write(t, filepath.Join(root, "a/run/state.env"), "")
	if err := os.Symlink(root, filepath.Join(root, "a/loop")); err != nil {
		t.Fatal(err)
	}
	locs, err := Discover([]string{root}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(locs) != 1 || locs[0].StatePath != filepath.Join(root, "a/run/state.env") {
		t.Fatalf("got %+v, want only a/run (deep one is beyond depth 3, loop visited once)", locs)
	}
}

func TestDiscoverMissingPathIsAnError(t *testing.T) {
	_, err := Discover([]string{filepath.Join(t.TempDir(), "nope")}, 2)
	if err == nil {
		t.Fatal("no error for a missing path")
	}
}

func TestDiscoverGivenAStateFileDirectly(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "r/state.env"), "")
	locs, err := Discover([]string{filepath.Join(root, "r/state.env")}, 2)
	if err != nil || len(locs) != 1 || locs[0].Kind != model.KindResumable {
		t.Fatalf("got %+v, %v", locs, err)
	}
}

func TestIsStateFileName(t *testing.T) {
	for name, want := range map[string]bool{
		"state.env": true, "recovery.state.env": true, "remediation.state.env": true,
		"checklist.state.env": false, "x.checklist.state.env": false, ".state.env": false,
		"run-state.template.env": false, "state.env.tmp": false,
	} {
		if IsStateFileName(name) != want {
			t.Errorf("IsStateFileName(%q) = %v", name, !want)
		}
	}
}

func TestDiscoverGivenAFeatureDir(t *testing.T) {
	root := t.TempDir()
	feature := filepath.Join(root, "p/.jonggrang/.output/features/f1")
	write(t, filepath.Join(feature, "MANIFEST.yaml"), "")
	locs, err := Discover([]string{feature}, 2)
	if err != nil || len(locs) != 1 || locs[0].Kind != model.KindJonggrang || locs[0].ProjectRoot != filepath.Join(root, "p") {
		t.Fatalf("got %+v, %v", locs, err)
	}
}

func TestDiscoverNamesFoldersItCannotRead(t *testing.T) {
	if os.Geteuid() == 0 {
		// root reads mode-000 folders; TestBadInputUnreadable in package main runs this as nobody.
		t.Skip("running as root")
	}
	root := t.TempDir()
	write(t, filepath.Join(root, "ok/state.env"), "")
	write(t, filepath.Join(root, "locked/state.env"), "")
	if err := os.Chmod(filepath.Join(root, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(root, "locked"), 0o755) })
	locs, err := Discover([]string{root}, 2)
	unreadable, rest := SplitUnreadable(err)
	if len(locs) != 1 || rest != nil || len(unreadable) != 1 || unreadable[0].Dir != filepath.Join(root, "locked") {
		t.Fatalf("locs %v, unreadable %v, other error %v", locs, unreadable, rest)
	}
}

func TestSplitUnreadableKeepsOtherErrors(t *testing.T) {
	_, err := Discover([]string{filepath.Join(t.TempDir(), "absent")}, 1)
	unreadable, rest := SplitUnreadable(err)
	if len(unreadable) != 0 || rest == nil {
		t.Fatalf("a missing path must stay an error: %v %v", unreadable, rest)
	}
}

// A walk of the named folders finds, for the names it accepts, exactly the runs Discover finds: it only leaves the others
// unlisted.
func TestDiscoverNamedFindsWhatDiscoverFindsForThoseNames(t *testing.T) {
	jg := t.TempDir()
	for _, f := range []string{"feature-a", "feature-b", "iso-feature"} {
		write(t, filepath.Join(jg, "p", ".jonggrang", ".output", "features", f, "MANIFEST.yaml"), "feature_id: "+f+"\n")
	}
	write(t, filepath.Join(jg, "p", ".jonggrang", ".output", "features", "fresh-empty", ".keep"), "")
	os.Remove(filepath.Join(jg, "p", ".jonggrang", ".output", "features", "fresh-empty", ".keep"))
	write(t, filepath.Join(jg, "reports", "iso-lost-state", "run.log"), "[2026-02-16T02:00:00Z] run started\n")
	write(t, filepath.Join(jg, "reports", "folder", "iso-nested", "state.env"), "STATUS=running\n")
	write(t, filepath.Join(jg, "reports", "iso-outside.state.env"), "STATUS=running\n")
	roots := []string{"../testdata/opencode", "../testdata/resumable-c1", "../testdata/bad", jg}
	idOf := func(l Location) string {
		if base := filepath.Base(l.StatePath); l.Kind == model.KindResumable && base != "state.env" {
			return strings.TrimSuffix(base, ".state.env")
		}
		return filepath.Base(l.Dir)
	}
	all, _ := Discover(roots, 0)
	for _, prefix := range []string{"", "i", "iso", "iso26262-mining", "fe", "fresh", "irm-id-full-backfill-20260215T215421Z", "sph", "f", "nothing-by-this-name"} {
		var want, got []string
		for _, l := range all {
			if strings.HasPrefix(idOf(l), prefix) {
				want = append(want, l.StatePath)
			}
		}
		named, _ := discover(roots, 0, func(name string) bool { return strings.HasPrefix(name, prefix) }, osFS{})
		for _, l := range named {
			if strings.HasPrefix(idOf(l), prefix) {
				got = append(got, l.StatePath)
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("prefix %q: the named walk found\n%s\nDiscover\n%s", prefix, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if prefix == "iso" && len(want) < 5 {
			t.Errorf("the fixtures changed: only %d runs start with i", len(want))
		}
	}
}
