package cli

import (
	"io"
	"os"
	"testing"

	"runwatch/sim"
)

// BenchmarkStatusJSON1200Runs is `runwatch status --json` in process over 1,000 resumable runs and 200
// jonggrang features, for CPU profiles of where status spends its time (docs/BENCHMARKS.md, Scale):
//
//	go test ./cli -run '^$' -bench StatusJSON1200 -benchtime 10x -cpuprofile /tmp/status.prof
//
// RUNWATCH_SCALE_DIR names a workspace bench/scale generated (its runs/ folder) to skip generating one.
func BenchmarkStatusJSON1200Runs(b *testing.B) {
	dir := os.Getenv("RUNWATCH_SCALE_DIR")
	if dir == "" {
		dir = b.TempDir()
		if _, err := sim.GenerateMix(dir, 200, 1000); err != nil {
			b.Fatal(err)
		}
	}
	e := testEnv(b)
	b.ResetTimer()
	for b.Loop() {
		if code := dispatch([]string{"status", "--json", dir}, io.Discard, io.Discard, e); code == exitUsage {
			b.Fatalf("status exited %d", code)
		}
	}
}
