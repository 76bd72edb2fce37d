package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"runwatch/state/resumable/resumabletest"
)

// Issue 33.3: notify and events on a host they cannot reach fail as status does, with the same message naming
// the host and the same exit code, instead of watching nothing (notify printed "watching 0 runs", events
// retried for ever).
func TestNotifyOnAnUnreachableHostFailsLikeStatus(t *testing.T) {
	fleet, e := sshFleet(t, "alpha")
	bin := filepath.Join(fleet.BinDir, "runwatch")
	root := t.TempDir()
	resumabletest.MinimalRun(t, root, "irm-a-20261201T080000Z")
	fleet.Kill("alpha")
	for _, tc := range []struct{ root, host string }{
		{"ssh://alpha" + root, "alpha"}, // refused: its sshd is down
		{"nohost:/x", "nohost"},         // no such host
	} {
		t.Run(tc.host, func(t *testing.T) {
			statusCode, statusErr := runBuilt(t, e, bin, "status", tc.root)
			notifyCode, notifyErr := runBuilt(t, e, bin, "notify", "--notify-command", "true", tc.root)
			eventsCode, eventsErr := runBuilt(t, e, bin, "events", tc.root)
			if statusCode != exitIncomplete {
				t.Fatalf("status exit %d, want %d; stderr %q", statusCode, exitIncomplete, statusErr)
			}
			if notifyCode != exitIncomplete || eventsCode != exitIncomplete {
				t.Fatalf("notify exit %d, events %d, want %d; stderr %q, %q", notifyCode, eventsCode, exitIncomplete, notifyErr, eventsErr)
			}
			// A host that never answered was not looked in: its error says so, and no "no runs found in" it.
			status := exec.Command(bin, "status", tc.root)
			status.Env = e.environ()
			if out, _ := status.Output(); len(out) > 0 {
				t.Errorf("status of an unreachable root printed %q, want nothing on stdout", out)
			}
			said := lastSaid(statusErr, "runwatch status: ")
			if !strings.HasPrefix(said, tc.host+" cannot be reached: ") {
				t.Fatalf("status does not name the host: %q", statusErr)
			}
			if got := lastSaid(notifyErr, "runwatch notify: "); got != said {
				t.Errorf("notify says %q, status %q", got, said)
			}
			if got := lastSaid(eventsErr, "runwatch events: "); got != said {
				t.Errorf("events says %q, status %q", got, said)
			}
		})
	}
}

// runBuilt runs the runwatch under test in e to its end, or fails after a minute (notify that watches
// nothing never ends by itself).
func runBuilt(t *testing.T, e env, bin string, args ...string) (code int, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errOut bytes.Buffer
	c := exec.CommandContext(ctx, bin, args...)
	c.Dir, c.Env, c.Stderr = t.TempDir(), e.environ(), &errOut
	err := c.Run()
	if ctx.Err() != nil {
		t.Fatalf("runwatch %s still running after a minute; stderr %q", strings.Join(args, " "), errOut.String())
	}
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatal(err)
	}
	return c.ProcessState.ExitCode(), errOut.String()
}

// lastSaid is the last line of out that starts with prefix, without it.
func lastSaid(out, prefix string) string {
	said := ""
	for _, l := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(l, prefix); ok {
			said = s
		}
	}
	return said
}

// Issue 33.3: every command that follows hosts gives each host's runwatch the flags status gives it
// (--max-depth among them, which the dashboard did not pass): a host finds and judges runs as here.
func TestEveryWatchGivesHostsTheFlagsStatusGives(t *testing.T) {
	fleet, e := sshFleet(t, "alpha")
	bin := filepath.Join(fleet.BinDir, "runwatch")
	flags := []string{"--max-depth", "1", "--stale-after", "7m0s", "--orphan-after", "3m0s", "--quiet-after", "50m0s"}

	// What status gives: the runs a host finds are those --max-depth 1 finds here.
	root := t.TempDir()
	resumabletest.MinimalRun(t, root, "irm-shallow-20261201T080000Z")
	resumabletest.MinimalRun(t, filepath.Join(root, "a", "b", "c"), "irm-deep-20261201T080000Z")
	code, out, errOut := runCmd(e, append(append([]string{"status", "-o", "wide"}, flags...), "ssh://alpha"+root)...)
	if code != 0 || !strings.Contains(out, "irm-shallow") || strings.Contains(out, "irm-deep") {
		t.Fatalf("status %v over alpha: exit %d\n%s%s", flags, code, out, errOut)
	}

	for _, cmd := range []string{"dashboard", "events", "notify"} {
		t.Run(cmd, func(t *testing.T) {
			root := t.TempDir() // names this command's remote runwatch among the processes
			resumabletest.MinimalRun(t, root, "irm-shallow-20261201T080000Z")
			resumabletest.MinimalRun(t, filepath.Join(root, "a", "b", "c"), "irm-deep-20261201T080000Z")
			args := append(append([]string{cmd}, flags...), "ssh://alpha"+root)
			if cmd == "notify" {
				args = append([]string{cmd, "--notify-command", "true"}, args[1:]...)
			}
			if cmd == "dashboard" {
				d := newTmuxDemo(t)
				d.env = append(d.env, "RUNWATCH_SSH_COMMAND="+strings.Join(fleet.SSHCommand(), " "),
					"XDG_RUNTIME_DIR="+filepath.Join(fleet.Dir, "rt"))
				d.start(t, bin+" "+strings.Join(args, " "))
				screen := d.waitScreen("alpha's shallow run", func(s string) bool {
					return strings.Contains(s, "● alpha") && strings.Contains(s, "irm-shallow")
				})
				if strings.Contains(screen, "irm-deep") {
					t.Errorf("the dashboard shows a run below --max-depth:\n%s", screen)
				}
			} else {
				c := exec.Command(bin, args...)
				c.Env = e.environ()
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
			}
			got := remoteEventsArgs(t, root)
			for i := 0; i < len(flags); i += 2 {
				if j := slices.Index(got, flags[i]); j < 0 || j+1 >= len(got) || got[j+1] != flags[i+1] {
					t.Errorf("%s gives the host %q, without %s %s", cmd, got, flags[i], flags[i+1])
				}
			}
		})
	}
}

