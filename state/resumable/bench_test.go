package resumable

import (
	"fmt"
	"path/filepath"
	"testing"

	rt "runwatch/state/resumable/resumabletest"
)

func BenchmarkLoadSphinx(b *testing.B) {
	root := rt.Copy(b)
	path := filepath.Join(rt.Run(root, rt.Sphinx), "state.env")
	env := testEnv(b)
	for b.Loop() {
		Load(path, env)
	}
}

// BenchmarkLoad1000Runs loads 1,000 run folders (copies of the sphinx fixture: 16 stages, 11 checklist items,
// an env-style lock on another host, a run.log) per op: the resumable share of "startup with 1,000 run roots".
func BenchmarkLoad1000Runs(b *testing.B) {
	root := rt.Copy(b)
	src := rt.Run(root, rt.Sphinx)
	var paths []string
	for i := range 1000 {
		dst := filepath.Join(b.TempDir(), fmt.Sprintf("run-%04d", i))
		rt.CopyDir(b, src, dst)
		paths = append(paths, filepath.Join(dst, "state.env"))
	}
	env := testEnv(b)
	b.ResetTimer()
	for b.Loop() {
		for _, p := range paths {
			Load(p, env)
		}
	}
}
