package remote

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/remote/sshtest"
	"runwatch/state/resumable/resumabletest"
)

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rwbin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	// The runwatch under test is what the remote hosts run, found on their PATH as a user's install is.
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "runwatch"), "runwatch").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build runwatch: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestParse(t *testing.T) {
	cases := []struct {
		in     string
		remote bool
		want   Root
		err    string
	}{
		{"ssh://build1/srv/runs", true, Root{Host: "build1", Path: "/srv/runs"}, ""},
		{"ssh://pete@build1:2222/srv/runs", true, Root{User: "pete", Host: "build1", Port: "2222", Path: "/srv/runs"}, ""},
		{"ssh://build1/~/reports", true, Root{Host: "build1", Path: "reports"}, ""},
		{"build1:/srv/runs", true, Root{Host: "build1", Path: "/srv/runs"}, ""},
		{"pete@build1:reports", true, Root{User: "pete", Host: "build1", Path: "reports"}, ""},
		{"build1:", true, Root{Host: "build1", Path: "."}, ""},
		{"./a:b", false, Root{}, ""},
		{"/abs/path", false, Root{}, ""},
		{"plain", false, Root{}, ""},
		{"ssh://build1", true, Root{}, "names no path"},
		{"ssh:///srv", true, Root{}, "names no host"},
		{"ssh://-oProxyCommand=x/srv", true, Root{}, "may not start with '-'"},
		{"-oProxyCommand=x:/srv", true, Root{}, "may not start with '-'"},
		{"al\x1b]52;c;eA==\x07pha:/srv", true, Root{}, "control characters"},
		{"bob\u202e@alpha:/srv", true, Root{}, "control characters"},
		{"al\x9bpha:/srv", true, Root{}, "control characters"},
		{"ssh://h:99999/srv", true, Root{}, "not a port number"},
		// Issue 37.17: the path is the path, whatever it holds.
		{"ssh://build1/srv/a#b?c=d", true, Root{Host: "build1", Path: "/srv/a#b?c=d"}, ""},
		{"ssh://build1/srv/100%25 #1", true, Root{Host: "build1", Path: "/srv/100%25 #1"}, ""},
		{"ssh://build1/~/r?#", true, Root{Host: "build1", Path: "r?#"}, ""},
		{"ssh://build1#x/srv", true, Root{}, "not a valid ssh:// root"},
	}
	for _, c := range cases {
		got, remote, err := Parse(c.in)
		if remote != c.remote {
			t.Errorf("%q: remote=%v, want %v", c.in, remote, c.remote)
			continue
		}
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		if remote {
			again, _, err := Parse(got.String())
			if err != nil || again != got {
				t.Errorf("%q: String %q parses to %+v, %v", c.in, got.String(), again, err)
			}
		}
	}
}

// Issue 37.1: the line a login shell reads holds no word of ours: the program, the entry point and the
// encoded words, each a SafeWord, which decode back to exactly the words given.
func TestArgvSendsOnlySafeWords(t *testing.T) {
	s := SSH{Command: []string{"ssh", "-F", "/cfg"}, ControlDir: "/run/rw"}
	args := []string{"events", "--", "/srv/my runs", "it's", `x\';touch /tmp/PWN;\'`, "h8 a\nh0-victim", "", "-h", "\xff\x00"[:1]}
	argv := s.Argv(Root{Host: "h", Port: "2222", Path: "/x"}, args...)
	got := strings.Join(argv, " ")
	for _, want := range []string{"ssh -F /cfg -o BatchMode=yes", "ControlPath=/run/rw/", "ControlMaster=no", "-p 2222 h -- "} {
		if !strings.Contains(got, want) {
			t.Errorf("argv %q lacks %q", got, want)
		}
	}
	line := argv[len(argv)-1]
	words := strings.Split(line, " ")
	if len(words) != 3 || words[0] != "runwatch" || words[1] != ArgvCommand {
		t.Fatalf("remote line %q, want runwatch %s WORD", line, ArgvCommand)
	}
	for _, w := range words {
		if !SafeWord(w) {
			t.Errorf("remote line %q: %q is not a safe word", line, w)
		}
	}
	back, err := DecodeArgv(words[2])
	if err != nil || !slices.Equal(back, args) {
		t.Fatalf("decoded %q, %v; want %q", back, err, args)
	}
	stream := s.StreamCmd(context.Background(), Root{Host: "h"}, args...).Args
	if l := stream[len(stream)-1]; l != "env "+StdinLinkEnv+"=1 "+CompactEnv+"=1 "+line {
		t.Errorf("stream's remote line %q, want the same words after env", l)
	}
	for _, bad := range []string{"", "a", "YQ", "!!"} {
		if w, err := DecodeArgv(bad); err == nil {
			t.Errorf("DecodeArgv(%q) = %q, want an error", bad, w)
		}
	}
}

