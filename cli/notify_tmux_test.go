package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNotifyInTmux drives the real dashboard in a real tmux (a private server): a run on disk becomes
// stalled when the process holding its lock dies, and then the window gets tmux's bell flag, the hook runs
// once with the run's arguments, and the desktop notification reaches the pane's output wrapped in tmux
// passthrough. With passthrough turned off, the next one is not sent and the footer says how to allow it.
func TestNotifyInTmux(t *testing.T) {
	t.Parallel()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed; .ci/run installs it")
	}
	bin := buildRunwatch(t)
	root, _, _, h := notifyFixture(t)
	work := t.TempDir()
	argvLog, raw := filepath.Join(work, "argv"), filepath.Join(work, "pane.raw")
	hook := `sh -c 'printf "%s|" "$@" >> "$0"; echo >> "$0"' ` + argvLog + ` {{.Event}} {{.ID}} {{.Code}} {{.Reason}}`

	sock := filepath.Join(t.TempDir(), "tmux.sock")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	// The session starts with a shell that waits, so passthrough and the pane pipe are in place before the
	// dashboard writes anything.
	run("new-session", "-d", "-s", "nt", "-x", "120", "-y", "40", "sh", "-c", "read go; exec \"$@\"", "sh",
		"env", "XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir(), bin, "--read-only",
		"--desktop", "osc777", "--notify-command", hook, root)
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	run("set-option", "-g", "allow-passthrough", "on")
	run("pipe-pane", "-o", "-t", "nt", "cat >> "+raw)
	run("send-keys", "-t", "nt", "go", "Enter")

	screen := func() string { return run("capture-pane", "-p", "-t", "nt") }
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting for %s; screen:\n%s\nhook: %q", what, screen(), readLines(argvLog))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	wait("the dashboard", func() bool { return strings.Contains(screen(), "live-20") })
	if s := screen(); !strings.Contains(s, "notify bell osc777 tmux hook") {
		t.Errorf("the footer does not show the channels:\n%s", s)
	}
	bell := func() string {
		return strings.TrimSpace(run("display-message", "-p", "-t", "nt", "#{window_bell_flag}"))
	}
	if bell() != "0" {
		t.Fatalf("bell flag set before anything happened (the start-up state rang?)")
	}

	h.kill()
	wait("the window's bell flag", func() bool { return bell() == "1" })
	wait("the hook", func() bool { return len(readLines(argvLog)) > 0 })
	wait("the desktop notification in the pane's output", func() bool {
		data, _ := os.ReadFile(raw)
		return strings.Contains(string(data), "\x1bPtmux;\x1b\x1b]777;notify;runwatch: live-20260301T000000Z needs you;lock held by dead pid")
	})

	// Passthrough off: a second run breaking rings, runs the hook, and sends no escape sequence, and the
	// footer says once how to turn passthrough on. It is also the barrier for "once": its hook line comes
	// after anything more the first run would have caused.
	run("set-option", "-g", "allow-passthrough", "off")
	before, _ := os.ReadFile(raw)
	second := eventsRun(t, filepath.Join(root, "reports", "second-20260301T000000Z"), "S1")
	h2 := startHolder(t)
	lockedBy(t, second, h2.pid())
	wait("the second run", func() bool { return strings.Contains(screen(), "second-") })
	h2.kill()
	wait("the second hook", func() bool { return len(readLines(argvLog)) >= 2 })
	wait("the passthrough note", func() bool { return strings.Contains(screen(), "allow-passthrough on") })
	after, _ := os.ReadFile(raw)
	if strings.Contains(string(after[len(before):]), "]777;") {
		t.Errorf("a desktop notification was sent with passthrough off: %q", after[len(before):])
	}
	got := readLines(argvLog)
	if len(got) != 2 || !strings.HasPrefix(got[0], "attention|live-20260301T000000Z|stale-lock|lock held by dead pid ") ||
		!strings.HasPrefix(got[1], "attention|second-20260301T000000Z|stale-lock|") {
		t.Errorf("hook argv lines: %q", got)
	}
	if strings.Contains(strings.Join(got, "\n"), "old-2026") {
		t.Errorf("the run stalled at start-up was notified: %q", got)
	}

	// The mute key: the footer says so.
	run("send-keys", "-t", "nt", "m")
	wait("the footer to say muted", func() bool { return strings.Contains(screen(), "notify muted") })
}
