package sim

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkGenerateRuns1000 is the set-up cost of a 1,000-run-root tree for the startup benchmarks.
func BenchmarkGenerateRuns1000(b *testing.B) {
	for b.Loop() {
		if _, err := GenerateRuns(b.TempDir(), 1000); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGrowLog measures how fast a large run.log can be produced (bytes/s).
func BenchmarkGrowLog(b *testing.B) {
	const size = 64 << 20
	b.SetBytes(size)
	for b.Loop() {
		if _, err := GrowLog(filepath.Join(b.TempDir(), "run.log"), size); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkManifestWrite is one whole-file manifest rewrite of a 19-phase run (what the jonggrang writer
// does on every step).
func BenchmarkManifestWrite(b *testing.B) {
	dir := b.TempDir()
	m := newManifest("add-login-form-mx2k4y6m", "Add login form with validation", "MEDIUM", true, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), 0)
	for b.Loop() {
		if err := m.write(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendLog100k checks that AppendLog keeps up with 100,000 entries a second (the dashboard's
// "100k lines/s for 10 s" goal needs a writer that can): it reports the rate reached over one second.
func BenchmarkAppendLog100k(b *testing.B) {
	for b.Loop() {
		start := time.Now()
		n, err := AppendLog(filepath.Join(b.TempDir(), "run.log"), 100_000, time.Second)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "entries/s")
	}
}