// Issue 37.16: the stream is a connection of its own. ssh keeps the first value of an option, so what
// counts is what `ssh -G` says it will use: no control socket for the stream, the master's for an action.
func TestStreamUsesNoControlSocket(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("ssh not installed")
	}
	cfg := filepath.Join(t.TempDir(), "ssh_config")
	if err := os.WriteFile(cfg, []byte("Host *\n  ControlPath /from/the/user/config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := SSH{Command: []string{"ssh", "-F", cfg}, ControlDir: t.TempDir()}
	r := Root{Host: "h", Path: "/x"}
	resolved := func(argv []string) string {
		t.Helper()
		// -G prints the options ssh would use, after the destination's place in argv: put it first.
		g := append([]string{argv[0], "-G"}, argv[1:len(argv)-2]...)
		out, err := exec.Command(g[0], g[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", g, err, out)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(l, "controlpath "); ok {
				return v
			}
		}
		return "(none)"
	}
	if got := resolved(s.StreamCmd(context.Background(), r, "events").Args); got != "(none)" && got != "none" {
		t.Errorf("the stream uses the control socket %q", got)
	}
	if got := resolved(s.Argv(r, "status")); got != s.ControlPath(r) {
		t.Errorf("an action uses the control socket %q, want the master's %q", got, s.ControlPath(r))
	}
}

// collector keeps the merged view a dashboard would hold.
type collector struct {
	w     *Watcher
	runs  map[string]model.Run
	hosts []HostHealth
	logs  map[string]int
	// entries keeps the appended entries themselves, when set.
	entries map[string][]model.LogEntry
}

func (c *collector) until(t *testing.T, what string, ok func() bool) {
	t.Helper()
	// Generous: a condition met ends the wait at once, and under load (35 on two cores) a host streaming
	// 70 MiB to a race-instrumented reader took more than a minute.
	deadline := time.After(4 * time.Minute)
	for !ok() {
		select {
		case u := <-c.w.Updates():
			for _, k := range u.Removed {
				delete(c.runs, k)
			}
			for _, r := range u.Changed {
				c.runs[r.Key()] = *r
			}
			for _, a := range u.Appended {
				c.logs[a.Path] += len(a.Entries)
				if c.entries != nil {
					c.entries[a.Path] = append(c.entries[a.Path], a.Entries...)
				}
			}
			c.hosts = u.Hosts
		case <-deadline:
			t.Fatalf("timed out waiting for %s; runs %d, hosts %+v", what, len(c.runs), c.hosts)
		}
	}
}

func (c *collector) host(name string) HostHealth {
	for _, h := range c.hosts {
		if h.Host == name {
			return h
		}
	}
	return HostHealth{}
}

func TestWatchTwoHostsLiveChangeAndReconnect(t *testing.T) {
	fleet := sshtest.New(t, binDir, "alpha", "beta")
	rootA, rootB := t.TempDir(), t.TempDir()
	runA := resumabletest.MinimalRun(t, rootA, "irm-a-20261201T080000Z")
	resumabletest.MinimalRun(t, rootB, "irm-b-20261201T080000Z")

	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	w := Watch(s, []Root{{Host: "alpha", Path: rootA}, {Host: "beta", Path: rootB}}, Options{Backoff: 100 * time.Millisecond})
	defer w.Close()
	c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}}

	c.until(t, "runs from both hosts", func() bool {
		return len(c.runs) == 2 && c.host("alpha").State == StateLive && c.host("beta").State == StateLive
	})
	keyA := "ssh://alpha" + filepath.Join(runA, "state.env")
	if r, ok := c.runs[keyA]; !ok || r.Remote.Host != "alpha" || r.ID != "irm-a-20261201T080000Z" || r.Remote.Root != "ssh://alpha"+rootA {
		t.Fatalf("run from alpha: %+v (have %v)", r.Remote, keys(c.runs))
	}

	// A change on the remote side reaches us.
	env, _ := os.ReadFile(filepath.Join(runA, "state.env"))
	if err := os.WriteFile(filepath.Join(runA, "state.env"), []byte(strings.Replace(string(env), `CURRENT_STAGE="S1"`, `CURRENT_STAGE="S2"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	c.until(t, "the remote change", func() bool { return c.runs[keyA].CurrentStage == "S2" })
	f, _ := os.OpenFile(filepath.Join(runA, "run.log"), os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintln(f, "[2026-12-01T08:01:00Z] stage_start stage=S2")
	f.Close()
	c.until(t, "the appended log entry", func() bool { return c.logs["ssh://alpha"+filepath.Join(runA, "run.log")] >= 1 })

	// The host goes away: its runs stay, marked stale, and the footer says it is reconnecting.
	fleet.Kill("alpha")
	c.until(t, "alpha reconnecting", func() bool {
		h := c.host("alpha")
		return h.State == StateReconnecting && h.Error != "" && c.runs[keyA].Remote.StaleSince != nil
	})
	if c.host("beta").State != StateLive {
		t.Fatalf("beta should be unaffected: %+v", c.host("beta"))
	}
	// A change made while we could not see it shows once the host is back.
	env, _ = os.ReadFile(filepath.Join(runA, "state.env"))
	if err := os.WriteFile(filepath.Join(runA, "state.env"), []byte(strings.Replace(string(env), `CURRENT_STAGE="S2"`, `CURRENT_STAGE="S1"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	fleet.Start("alpha")
	c.until(t, "alpha back", func() bool {
		r := c.runs[keyA]
		return c.host("alpha").State == StateLive && r.Remote.StaleSince == nil && r.CurrentStage == "S1"
	})
}

func TestWatchSaysWhenRunwatchIsMissingThere(t *testing.T) {
	fleet := sshtest.New(t, t.TempDir(), "bare") // nothing on the remote PATH but the system's
	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm"), Remote: "runwatch-not-installed"}
	w := Watch(s, []Root{{Host: "bare", Path: "/tmp"}}, Options{Backoff: 50 * time.Millisecond})
	defer w.Close()
	c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}}
	c.until(t, "a clear message", func() bool {
		h := c.host("bare")
		return h.Error != "" && strings.Contains(h.Error, "not installed") && strings.Contains(h.Error, "runwatch install bare")
	})
}

