//go:build linux

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// --read-only typed on the line being completed writes nothing, as read_only in the config does: the walk
// cache stays unwritten. Without it the same TAB writes the cache (so the test would see the write).
func TestReadOnlyTypedOnTheLineWritesNoWalkCache(t *testing.T) {
	_, e := completionTree(t)
	for _, readOnly := range []bool{true, false} {
		cache := t.TempDir()
		words := []string{"check", "iso"}
		if readOnly {
			words = []string{"check", "--read-only", "iso"}
		}
		if got := candidates(t, e.with("XDG_CACHE_HOME", cache), words...); len(got) == 0 {
			t.Fatalf("%q: no candidates", words)
		}
		entries, _ := os.ReadDir(cache)
		if readOnly && len(entries) > 0 {
			t.Errorf("TAB after --read-only wrote %v in the cache folder", entries)
		}
		if !readOnly && len(entries) == 0 {
			t.Errorf("the TAB wrote no walk cache, so this test cannot see a read-only write")
		}
	}
}

// status under read_only: true makes no spill file (it made one in the temp folder and unlinked it): the
// temp folder sees no open at all. Without read_only it does (so the test would see it).
func TestReadOnlyStatusMakesNoTempFile(t *testing.T) {
	root, e := completionTree(t)
	for _, readOnly := range []bool{true, false} {
		tmp := t.TempDir()
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf("read_only: %v\n", readOnly)), 0o644); err != nil {
			t.Fatal(err)
		}
		w := watchOpens(t, tmp)
		if code, out, stderr := runIn(t, e.with("TMPDIR", tmp), "status", "--config", cfg, "--json", root); !strings.Contains(out, `"runs"`) {
			t.Fatalf("status: exit %d, stderr %s", code, stderr)
		}
		opened := w.drain(t)
		if readOnly && len(opened) > 0 {
			t.Errorf("read-only status opened %q in the temp folder", opened)
		}
		if !readOnly && len(opened) == 0 {
			t.Errorf("status made no spill file, so this test cannot see a read-only write")
		}
	}
}

// A full temp folder (a 16 KiB tmpfs, as root) during status is said once, with what it means, and the
// status is still whole (the runs are kept in memory instead); it was said once per run after the first
// failed write (442 lines for 600 runs), and status failed.
func TestAFullTempFolderIsSaidOnce(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root (CI runs as root)")
	}
	tmp := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", tmp).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", tmp).Run() })
	root := t.TempDir()
	const runs = 600
	for i := range runs {
		if err := os.CopyFS(filepath.Join(root, fmt.Sprintf("full-%03d-20260215T000000Z", i)), os.DirFS(filepath.Join("..", "testdata", "bad", "base", "resumable"))); err != nil {
			t.Fatal(err)
		}
	}
	_, out, stderr := runIn(t, testEnv(t, "TMPDIR", tmp), "status", "--json", root)
	var snap struct {
		Runs []json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &snap); err != nil || len(snap.Runs) != runs {
		t.Errorf("status --json holds %d runs (%v), want %d; stderr:\n%.2000s", len(snap.Runs), err, runs, stderr)
	}
	if n := strings.Count(stderr, "no space left on device"); n != 1 || !strings.Contains(stderr, "kept in memory instead") {
		t.Errorf("the full temp folder is said %d times, want once saying what it means:\n%.2000s", n, stderr)
	}
}
