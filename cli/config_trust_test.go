package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runBinary runs the real runwatch (the test binary linked as runwatch) with env added, bounded by a minute
// so a hang fails instead of stalling the suite.
func runBinary(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(runwatchOnPath(t), "runwatch"), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errOut, nil
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("runwatch %q hung", args)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// The real binary refuses a config someone else could have written (exit 2, the file and its mode or owner
// named), whether named by --config or found at the default path; the file is chowned to a second uid.
func TestConfigOthersCouldWriteIsRefusedByTheBinary(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "runwatch", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("ssh:\n  command: [/bin/sh, -c, 'touch PWN']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o664); err != nil { // not through the umask
		t.Fatal(err)
	}
	env := []string{"XDG_CONFIG_HOME=" + home, "XDG_STATE_HOME=" + t.TempDir()}
	for _, args := range [][]string{{"status", t.TempDir()}, {"status", "--config", path, t.TempDir()}} {
		code, _, stderr := runBinary(t, env, args...)
		if code != exitUsage || !strings.Contains(stderr, path) || !strings.Contains(stderr, "mode 0664") {
			t.Errorf("%q with a group-writable config: exit %d, stderr %q", args, code, stderr)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("chown to a second uid needs root")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runBinary(t, env, "status", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, path) || !strings.Contains(stderr, "owned by uid 65534") {
		t.Errorf("a config owned by uid 65534: exit %d, stderr %q", code, stderr)
	}
}

// A FIFO at the default config path hangs neither a command nor TAB completion (which stays silent).
func TestConfigFIFOHangsNothing(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "runwatch"), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(home, "runwatch", "config.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_CONFIG_HOME=" + home, "XDG_STATE_HOME=" + t.TempDir()}
	if code, _, stderr := runBinary(t, env, "status", t.TempDir()); code != exitUsage || !strings.Contains(stderr, fifo) ||
		!strings.Contains(stderr, "not a regular file") {
		t.Errorf("status with a FIFO config: exit %d, stderr %q", code, stderr)
	}
	for _, helper := range []string{"__complete", "__complete0", "__complete-bash"} {
		if code, out, _ := runBinary(t, env, helper, "brief", ""); code != 0 || strings.Contains(out, "iso") {
			t.Errorf("%s with a FIFO config: exit %d, %q", helper, code, out)
		}
	}
}

// A mutating action bound to a key the confirmation dialog answers is a config error naming file and line:
// with unlock on y, y y would clear a lock.
func TestConfirmKeysCannotBeBoundToMutatingActions(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("theme: auto\nkeys:\n  copy: [c]\n  unlock: [y]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runBinary(t, []string{"XDG_STATE_HOME=" + t.TempDir()}, "--config", cfg, t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, cfg) || !strings.Contains(stderr, "line 4") ||
		!strings.Contains(stderr, `action "unlock" changes run state, so it may not use "y"`) {
		t.Errorf("unlock on y: exit %d, stderr %q", code, stderr)
	}
}

// notify.command with a relative program is refused (exit 2, file and line): it would be found from
// whatever folder runwatch was started in.
func TestRelativeNotifyCommandIsRefusedByTheBinary(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("notify:\n  command: ./hook.sh {{.ID}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runBinary(t, []string{"XDG_STATE_HOME=" + t.TempDir()}, "notify", "--config", cfg, t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, cfg) || !strings.Contains(stderr, `line 2: notify.command: the program "./hook.sh" is a relative path`) {
		t.Errorf("relative notify.command: exit %d, stderr %q", code, stderr)
	}
}