func TestWatchSaysWhenSSHCannotConnect(t *testing.T) {
	fleet := sshtest.New(t, binDir, "down")
	fleet.Kill("down")
	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	w := Watch(s, []Root{{Host: "down", Path: "/tmp"}}, Options{Backoff: 50 * time.Millisecond})
	defer w.Close()
	c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}}
	c.until(t, "ssh's own error", func() bool {
		h := c.host("down")
		return h.State == StateReconnecting && strings.Contains(h.Error, "Connection refused") && h.RetryAt != nil
	})
}

func keys(m map[string]model.Run) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The remote `runwatch events` ends with its connection: sshd only closes a session's pipes, so a process
// that waited for its next write would outlive every dropped connection on a quiet root.
func TestRemoteEventsEndsWithItsConnection(t *testing.T) {
	fleet := sshtest.New(t, binDir, "alpha")
	root := t.TempDir()
	resumabletest.MinimalRun(t, root, "irm-quiet-20261201T080000Z")
	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	w := Watch(s, []Root{{Host: "alpha", Path: root}}, Options{Backoff: 100 * time.Millisecond})
	c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}}
	c.until(t, "alpha live", func() bool { return len(c.runs) == 1 && c.host("alpha").State == StateLive })
	if len(eventsProcesses(root)) == 0 {
		t.Fatal("no runwatch events process for the root on the host: the test looks in the wrong place")
	}
	w.Close()
	deadline := time.Now().Add(30 * time.Second)
	for len(eventsProcesses(root)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the remote runwatch events outlived its connection by 30 s: pids %v", eventsProcesses(root))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// eventsProcesses lists the pids of `runwatch events` processes watching root (the test's "remote" host is
// this machine).
func eventsProcesses(root string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
		if len(args) == 3 && args[1] == ArgvCommand {
			words, err := DecodeArgv(args[2])
			if err != nil {
				continue
			}
			args = append(args[:1], words...)
		}
		if len(args) >= 2 && filepath.Base(args[0]) == "runwatch" && args[1] == "events" && args[len(args)-1] == root {
			pids = append(pids, pid)
		}
	}
	return pids
}
