package state

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"runwatch/heaptest"
)

// DiscoverEach holds what it needs to take a run once (the folders walked, a hash of each state file
// found), with next to no pointer for the collector to follow: not the locations (Discover's list, with
// their paths) nor their paths (Discover's seen set), which hold about twice as much and many pointers (the
// figures are in docs/BENCHMARKS.md, "status at 10,000 and 100,000 runs"). The heap is measured after a collection as the last run of a
// tree is found, over a tree and over one four times as big, runs 20 to a folder so the folder being listed
// is the same size in both.
func TestDiscoverEachHoldsFewBytesPerRun(t *testing.T) {
	heaptest.SkipUnderRace(t)
	const n = 1000
	small, big := runsTree(t, n), runsTree(t, 4*n)
	a, b := discoverHeapAtLast(t, small, n), discoverHeapAtLast(t, big, 4*n)
	live, scan := (int64(b.Live)-int64(a.Live))/(3*n), (int64(b.Scan)-int64(a.Scan))/(3*n)
	t.Logf("heap as the last run is found: %d KiB of %d runs (%d KiB scannable), %d KiB of %d (%d KiB): %d bytes a run, %d scannable",
		a.Live>>10, n, a.Scan>>10, b.Live>>10, 4*n, b.Scan>>10, live, scan)
	if live > 250 || scan > 16 {
		t.Errorf("discovery holds %d bytes a run, %d of them scannable; at most 250 and 16", live, scan)
	}
}

// runsTree makes n resumable run folders, 20 to a folder.
func runsTree(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("g%03d", i/20), fmt.Sprintf("run-%05d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "state.env"), []byte("TASK_NAME=\"t\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func discoverHeapAtLast(t *testing.T, root string, n int) heaptest.Bytes {
	t.Helper()
	found := 0
	var at heaptest.Bytes
	err := DiscoverEach([]string{root}, 0, func(Location) {
		if found++; found == n {
			at = heaptest.Now()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if found != n {
		t.Fatalf("found %d runs of %d", found, n)
	}
	return at
}
