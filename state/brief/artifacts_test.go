package brief

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestScanArtifactBlocks(t *testing.T) {
	long := strings.Repeat("x", maxScanLine*2)
	log := strings.Join([]string{
		"[2026-02-15T01:50:43Z] run bootstrapped",
		"  artifact=/not/in/a/block.json",
		"[2026-02-15T01:58:34Z] S1 artifact integrity",
		"  artifact=/r/artifacts/s1/a.json",
		"  sha256=00",
		"\tartifact=/r/artifacts/s1/b.log\r",
		"[2026-02-15T01:59:00Z] " + long,
		"  artifact=/after/a/long/line.json",
		"[2026-02-15T02:10:00Z] S2 artifact integrity",
		"  artifact=/r/artifacts/s1/a.json",
		"  artifact=",
		"free text artifact=/continuation/still/in/block.json",
		"[not a timestamp] S3 artifact integrity",
		"  artifact=/r/artifacts/s3/c.json",
	}, "\n") // no final newline: the last line is still read
	path := filepath.Join(t.TempDir(), "run.log")
	writeFile(t, path, log)
	got, err := scanArtifactBlocks(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []recordedArtifact{
		{stage: "S2", path: "/r/artifacts/s1/a.json"}, // recorded again by S2: the later block wins
		{stage: "S1", path: "/r/artifacts/s1/b.log"},
		{stage: "S2", path: "/r/artifacts/s3/c.json"}, // "[not a timestamp]" is a continuation line
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if _, err := scanArtifactBlocks(filepath.Join(t.TempDir(), "missing.log")); !os.IsNotExist(err) {
		t.Fatalf("missing log: %v", err)
	}
}

func FuzzScanArtifactBlocks(f *testing.F) {
	f.Add([]byte("[2026-02-15T01:58:34Z] S1 artifact integrity\n  artifact=/a\n  sha256=1\n"))
	f.Add([]byte("[] artifact integrity\nartifact=\n[2"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "run.log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := scanArtifactBlocks(path)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, a := range got {
			if a.path == "" || seen[a.path] {
				t.Fatalf("empty or repeated path in %+v", got)
			}
			seen[a.path] = true
		}
	})
}

// BenchmarkScanArtifactBlocks measures the full run.log pass a resumable brief makes.
func BenchmarkScanArtifactBlocks(b *testing.B) {
	path := filepath.Join(b.TempDir(), "run.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := 0; i < 1_000_000; i++ {
		fmt.Fprintf(w, "[2026-02-15T01:50:%02dZ] stage_progress stage=S%d step=%d detail=%s\n", i%60, i%9, i, strings.Repeat("y", 60))
		if i%10_000 == 0 {
			fmt.Fprintf(w, "[2026-02-15T01:58:34Z] S%d artifact integrity\n  artifact=/r/artifacts/%d.json\n  sha256=00\n  size_bytes=2\n", i%9, i)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	b.SetBytes(st.Size())
	b.ResetTimer()
	for b.Loop() {
		if _, err := scanArtifactBlocks(path); err != nil {
			b.Fatal(err)
		}
	}
}
