package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/state/resumable/resumabletest"
)

// orphanFeature writes a jonggrang project whose feature orph-feat has phase 14 (testing) marked running,
// with no agent lock and no worker, last written at written. It returns the project root.
func orphanFeature(t *testing.T, root string, written time.Time) string {
	t.Helper()
	dir := filepath.Join(root, "proj", ".jonggrang", ".output", "features", "orph-feat")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ts := written.UTC().Format("2006-01-02T15:04:05.000Z")
	manifest := fmt.Sprintf(`feature_id: orph-feat
description: Orphaned feature
work_type: MEDIUM
created_at: '%[1]s'
updated_at: '%[1]s'
status: running
current_phase: 14
phases:
  '13':
    name: review
    status: completed
    started_at: '%[1]s'
    completed_at: '%[1]s'
  '14':
    name: testing
    status: running
    started_at: '%[1]s'
    completed_at: null
agents: {}
validation:
  review_passed: false
  tests_passed: false
  coverage_met: false
locks: []
`, ts)
	path := filepath.Join(dir, "MANIFEST.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, written, written); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "proj")
}

// quietResumable writes a resumable run of task quiet-task at S1 whose lock is held by a live process and
// whose files were last written at written.
func quietResumable(t *testing.T, root string, written time.Time) (dir string, pid int) {
	t.Helper()
	dir = filepath.Join(root, "quiet-task-20261201T000000Z")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	pid = resumabletest.LivePID(t)
	files := map[string]string{
		"state.env": fmt.Sprintf("CURRENT_STAGE=\"S1\"\nLOCK_FILE=%q\nRUN_ID=\"r1\"\nS1_DONE=\"0\"\nS2_DONE=\"0\"\nTASK_NAME=\"quiet-task\"\n",
			filepath.Join(dir, "run.lock")),
		"checklist.state.env": "CB_S1_GREEN=\"0\"\n",
		"run.log":             "[" + written.UTC().Format(time.RFC3339) + "] stage_start stage=S1\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The lock is taken after its holder started (an older one would be a reused pid); the lock itself is not
	// a write of the run's work.
	resumabletest.WriteJSONLock(t, filepath.Join(dir, "run.lock"), pid, host, time.Now())
	for name := range files {
		if err := os.Chtimes(filepath.Join(dir, name), written, written); err != nil {
			t.Fatal(err)
		}
	}
	return dir, pid
}

// TestStatusOrphanedAndQuietOnTheRealBinary: the built program's status --json calls an orphaned jonggrang
// feature and a quiet resumable run what they are, with reasons and actions.
func TestStatusOrphanedAndQuietOnTheRealBinary(t *testing.T) {
	t.Parallel()
	bin := buildRunwatch(t)
	root := t.TempDir()
	proj := orphanFeature(t, root, time.Now().Add(-8*time.Minute))
	_, pid := quietResumable(t, root, time.Now().Add(-90*time.Minute))
	cmd := exec.Command(bin, "status", "--json", proj, root)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil && cmd.ProcessState.ExitCode() > 1 {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var doc struct {
		Runs []struct {
			ID        string `json:"id"`
			Status    string `json:"status"`
			Attention struct {
				NeedsYou bool   `json:"needs_you"`
				Code     string `json:"code"`
				Reason   string `json:"reason"`
				Action   string `json:"action"`
				Command  string `json:"command"`
			} `json:"attention"`
			Timing *struct {
				Task string `json:"task"`
			} `json:"timing"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	seen := map[string]bool{}
	for _, r := range doc.Runs {
		switch r.ID {
		case "orph-feat":
			seen[r.ID] = true
			a := r.Attention
			if r.Status != "stalled" || !a.NeedsYou || a.Code != "orphaned" || a.Action != "resume" ||
				!strings.HasPrefix(a.Reason, "phase 14 testing is marked running but nothing has run it for 8m;") ||
				a.Command != "runwatch brief orph-feat" {
				t.Errorf("orphaned feature: status %s attention %+v", r.Status, a)
			}
			if r.Timing == nil || r.Timing.Task != "jonggrang:MEDIUM" {
				t.Errorf("orphaned feature timing %+v", r.Timing)
			}
		case "quiet-task-20261201T000000Z":
			seen[r.ID] = true
			a := r.Attention
			want := fmt.Sprintf("pid %d is alive but stage S1 has been silent for 1h30m; no past run of quiet-task says how long it takes", pid)
			if r.Status != "running" || !a.NeedsYou || a.Code != "quiet" || !strings.HasPrefix(a.Reason, want) {
				t.Errorf("quiet run: status %s attention %+v\nwant reason starting %q", r.Status, a, want)
			}
		}
	}
	if len(seen) != 2 {
		t.Fatalf("runs seen %v in\n%s", seen, out)
	}
	// Within the grace (a flag) the feature is running, nothing to do.
	cmd = exec.Command(bin, "status", "--json", "--orphan-after", "20m", "--quiet-after", "2h", proj, root)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	out, _ = cmd.Output()
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, r := range doc.Runs {
		if r.Attention.NeedsYou {
			t.Errorf("with --orphan-after 20m --quiet-after 2h, %s needs you: %+v", r.ID, r.Attention)
		}
	}
}

// TestEventsAttentionWhenARunGoesOrphaned: the real binary's events stream says, with no file changing, when
// a feature's grace runs out: an attention line with code orphaned.
func TestEventsAttentionWhenARunGoesOrphaned(t *testing.T) {
	t.Parallel()
	bin := buildRunwatch(t)
	root := t.TempDir()
	proj := orphanFeature(t, root, time.Now())
	cmd := exec.Command(bin, "events", "--orphan-after", "3s", proj)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	dec := json.NewDecoder(stdout)
	deadline := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	var lines []map[string]any
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("events ended (%v) before an orphaned attention line; saw %v", err, lines)
		}
		lines = append(lines, m)
		if m["type"] != "attention" {
			continue
		}
		at, _ := m["attention"].(map[string]any)
		if m["transition"] != "entered" || at["code"] != "orphaned" || m["id"] != "orph-feat" {
			t.Fatalf("attention line %v", m)
		}
		if r, _ := at["reason"].(string); !strings.Contains(r, "nothing has run it for") {
			t.Fatalf("reason %q", r)
		}
		break
	}
	for _, m := range lines[:len(lines)-1] {
		if m["type"] == "run-changed" {
			if r, _ := m["run"].(map[string]any); r != nil {
				if at, _ := r["attention"].(map[string]any); at["code"] == "orphaned" {
					return // the run-changed line that carried it came first: also fine
				}
			}
		}
	}
}

// TestDashboardOrphanedInTmux: the real dashboard in a real tmux, over a feature whose grace (3s) runs out
// while it watches: the hook is notified with code orphaned, Detail's first line says what is wrong and which
// key settles it, and the age in it counts on from frame to frame (it is not frozen when the run was read).
func TestDashboardOrphanedInTmux(t *testing.T) {
	t.Parallel()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed; .ci/run installs it")
	}
	bin := buildRunwatch(t)
	root := t.TempDir()
	proj := orphanFeature(t, root, time.Now())
	argvLog := filepath.Join(t.TempDir(), "argv")
	hook := `sh -c 'printf "%s|" "$@" >> "$0"; echo >> "$0"' ` + argvLog + ` {{.Event}} {{.ID}} {{.Code}}`
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("new-session", "-d", "-s", "orph", "-x", "160", "-y", "40", "env", "XDG_CONFIG_HOME="+t.TempDir(),
		"XDG_STATE_HOME="+t.TempDir(), bin, "--orphan-after", "3s", "--notify-command", hook, proj)
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	screen := func() string { return run("capture-pane", "-p", "-J", "-t", "orph") }
	wait := func(what string, cond func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			s := screen()
			if cond(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting for %s; screen:\n%s\nhook: %q", what, s, readLines(argvLog))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	first := wait("Detail to say it is orphaned", func(s string) bool {
		return strings.Contains(s, "Needs you: phase 14 testing is marked running but nothing has run it for")
	})
	wait("the hook", func(string) bool { return len(readLines(argvLog)) > 0 })
	if got := readLines(argvLog); got[0] != "attention|orph-feat|orphaned|" {
		t.Errorf("hook argv %q", got)
	}
	age := func(s string) string {
		i := strings.Index(s, "nothing has run it for ")
		rest := s[i+len("nothing has run it for "):]
		return rest[:strings.IndexByte(rest, ';')]
	}
	was := age(first)
	wait("the age in Detail to count on from "+was, func(s string) bool {
		return strings.Contains(s, "nothing has run it for ") && age(s) != was
	})
	if s := screen(); !strings.Contains(s, "press ") {
		t.Errorf("Detail names no key for it:\n%s", s)
	}
}
