package resumable

import (
	"path/filepath"
	"testing"

	rt "runwatch/state/resumable/resumabletest"
)

func BenchmarkLoadSphinx(b *testing.B) {
	root := rt.Copy(b)
	path := filepath.Join(rt.Run(root, rt.Sphinx), "state.env")
	env := testEnv(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Load(path, env)
	}
}
