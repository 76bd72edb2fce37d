package jonggrang

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkLoadFixtureFeature loads the richest fixture feature: manifest, two phase outputs, tasks,
// progress, four locks and every ephemeral file.
func BenchmarkLoadFixtureFeature(b *testing.B) {
	p := copyFixtureB(b)
	env := realEnv()
	b.ReportAllocs()
	for b.Loop() {
		Load(p.feature(fidLogin), env)
	}
}

// BenchmarkLoadProjectOf100Features loads every feature of a project with 100 incomplete features and one
// unclaimed lock, so each load must check the lock against every other feature's agents.
func BenchmarkLoadProjectOf100Features(b *testing.B) {
	p := copyFixtureB(b)
	manifest := p.read(filepath.Join(p.feature(fidLogin), ManifestName))
	var dirs []string
	for i := 0; i < 100; i++ {
		fid := fmt.Sprintf("feature-%03d", i)
		text := strings.ReplaceAll(manifest, fidLogin, fid)
		text = strings.ReplaceAll(text, "developer-auth-001", "developer-"+fid)
		p.write(filepath.Join(p.feature(fid), ManifestName), text)
		dirs = append(dirs, p.feature(fid))
	}
	p.setLock("unclaimed.lock", "nobody", nil, time.Now(), 0)
	env := realEnv()
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range dirs {
			Load(d, env)
		}
	}
}

func copyFixtureB(b *testing.B) *project {
	b.Helper()
	root := filepath.Join(b.TempDir(), "app")
	if err := copyTree(fixtureSrc, root); err != nil {
		b.Fatal(err)
	}
	return &project{t: b, root: root}
}
