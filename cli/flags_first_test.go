package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/state/resumable/resumabletest"
)

// TestFlagsBeforeTheCommand: `runwatch --config F status` is status with --config F, as git's and kubectl's
// global flags go; "status" was taken for a path to watch ("runwatch: status: no such file or directory").
// After `--` the word is a path again.
func TestFlagsBeforeTheCommand(t *testing.T) {
	t.Parallel()
	runs := filepath.Join(resumabletest.Copy(t), "reports")
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := dispatch(args, &out, &errOut, testEnv(t))
		return code, out.String(), errOut.String()
	}
	wantCode, want, _ := run("status", "--max-depth", "2", "-o", "json", runs)
	code, got, stderr := run("--max-depth", "2", "status", "-o", "json", runs)
	if code != wantCode || !strings.Contains(got, resumabletest.Sphinx) || stderr != "" {
		t.Errorf("runwatch --max-depth 2 status: exit %d (want %d), stderr %q, stdout:\n%s", code, wantCode, stderr, got)
	}
	if strings.Count(got, `"id"`) != strings.Count(want, `"id"`) {
		t.Errorf("flags first listed other runs than flags after:\n%s\nvs\n%s", got, want)
	}
	code, _, stderr = run("--config", filepath.Join(t.TempDir(), "absent.yaml"), "status", runs)
	if code != exitUsage || !strings.HasPrefix(stderr, "runwatch status: config ") {
		t.Errorf("runwatch --config ABSENT status: exit %d, stderr %q; want status's config error", code, stderr)
	}
	if code, _, stderr = run("--read-only", "--", "status"); code != exitUsage || !strings.Contains(stderr, "status") {
		t.Errorf("runwatch --read-only -- status: exit %d, stderr %q; want status taken as a path", code, stderr)
	}
}
