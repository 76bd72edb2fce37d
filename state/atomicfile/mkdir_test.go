package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestMkdirBeneathCreatesOnlyWhatIsMissingAndTakesItBack(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.Mkdir(filepath.Join(dir, "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := openRoot(t, dir)
	made, err := r.MkdirBeneath(filepath.Join(dir, "run", "lock", "deep"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "run", "lock", "deep"), filepath.Join(dir, "run", "lock")}
	if len(made) != 2 || made[0] != want[0] || made[1] != want[1] {
		t.Fatalf("created %v, want %v (deepest first, not the existing run/)", made, want)
	}
	again, err := r.MkdirBeneath(filepath.Join(dir, "run", "lock", "deep"))
	if err != nil || len(again) != 0 {
		t.Fatalf("second mkdir created %v (%v), want nothing", again, err)
	}
	write(t, filepath.Join(dir, "run", "lock", "keep"), "x", 0o644)
	for _, d := range made {
		removed, err := r.RemoveDirIfEmpty(d)
		if err != nil {
			t.Fatal(err)
		}
		if removed != (d == want[0]) {
			t.Fatalf("RemoveDirIfEmpty(%s) = %v: only the empty folder goes", d, removed)
		}
	}
	if read(t, filepath.Join(dir, "run", "lock", "keep")) != "x" {
		t.Fatal("a file in a non-empty folder was lost")
	}
}

func TestMkdirBeneathFollowsNoLinkAndStaysInside(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	r := openRoot(t, dir)
	var ue *UnsafePathError
	if _, err := r.MkdirBeneath(filepath.Join(dir, "link", "lock")); !errors.As(err, &ue) {
		t.Fatalf("mkdir through a link: %v, want an UnsafePathError", err)
	}
	if _, err := r.MkdirBeneath(filepath.Join(outside, "lock")); !errors.As(err, &ue) {
		t.Fatalf("mkdir outside the root: %v, want an UnsafePathError", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("created %v outside the root", entries)
	}
}
