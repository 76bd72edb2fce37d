package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDurationFlagSaysWhatADurationIs (issue 24 point 7): --poll 2 says a duration looks like 2s, not
// only "parse error".
func TestDurationFlagSaysWhatADurationIs(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--poll", "2", t.TempDir()}, {"status", "--stale-after", "30", t.TempDir()}} {
		code, _, stderr := run(t, args...)
		if code != 2 || !strings.Contains(stderr, "not a duration: give one like 2s") || strings.Contains(stderr, "parse error") {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
}

// TestPlainFileAsPath (issue 24 point 7): a file given as PATH means that file's run (a run.log: the run
// whose folder holds it), never "scan its folder"; a file in no run's folder is an error naming it.
func TestPlainFileAsPath(t *testing.T) {
	t.Parallel()
	jg, oc := fixtureWorkspace(t)
	reports := filepath.Join(oc, "reports")
	entries, err := os.ReadDir(reports)
	if err != nil || len(entries) < 2 {
		t.Fatalf("fixture reports: %v %d", err, len(entries))
	}
	var logOf string
	for _, e := range entries {
		if p := filepath.Join(reports, e.Name(), "run.log"); e.IsDir() && !strings.Contains(e.Name(), "reset") {
			if _, err := os.Stat(filepath.Join(reports, e.Name(), "state.env")); err == nil {
				if _, err := os.Stat(p); err == nil {
					logOf = e.Name()
					break
				}
			}
		}
	}
	if logOf == "" {
		t.Fatal("no fixture run with a state.env and a run.log")
	}
	stray := filepath.Join(reports, "notes.txt")
	if err := os.WriteFile(stray, []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "status", stray)
	if code != 2 || !strings.Contains(stderr, stray+": a file, not a folder of runs") || strings.Contains(stdout, "RUN") {
		t.Errorf("a stray file as PATH: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, "status", filepath.Join(reports, logOf, "run.log"))
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); len(lines) != 2 || !strings.Contains(lines[1], logOf) {
		t.Errorf("a run.log as PATH lists (exit %d):\n%s", code, stdout)
	}
	_ = jg
}