// remoteEventsArgs waits for the `runwatch events` a host runs over root, and returns its arguments.
func remoteEventsArgs(t *testing.T, root string) []string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, args := range procArgs() {
			if filepath.Base(args[0]) == "runwatch" && len(args) > 2 && args[1] == "events" && args[len(args)-1] == root {
				return args[2:]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no runwatch events over %s started on the host", root)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// events over a local root and a host: watch-health is the local watcher's alone. A host's batch carries no
// watcher health (the host's is a host-health line), and was taken for the local one: a watch-health line
// with no mode, then the local one again, at each of the host's batches.
func TestEventsWatchHealthIsTheLocalWatchers(t *testing.T) {
	_, e := sshFleet(t, "alpha")
	local, root := t.TempDir(), t.TempDir()
	resumabletest.MinimalRun(t, local, "irm-here-20261201T080000Z")
	dir := resumabletest.MinimalRun(t, root, "irm-there-20261201T080000Z")
	s := startEvents(t, e, "--timeout", "60s", "--until", "running", "--run", "irm-there", local, "ssh://alpha"+root)
	s.next("alpha's run", func(m map[string]any) bool {
		run, _ := m["run"].(map[string]any)
		return m["type"] == "run-added" && run["id"] == "irm-there-20261201T080000Z"
	})
	// The remote run starts running (a lock held by this live process), which ends events.
	lock := fmt.Sprintf(`{"acquired_at_utc": %q, "host": %q, "pid": %d, "run_id": "irm-there-20261201T080000Z", "user": "u"}`+"\n",
		time.Now().UTC().Format(time.RFC3339), hostname(t), os.Getpid())
	if err := os.WriteFile(filepath.Join(dir, "run.lock"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	for m := range s.lines { // until events ends (--timeout bounds it)
		s.seen = append(s.seen, m)
	}
	if code := <-s.code; code != 0 {
		t.Fatalf("exit %d; saw %v", code, s.seen)
	}
	modes := 0
	for _, m := range s.seen {
		if m["type"] != "watch-health" {
			continue
		}
		modes++
		if h, _ := m["health"].(map[string]any); h["mode"] == "" || h["mode"] == nil {
			t.Errorf("a watch-health line that is not the local watcher's: %v", m)
		}
	}
	if modes != 1 {
		t.Errorf("%d watch-health lines, want the local watcher's one", modes)
	}
}

func hostname(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Issue 33: a host lost after it was reached is tried again, as before, and events says so on stderr (its
// host-health lines say it on stdout); only a host never reached ends it.
func TestEventsSaysAHostLostLaterAndRetries(t *testing.T) {
	fleet, e := sshFleet(t, "alpha")
	bin := filepath.Join(fleet.BinDir, "runwatch")
	root := t.TempDir()
	resumabletest.MinimalRun(t, root, "irm-a-20261201T080000Z")
	cmd := exec.Command(bin, "events", "ssh://alpha"+root)
	cmd.Env = e.environ()
	var mu sync.Mutex
	var errOut bytes.Buffer
	cmd.Stderr = &syncWriter{mu: &mu, w: &errOut}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	sc := bufio.NewScanner(out)
	for sc.Scan() && !strings.Contains(sc.Text(), `"irm-a-20261201T080000Z"`) {
	}
	go func() {
		for sc.Scan() {
		}
	}()
	fleet.Kill("alpha")
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		said := errOut.String()
		mu.Unlock()
		if strings.Contains(said, "runwatch events: alpha") && strings.Contains(said, "; trying again\n") {
			break
		}
		select {
		case <-exited:
			t.Fatalf("events ended when a host it had reached was lost: %q", said)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line saying alpha was lost: %q", said)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case <-exited:
		t.Fatal("events ended when a host it had reached was lost")
	case <-time.After(2 * time.Second):
	}
}
