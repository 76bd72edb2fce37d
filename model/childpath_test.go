package model

import (
	"path/filepath"
	"testing"
)

// ChildPath stands in for filepath.Join wherever the folder is clean and the name is one entry of it.
func TestChildPathIsJoin(t *testing.T) {
	for _, dir := range []string{"/", "/work", "/work/perf/runs", ".", "runs", "a/b", "", "/r/artifacts/checkpoints"} {
		for _, name := range []string{"state.env", "run.log", "S1.done.json", ".hidden", "x..y", "..x", "a b"} {
			if got, want := ChildPath(dir, name), filepath.Join(dir, name); got != want {
				t.Errorf("ChildPath(%q, %q) = %q, filepath.Join gives %q", dir, name, got, want)
			}
		}
	}
}
