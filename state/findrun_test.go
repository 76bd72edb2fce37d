package state

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/model"
)

// FindRun takes RUN as a folder, a whole id, the start of one, or the RUN_ID a state file says: an exact id
// beats a prefix, an ambiguous prefix lists its candidates, and a RUN not under the roots is looked for in
// the current directory before "no such run" names where it looked.
func TestFindRunNamesOneRunOrSaysWhyNot(t *testing.T) {
	root, here := t.TempDir(), t.TempDir()
	reports := filepath.Join(root, "reports")
	for name, env := range map[string]string{
		"backfill-20261201T051800Z": `RUN_ID="backfill-20261201T051800Z"`,
		"backfill-20261201T061800Z": `RUN_ID="backfill-20261201T061800Z"`,
		"abc":                       `RUN_ID="abc"`,
		"abc-2":                     `RUN_ID="abc-2"`,
		"folder-name":               `RUN_ID="the-runs-own-id"`,
	} {
		write(t, filepath.Join(reports, name, "state.env"), env+"\n")
	}
	write(t, filepath.Join(here, "reports", "here-1", "state.env"), `RUN_ID="here-1"`+"\n")
	t.Chdir(here)
	roots := []string{root}

	for arg, want := range map[string]string{
		"backfill-20261201T05":               "backfill-20261201T051800Z",
		"abc":                                "abc", // exact, though abc-2 starts with it
		"the-runs-own-id":                    "folder-name",
		filepath.Join(reports, "abc-2"):      "abc-2",
		filepath.Join(reports, "abc-2", "."): "abc-2",
		"here-1":                             "here-1", // in the current directory, not under the roots
	} {
		loc, walked, err := FindRun(arg, roots, 0)
		if err != nil {
			t.Errorf("%s: %v", arg, err)
			continue
		}
		if got := LocationID(loc); got != want {
			t.Errorf("%s: found %s, want %s", arg, got, want)
		}
		if isPath := strings.HasPrefix(arg, "/"); isPath != (walked == nil) {
			t.Errorf("%s: the runs walked are %d; a path walks none, an id the roots", arg, len(walked))
		}
	}

	_, _, err := FindRun("backfill", roots, 0)
	if !errors.Is(err, ErrAmbiguousRun) || !strings.Contains(err.Error(), "backfill-20261201T051800Z (") ||
		!strings.Contains(err.Error(), "backfill-20261201T061800Z (") {
		t.Errorf("an ambiguous prefix: %v; want both candidates listed", err)
	}
	_, _, err = FindRun("nothing", roots, 0)
	if !errors.Is(err, ErrNoRun) || !strings.Contains(err.Error(), root) || !strings.Contains(err.Error(), here) ||
		!strings.Contains(err.Error(), "--root DIR") {
		t.Errorf("no such run: %v; want the roots and the current directory named, and --root", err)
	}
	// A word inside ids, as the dashboard's filter finds runs: not a RUN, but the ids that hold it are named.
	_, _, err = FindRun("1800z", roots, 0)
	if !errors.Is(err, ErrNoRun) || !strings.HasSuffix(err.Error(), "did you mean backfill-20261201T051800Z or backfill-20261201T061800Z?") {
		t.Errorf("a word inside two ids: %v; want both offered", err)
	}
}

// MatchRun over runs read (RunNameOf), as events --run matches them: an id or a path beats the RUN_ID a run
// says, which beats the start of an id; several of one kind are all named.
func TestMatchRunOverRunsRead(t *testing.T) {
	run := func(id, dir, runID string) model.Run {
		return model.Run{ID: id, Dir: dir, StatePath: dir + "/state.env", Resumable: &model.ResumableDetail{RunID: " " + runID + " "}}
	}
	runs := []model.Run{run("job-a", "/r/job-a", "alpha"), run("job-b", "/r/job-b", "job-a"), run("alpha-2", "/r/alpha-2", ""),
		{ID: "feat", Dir: "/p/feat", StatePath: "/p/feat/MANIFEST.yaml"}}
	ids := func(arg, path string) string {
		var out []string
		for _, r := range MatchRun(runs, arg, path, func(r model.Run) RunName { return RunNameOf(&r) }) {
			out = append(out, r.ID)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct{ arg, path, want string }{
		{"job-a", "", "job-a"},               // its id, though job-b's RUN_ID is job-a too
		{"alpha", "", "job-a"},               // a RUN_ID beats alpha-2's prefix
		{"job", "", "job-a job-b"},           // a prefix of two: both, for the caller to refuse
		{"x", "/r/job-b/state.env", "job-b"}, // a state file on disk
		{"feat", "", "feat"},                 // a run that is not resumable
		{"nothing", "", ""},
	} {
		if got := ids(c.arg, c.path); got != c.want {
			t.Errorf("MatchRun(%q, %q) = %q, want %q", c.arg, c.path, got, c.want)
		}
	}
}
