package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/remote/sshtest"
	"runwatch/shellword"
)

// Issue 22.7: what one host can make us hold is bounded. A 20 MiB line is read past, not kept, and fails
// the host with its length and the limit; so does a host that sends more runs than runwatch holds from one
// host; a line that is not JSON is called what it is.
func TestAHostCannotMakeUsHoldWithoutLimit(t *testing.T) {
	long, many, bad := t.TempDir(), t.TempDir(), t.TempDir()
	wrap := fakeEvents(t, map[string]string{
		long: `
  printf '{"protocol":1,"type":"run-added","run":{"id":"'; head -c 20971520 /dev/zero | tr '\0' a; printf '"}}\n'
  keepAlive`,
		// 70 runs of 1 MiB each: every line is fine, together they pass the 64 MiB a host may hold.
		many: fmt.Sprintf(`
  pad=$(head -c 1048576 /dev/zero | tr '\0' a)
  i=0; while [ $i -lt 70 ]; do printf '{"protocol":1,"type":"run-added","run":{"id":"r%%s","state_path":"%s/r%%s/state.env","note":"%%s"}}\n' $i $i "$pad"; i=$((i+1)); done
  keepAlive`, many),
		bad: `
  printf '%s\n' '{"protocol":1,"type":"watch-health","health":{}}' 'not json at all'
  keepAlive`,
	})
	fleet := sshtest.New(t, wrap, "long", "many", "bad")
	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	w := Watch(s, []Root{{Host: "long", Path: long}, {Host: "many", Path: many}, {Host: "bad", Path: bad}}, Options{Backoff: 100 * time.Millisecond})
	defer w.Close()
	c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}}
	want := map[string]string{
		"long": fmt.Sprintf("long: line too long (%d bytes, limit %d)", 20971520+len(`{"protocol":1,"type":"run-added","run":{"id":"`)+len(`"}}`)+1, maxLine),
		"many": fmt.Sprintf("limit %d", maxHeld),
		"bad":  `bad: invalid line from the remote runwatch`,
	}
	// Each host's state as it was when its failure was reported (a slow machine may see the next attempt
	// start before the test looks again).
	seen, said := map[string]State{}, map[string]string{}
	c.until(t, "each host failed with why", func() bool {
		for host, msg := range want {
			if h := c.host(host); strings.Contains(h.Error, msg) && seen[host] == "" {
				seen[host], said[host] = h.State, h.Error
			}
		}
		return len(seen) == len(want)
	})
	for host, st := range seen {
		if host != "bad" && st != StateFailed {
			t.Errorf("%s: %s, want failed", host, st)
		}
	}
	if !strings.Contains(said["bad"], `"not json at all"`) {
		t.Errorf("bad: %q does not show the line", said["bad"])
	}
}

