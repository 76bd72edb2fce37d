package cli

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"runwatch/state/resumable/resumabletest"
)

// TestDashboardTmuxSmoke drives the real binary in a real terminal (tmux): it draws the fixtures, answers
// keys, shows help, and quits cleanly on q.
func TestDashboardTmuxSmoke(t *testing.T) {
	t.Parallel()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed; .ci/run installs it")
	}
	bin := buildRunwatch(t)
	root := resumabletest.Copy(t)
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(tmux, append([]string{"-S", sock}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("new-session", "-d", "-s", "smoke", "-x", "100", "-y", "30",
		"env", "XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir(), bin, "--read-only", root)
	t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })

	screen := func() string { return run("capture-pane", "-p", "-t", "smoke") }
	waitFor := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		var last string
		for time.Now().Before(deadline) {
			last = screen()
			if strings.Contains(last, want) {
				return last
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("screen never showed %q; last screen:\n%s", want, last)
		return ""
	}

	// A capture can land between the writes of one frame (and runs join the list as they load), so the
	// test waits for a screen that shows all of it rather than judging the first one that shows a name.
	firstScreen := []string{"iso26262-mining", "READ-ONLY", "● inotify", "Timeline", "Detail"}
	deadline := time.Now().Add(15 * time.Second)
	for s := screen(); ; s = screen() {
		missing := ""
		for _, want := range firstScreen {
			if !strings.Contains(s, want) {
				missing = want
				break
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first screen never showed %q:\n%s", missing, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	run("send-keys", "-t", "smoke", "?")
	if h := waitFor("copy focused item"); strings.Contains(h, "step run forward") {
		t.Errorf("read-only help lists a mutating key:\n%s", h)
	}
	run("send-keys", "-t", "smoke", "?")
	waitFor("focus Runs")
	run("send-keys", "-t", "smoke", "/", "s", "p", "h", "i", "n", "x")
	waitFor("Runs 1 of")
	run("send-keys", "-t", "smoke", "Enter", "q")

	deadline = time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := exec.Command(tmux, "-S", sock, "has-session", "-t", "smoke").Run(); err != nil {
			return // the program exited on q and tmux closed the session
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("q did not quit; screen:\n%s", screen())
}

// TestDashboardNoColorInTmux: with NO_COLOR set the real terminal receives no colour at all, while glyphs
// and words still carry every status; without it, colours are there.
func TestDashboardNoColorInTmux(t *testing.T) {
	t.Parallel()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed; .ci/run installs it")
	}
	bin := buildRunwatch(t)
	root := resumabletest.Copy(t)
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
	capture := func(name string, env ...string) string {
		t.Helper()
		args := append([]string{"-S", sock, "new-session", "-d", "-s", name, "-x", "120", "-y", "30", "env",
			"XDG_CONFIG_HOME=" + t.TempDir(), "TERM=xterm-256color"}, env...)
		args = append(args, bin, "--read-only", root)
		if out, err := exec.Command(tmux, args...).CombinedOutput(); err != nil {
			t.Fatalf("tmux: %v\n%s", err, out)
		}
		// Runs join the list as they are read, and Detail follows the selection: under load the first
		// frame that names one run may not yet hold the others, so wait for every word checked below.
		deadline := time.Now().Add(30 * time.Second)
		last := ""
		for time.Now().Before(deadline) {
			out, _ := exec.Command(tmux, "-S", sock, "capture-pane", "-e", "-p", "-t", name).Output()
			last = string(out)
			if drawn := stripSGR(last); strings.Contains(drawn, "iso26262") && strings.Contains(drawn, "⊘ broken-state") &&
				strings.Contains(drawn, "‖ export-style") && strings.Contains(drawn, "Needs you:") {
				return last
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s never drew the runs and Detail; last screen:\n%s", name, stripSGR(last))
		return ""
	}
	colour := regexp.MustCompile(`\x1b\[[0-9;:]*(3[0-8]|4[0-8]|9[0-7]|10[0-7])[;:m]`)
	plain := capture("nocolor", "NO_COLOR=1")
	if loc := colour.FindStringIndex(plain); loc != nil {
		t.Errorf("NO_COLOR frame has a colour sequence %q", plain[loc[0]:min(len(plain), loc[1]+10)])
	}
	for _, want := range []string{"⊘ broken-state", "‖ export-style", "Needs you:"} {
		if !strings.Contains(stripSGR(plain), want) {
			t.Errorf("NO_COLOR frame lacks %q", want)
		}
	}
	if !regexp.MustCompile(`\x1b\[(?:[0-9]*;)*7m`).MatchString(plain) {
		t.Error("NO_COLOR frame has no reverse video: the selected row would be invisible")
	}
	if coloured := capture("color", "COLORTERM=truecolor"); !colour.MatchString(coloured) {
		t.Error("without NO_COLOR the frame has no colour; the check above proves nothing")
	}
}

func stripSGR(s string) string { return regexp.MustCompile(`\x1b\[[0-9;:]*m`).ReplaceAllString(s, "") }

func TestDashboardRejectsKeymapConflicts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("keys:\n  step: [j]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"--config", cfg, dir}, &stdout, &stderr, testEnv(t))
	if code != 2 || !strings.Contains(stderr.String(), `key "j" is bound to both "down" and "step"`) ||
		!strings.Contains(stderr.String(), cfg) {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestParseInterleaved(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"dashboard", "--poll", "nonsense"}, &stdout, &stderr, testEnv(t))
	if code != 2 {
		t.Fatalf("bad --poll: exit %d", code)
	}
	fs := newFlagSet("dashboard")
	defineDashboard(fs)
	paths, err := parseInterleaved(fs.FlagSet, []string{"a", "--read-only", "b", "--", "--c"})
	if err != nil {
		t.Fatal(err)
	}
	if readOnly := fs.Lookup("read-only").Value.String(); strings.Join(paths, ",") != "a,b,--c" || readOnly != "true" {
		t.Fatalf("paths %v read-only %v", paths, readOnly)
	}
}

// TestDashboardDebugLog runs the whole command headless (keys from a reader, frames to a buffer) and checks
// that --debug records messages and frame timings.
func TestDashboardDebugLog(t *testing.T) {
	t.Parallel()
	root := resumabletest.Copy(t)
	debug := filepath.Join(t.TempDir(), "debug.log")
	var out lockedBuffer
	var stderr bytes.Buffer
	keys, typeKeys := io.Pipe()
	go func() {
		// Keys go in once the runs are on screen, as a person would press them.
		for !strings.Contains(out.String(), "iso26262-mining") {
			time.Sleep(10 * time.Millisecond)
		}
		typeKeys.Write([]byte("jjq"))
	}()
	code := openDashboard([]string{root}, dashboardOptions{
		ReadOnly: true, DebugPath: debug, Input: keys, Output: &out, Width: 140, Height: 40, env: testEnv(t),
	}, &out, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(debug)
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	for _, want := range []string{"update tea.KeyPressMsg", "update app.SnapshotMsg", " view "} {
		if !strings.Contains(log, want) {
			t.Errorf("debug log lacks %q:\n%s", want, log)
		}
	}
	if !strings.Contains(out.String(), "iso26262-mining") {
		t.Error("no frame with the runs reached the output")
	}
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
