package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/sim"
)

// read_only writes nothing anywhere: `brief` of a run whose log is large enough for the artifact index to be
// kept on disk leaves the cache folder as it was; without read_only the same brief writes it (so the test
// would see a write).
func TestReadOnlyBriefWritesNoCache(t *testing.T) {
	t.Parallel()
	run := filepath.Join(t.TempDir(), "big-20260301T101500Z")
	if err := os.CopyFS(run, os.DirFS(filepath.Join("..", "testdata", "resumable-c1", "reports", "iso26262-mining-20260301T101500Z"))); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.GrowLog(filepath.Join(run, "run.log"), 17<<20); err != nil {
		t.Fatal(err)
	}
	for _, readOnly := range []bool{true, false} {
		cache, cfg := t.TempDir(), filepath.Join(t.TempDir(), "config.yaml")
		body := "read_only: false\n"
		if readOnly {
			body = "read_only: true\n"
		}
		if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runBinary(t, []string{"XDG_CACHE_HOME=" + cache, "XDG_STATE_HOME=" + t.TempDir()}, "brief", "--config", cfg, run)
		if code != 0 {
			t.Fatalf("brief: exit %d: %s", code, stderr)
		}
		var written []string
		filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
			if p != cache {
				written = append(written, strings.TrimPrefix(p, cache))
			}
			return nil
		})
		if readOnly && len(written) > 0 {
			t.Errorf("read-only brief wrote %q in the cache folder", written)
		}
		if !readOnly && len(written) == 0 {
			t.Errorf("the brief kept no index on disk, so this test cannot see a read-only write")
		}
	}
}

// A polling interval below the floor is refused by every command that watches, and in the config, instead
// of spinning.
func TestPollBelowTheFloorIsRefused(t *testing.T) {
	dir := t.TempDir()
	env := []string{"XDG_CONFIG_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + t.TempDir()}
	for _, args := range [][]string{{"events", "--poll", "1ns", dir}, {"notify", "--poll", "1ns", dir}, {"--poll", "1ns", dir}, {"--poll", "-1s", dir}} {
		code, _, stderr := runBinary(t, env, args...)
		if code != exitUsage || !strings.Contains(stderr, "--poll") || !strings.Contains(stderr, "100ms") && !strings.Contains(stderr, "negative") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("poll: 1ns\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runBinary(t, env, "events", "--config", cfg, dir); code != exitUsage || !strings.Contains(stderr, cfg) ||
		!strings.Contains(stderr, "below the floor of 100ms") {
		t.Errorf("poll: 1ns in the config: exit %d, stderr %q", code, stderr)
	}
}