// A one-off command's answer is bounded the same way: status --json of 70 MiB fails the host, with why.
func TestAnAnswerTooLongFailsTheHost(t *testing.T) {
	wrap := t.TempDir()
	script := "#!/bin/sh\nhead -c 73400320 /dev/zero | tr '\\0' a\n"
	if err := os.WriteFile(filepath.Join(wrap, "runwatch"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	fleet := sshtest.New(t, wrap, "big")
	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	runs, hosts := Snapshot(context.Background(), s, []Root{{Host: "big", Path: "/tmp"}}, nil, nil, 0)
	if len(runs) != 0 || len(hosts) != 1 || hosts[0].State != StateFailed || !strings.HasPrefix(hosts[0].Error, "big: answer too long (over ") ||
		!strings.HasSuffix(hosts[0].Error, fmt.Sprintf("bytes, limit %d)", maxAnswer)) {
		t.Fatalf("runs %d, hosts %+v", len(runs), hosts)
	}
}

// Issue 25.4: a host whose stream goes live and fails at once, every time, is tried less and less often:
// the backoff starts over only after a connection that held, not after every one that got as far as live.
func TestBackoffGrowsForAHostThatFailsOnceLive(t *testing.T) {
	flaky := t.TempDir()
	wrap := fakeEvents(t, map[string]string{flaky: `
  printf '%s\n' '{"protocol":1,"type":"watch-health","health":{}}' 'not json'`})
	fleet := sshtest.New(t, wrap, "flaky")
	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	w := Watch(s, []Root{{Host: "flaky", Path: flaky}}, Options{Backoff: 50 * time.Millisecond})
	defer w.Close()
	var delays []time.Duration
	var last time.Time
	deadline := time.After(60 * time.Second)
	for len(delays) < 4 {
		select {
		case u := <-w.Updates():
			h := u.Hosts[0]
			if h.State == StateReconnecting && h.RetryAt != nil && !h.Since.Equal(last) {
				if !strings.Contains(h.Error, "invalid line") {
					t.Fatalf("the failure is reported as %q", h.Error)
				}
				last = h.Since
				delays = append(delays, h.RetryAt.Sub(h.Since))
			}
		case <-deadline:
			t.Fatalf("only %d failures seen: %v", len(delays), delays)
		}
	}
	for i := 1; i < len(delays); i++ {
		if delays[i] <= delays[i-1] {
			t.Fatalf("the backoff did not grow for a host failing each time it is live: %v", delays)
		}
	}
}

// Issue 25.3: a host whose runwatch speaks an older protocol is failed with both versions and which side
// to upgrade, and how; one that speaks a newer protocol is failed too (this runwatch cannot know what its
// lines mean), saying this side is the one to upgrade.
func TestVersionSkewSaysBothVersionsAndWhichSide(t *testing.T) {
	for _, tc := range []struct {
		host  string
		speak int
		want  string
	}{
		{"oldhost", 0, fmt.Sprintf("oldhost: its runwatch speaks protocol 0, this runwatch %d: upgrade the one on oldhost (runwatch install oldhost)", ProtocolVersion)},
		{"newhost", ProtocolVersion + 1, fmt.Sprintf("newhost: its runwatch speaks protocol %d, newer than this runwatch's %d, which cannot read it: upgrade this runwatch, or put this one there (runwatch install newhost)", ProtocolVersion+1, ProtocolVersion)},
	} {
		t.Run(tc.host, func(t *testing.T) {
			root := t.TempDir()
			wrap := fakeEvents(t, map[string]string{root: fmt.Sprintf(`
  printf '%%s\n' '{"protocol":%d,"type":"watch-health","health":{}}'
  keepAlive`, tc.speak)})
			fleet := sshtest.New(t, wrap, tc.host)
			s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
			w := Watch(s, []Root{{Host: tc.host, Path: root}}, Options{Backoff: 50 * time.Millisecond})
			defer w.Close()
			c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}}
			c.until(t, "the skew named", func() bool { return c.host(tc.host).Error == tc.want })
		})
	}
}

// A host's log lines are kept only for the log of a run it has sent: lines naming a path no run of that
// host has (with or without a state path, or another run's state path) are dropped, so a host cannot make
// the dashboard hold one log per invented path.
func TestLogLinesOnlyForTheLogsOfKnownRuns(t *testing.T) {
	root := t.TempDir()
	run := func(state, log string) string {
		return fmt.Sprintf(`{"protocol":%d,"type":"run-added","run":{"id":"r","kind":"resumable","dir":"/h/r","state_path":%q,"log":{"path":%q}}}`,
			ProtocolVersion, state, log)
	}
	appended := func(state, log, msg string) string {
		return fmt.Sprintf(`{"protocol":%d,"type":"log-appended","path":%q,"state_path":%q,"entries":[{"offset":0,"message":%q}]}`,
			ProtocolVersion, log, state, msg)
	}
	lines := []string{
		run("/h/r/state.env", "/h/r/run.log"),
		fmt.Sprintf(`{"protocol":%d,"type":"watch-health","health":{}}`, ProtocolVersion),
		appended("/h/r/state.env", "/h/invented-1.log", "another path for a known run"),
		appended("", "/h/invented-2.log", "no run named"),
		appended("/h/nobody/state.env", "/h/nobody/run.log", "a run never sent"),
		appended("/h/r/state.env", "/h/r/run.log", "the run's own log"),
	}
	var script strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&script, "\n  printf '%%s\\n' %s", shellword.Quote(l))
	}
	script.WriteString("\n  keepAlive")
	wrap := fakeEvents(t, map[string]string{root: script.String()})
	fleet := sshtest.New(t, wrap, "inventor")
	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	w := Watch(s, []Root{{Host: "inventor", Path: root}}, Options{Backoff: 50 * time.Millisecond})
	defer w.Close()
	c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}}
	own := model.RemoteKey("inventor", "/h/r/run.log")
	c.until(t, "the run's own log line", func() bool { return c.logs[own] == 1 })
	if len(c.logs) != 1 {
		t.Fatalf("log lines kept for paths no run of the host has: %v", c.logs)
	}
}
