package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/state/resumable/resumabletest"
)

// configHome is a home directory with a config of body at its default place: the env that the real binary
// is run with (HOME, XDG_CONFIG_HOME), and the config's path.
func configHome(t *testing.T, body string) (env []string, home, cfg string) {
	t.Helper()
	home = t.TempDir()
	cfg = filepath.Join(home, ".config", "runwatch", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + t.TempDir(),
		"TMUX=", "TMUX_PANE="}, home, cfg
}

// runEnded runs the real binary with env added to the test's, in a folder of its own, and returns its exit
// code and output; one still running after a minute and a half (notify watching) is killed and a failure.
func runEnded(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	bin := realBinary(t) // built once, before the clock starts
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = append(os.Environ(), env...), t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Errorf("runwatch %s still running after 90s; stderr %q", strings.Join(args, " "), errb.String())
		return -1, out.String(), errb.String()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// Issue 33: docs/CONFIG.md's own example, roots: [~/src], made every command exit 2: ~ was not expanded. It
// is the home directory's src now, and a relative root is the config's folder's, wherever runwatch runs.
func TestConfigRootsArePlaced(t *testing.T) {
	t.Parallel()
	env, home, cfg := configHome(t, "theme: auto\nroots: [~/src, here]\n")
	resumabletest.MinimalRun(t, filepath.Join(home, "src"), "irm-home-20261201T080000Z")
	resumabletest.MinimalRun(t, filepath.Join(filepath.Dir(cfg), "here"), "irm-here-20261201T080000Z")
	code, out, errOut := runEnded(t, env, "status", "-o", "wide")
	if code == exitUsage || !strings.Contains(out, "irm-home") || !strings.Contains(out, "irm-here") {
		t.Errorf("status over roots: [~/src, here]: exit %d\n%s%s", code, out, errOut)
	}
}

// Issue 33: a config root that cannot be opened is said by every command that reads runs in the same words,
// naming the config's file and the line of roots:, with no usage lines and the path once; a root given on
// the command line (PATH, --root) stands over the config, which is then not mentioned.
func TestMissingConfigRootNamesTheConfig(t *testing.T) {
	t.Parallel()
	env, home, cfg := configHome(t, "theme: auto\nroots:\n  - ~/src\n  - ~/gone\n")
	src := filepath.Join(home, "src")
	resumabletest.MinimalRun(t, src, "irm-home-20261201T080000Z")
	gone := filepath.Join(home, "gone")
	want := "config " + cfg + ": line 2: roots: " + gone + " does not exist\n"
	for _, args := range [][]string{
		{"status"}, {"events", "--timeout", "5s"}, {"notify", "--notify-command", "true"}, {}, {"brief", "irm-home"},
		{"step", "--dry-run", "irm-home"}, {"goto", "--print", "irm-home"},
	} {
		code, out, errOut := runEnded(t, env, args...)
		prog := strings.TrimSpace("runwatch " + strings.Join(args[:min(1, len(args))], ""))
		if code != exitUsage || out != "" || errOut != prog+": "+want {
			t.Errorf("%s with roots: [~/src, ~/gone]: exit %d, stdout %q, stderr %q; want exit 2 and %q",
				prog, code, out, errOut, prog+": "+want)
		}
	}
	// The command line's roots stand over the config's: nothing about it.
	for _, args := range [][]string{{"status", src}, {"brief", "irm-home", "--root", src}} {
		if code, out, errOut := runEnded(t, env, args...); code == exitUsage || strings.Contains(errOut, cfg) {
			t.Errorf("runwatch %s: exit %d, stderr %q; stdout %q", strings.Join(args, " "), code, errOut, out)
		}
	}
	// ~user is refused where it is written.
	env, _, cfg = configHome(t, "roots:\n  - /tmp\n  - ~bob/src\n")
	if code, _, errOut := runEnded(t, env, "status"); code != exitUsage || !strings.Contains(errOut, "config "+cfg+": line 3: roots: \"~bob/src\": ~user is not expanded") {
		t.Errorf("~bob/src: exit %d, stderr %q", code, errOut)
	}
}

// Issue 33: a root that does not exist is a usage error (2) whichever command is given it, and however:
// brief --root /nonexist exited 1 where status /nonexist exited 2.
func TestMissingRootIsUsageEverywhere(t *testing.T) {
	t.Parallel()
	env, _, _ := configHome(t, "theme: auto\n")
	missing := filepath.Join(t.TempDir(), "nonexist")
	for _, args := range [][]string{
		{"brief", "x", "--root", missing}, {"step", "x", "--root", missing}, {"goto", "x", "--root", missing}, {"status", missing}, {"events", missing}, {"notify", "--notify-command", "true", missing},
		{missing}, {"dashboard", missing},
	} {
		code, _, errOut := runEnded(t, env, args...)
		if code != exitUsage || !strings.Contains(errOut, missing+": no such file or directory\n") || strings.Count(errOut, missing) != 1 {
			t.Errorf("runwatch %s: exit %d, stderr %q; want 2 naming %s once", strings.Join(args, " "), code, errOut, missing)
		}
	}
}

// Issue 33: a host that cannot be reached at start ends status, events and notify alike: the same words and
// exit 6 (events retried it for ever, notify exited 1).
func TestUnreachableHostEndsEveryCommandAlike(t *testing.T) {
	t.Parallel()
	env, _, _ := configHome(t, "theme: auto\n")
	env = append(env, "RUNWATCH_SSH_COMMAND=ssh -o BatchMode=yes -o ConnectTimeout=5")
	var said string
	for _, args := range [][]string{{"status"}, {"events", "--timeout", "50s"}, {"notify", "--notify-command", "true"}} {
		name := args[0]
		code, _, errOut := runEnded(t, env, append(args, "nohost.invalid:/x")...)
		got := lastSaid(errOut, "runwatch "+name+": ")
		if code != exitIncomplete || !strings.HasPrefix(got, "nohost.invalid cannot be reached: ") {
			t.Errorf("runwatch %s nohost.invalid:/x: exit %d, stderr %q; want %d naming the host", name, code, errOut, exitIncomplete)
		}
		if said == "" {
			said = got
		} else if got != said {
			t.Errorf("runwatch %s says %q, status %q", name, got, said)
		}
	}
}

// notify with no channel on (no bell, no tmux, no desktop, no command) still prints its lines, which are a
// service's journal, and says on stderr how to pick a channel; with --no-notify it has nothing to do and is
// refused.
func TestNotifyWithoutChannelPrintsAndSaysHow(t *testing.T) {
	t.Parallel()
	root, _, _, _ := notifyFixture(t)
	n := startHeadless(t, "--notify-existing", "--tmux-message", "off", root)
	waitFor(t, "the start-up state notified", func() bool { l, _ := n.snapshot(); return len(l) > 0 }, n.state)
	lines, stderr := n.snapshot()
	if !strings.Contains(lines[0], "old-20260301T000000Z needs you") || !strings.Contains(stderr, "stdout only") ||
		!strings.Contains(stderr, "--notify-command") {
		t.Errorf("with no channel on: %s", n.state())
	}

	env, _, _ := configHome(t, "theme: auto\n")
	code, out, errOut := runEnded(t, env, "notify", "--no-notify", t.TempDir())
	if code != exitUsage || out != "" || !strings.Contains(errOut, "--no-notify") {
		t.Errorf("runwatch notify --no-notify: exit %d, stderr %q; want 2 naming --no-notify", code, errOut)
	}
}
