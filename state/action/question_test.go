package action

import (
	"os"
	"path/filepath"
	"testing"
)

// TestQuestionSaysWhatIsWritten (issue 36): the confirmation names the files it writes, under the run's
// folder, where it asked "Apply this change?".
func TestQuestionSaysWhatIsWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "run")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	state, log := filepath.Join(dir, "state.env"), filepath.Join(dir, "run.log")
	lock := filepath.Join(dir, "lock", "active.lock")
	for _, c := range []struct {
		p    Plan
		want string
	}{
		{Plan{dir: dir, Files: []FileChange{{Path: state}}, LogPath: log, LogLine: "x"}, "Write this change to state.env and run.log?"},
		{Plan{dir: link, Files: []FileChange{{Path: state}}}, "Write this change to state.env?"},
		{Plan{dir: dir, Files: []FileChange{{Path: lock, Remove: true}}, LogPath: log, LogLine: "x"}, "Remove lock/active.lock and append to run.log?"},
		{Plan{dir: dir, Files: []FileChange{{Path: "/elsewhere/MANIFEST.yaml"}}}, "Write this change to /elsewhere/MANIFEST.yaml?"},
		{Plan{dir: dir}, "Apply this change?"},
	} {
		if got := c.p.Question(); got != c.want {
			t.Errorf("Question() = %q, want %q", got, c.want)
		}
	}
}
