package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/config"
	"runwatch/model"
	"runwatch/remote"
	"runwatch/remote/sshtest"
	"runwatch/state/action"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/app"
	"runwatch/ui/keys"
)

// sshFleet starts real sshd servers named by aliases whose sessions find the runwatch under test on their
// PATH, and returns them with the environment that points runwatch at them (useFleet).
func sshFleet(t *testing.T, aliases ...string) (*sshtest.Fleet, env) {
	t.Helper()
	bin := buildRunwatch(t)
	return useFleet(t, sshtest.New(t, filepath.Dir(bin), aliases...))
}

// useFleet returns fleet with a test's environment (testEnv) that points runwatch at it through
// RUNWATCH_SSH_COMMAND.
func useFleet(t *testing.T, fleet *sshtest.Fleet) (*sshtest.Fleet, env) {
	t.Helper()
	return fleet, testEnv(t, fleetVars(fleet)...)
}

// fleetVars are the variables (NAME, value …) that point runwatch at fleet: its ssh command, and its
// ControlMaster sockets in a short folder, as unix socket paths are limited to 108 bytes.
func fleetVars(fleet *sshtest.Fleet) []string {
	return []string{"RUNWATCH_SSH_COMMAND", strings.Join(fleet.SSHCommand(), " "), "XDG_RUNTIME_DIR", filepath.Join(fleet.Dir, "rt")}
}

func TestStatusOverSSHMergesHostsAndSaysWhichFailed(t *testing.T) {
	fleet, e := sshFleet(t, "alpha", "beta")
	rootA, rootB := t.TempDir(), t.TempDir()
	resumabletest.MinimalRun(t, rootA, "irm-a-20261201T080000Z")
	resumabletest.MinimalRun(t, rootB, "irm-b-20261201T080000Z")
	local := t.TempDir()
	resumabletest.MinimalRun(t, local, "irm-local-20261201T080000Z")

	var out, errOut bytes.Buffer
	code := dispatch([]string{"status", "--json", "ssh://alpha" + rootA, "beta:" + rootB, local}, &out, &errOut, e)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut.String())
	}
	var snap model.Snapshot
	if err := json.Unmarshal(out.Bytes(), &snap); err != nil {
		t.Fatal(err)
	}
	byID := map[string]model.Run{}
	for _, r := range snap.Runs {
		byID[r.ID] = r
	}
	if r := byID["irm-a-20261201T080000Z"]; r.Remote == nil || r.Remote.Host != "alpha" || r.Remote.Root != "ssh://alpha"+rootA {
		t.Errorf("alpha's run: %+v", r.Remote)
	}
	if r := byID["irm-b-20261201T080000Z"]; r.Remote == nil || r.Remote.Host != "beta" {
		t.Errorf("beta's run: %+v", r.Remote)
	}
	if r := byID["irm-local-20261201T080000Z"]; r.ID == "" || r.Remote != nil {
		t.Errorf("the local run: %+v", r)
	}
	if len(snap.Hosts) != 2 || snap.Hosts[0].State != model.HostLive || snap.Hosts[1].State != model.HostLive {
		t.Errorf("hosts: %+v", snap.Hosts)
	}

	// A host that is down: its runs are absent, status says so on stderr and exits 6, the other host's are there.
	fleet.Kill("beta")
	out.Reset()
	errOut.Reset()
	code = dispatch([]string{"status", "--json", "ssh://alpha" + rootA, "beta:" + rootB}, &out, &errOut, e)
	if code != exitIncomplete || !strings.Contains(errOut.String(), "beta") || !strings.Contains(errOut.String(), "Connection refused") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	snap = model.Snapshot{}
	if err := json.Unmarshal(out.Bytes(), &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Runs) != 1 || snap.Runs[0].Remote.Host != "alpha" || snap.Hosts[1].State != model.HostFailed {
		t.Errorf("with beta down: %d runs, hosts %+v", len(snap.Runs), snap.Hosts)
	}
}

func TestEventsOverSSHStreamsTheRemoteChange(t *testing.T) {
	_, e := sshFleet(t, "alpha")
	root := t.TempDir()
	dir := resumabletest.MinimalRun(t, root, "irm-ev-20261201T080000Z")

	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var errOut bytes.Buffer
	go func() {
		// Until the run is running: the lock taken below makes it so, on the remote side.
		done <- dispatch([]string{"events", "--timeout", "60s", "--until", "running", "--run", "irm-ev", "ssh://alpha" + root}, pw, &errOut, e)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	lines.Buffer(nil, 16<<20)
	seen := map[string]bool{}
	for lines.Scan() {
		var ev struct {
			Protocol int              `json:"protocol"`
			Type     string           `json:"type"`
			Run      *model.Run       `json:"run"`
			Host     model.HostHealth `json:"host"`
		}
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			t.Fatalf("not JSON: %s", lines.Text())
		}
		if ev.Protocol != 1 {
			t.Errorf("line without the protocol version: %s", lines.Text())
		}
		seen[ev.Type] = true
		if ev.Type == "run-added" {
			if ev.Run.Remote == nil || ev.Run.Remote.Host != "alpha" {
				t.Errorf("run-added without its host: %s", lines.Text())
			}
			host, _ := os.Hostname()
			lock := fmt.Sprintf(`{"acquired_at_utc": "%s", "host": "%s", "pid": %d, "run_id": "irm-ev-20261201T080000Z", "user": "u"}`+"\n",
				time.Now().UTC().Format(time.RFC3339), host, os.Getpid())
			if err := os.WriteFile(filepath.Join(dir, "run.lock"), []byte(lock), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if ev.Type == "host-health" && ev.Host.Host != "alpha" {
			t.Errorf("host-health for %q", ev.Host.Host)
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("events exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"run-added", "run-changed", "host-health"} {
		if !seen[want] {
			t.Errorf("no %s line (saw %v)", want, seen)
		}
	}
}

func TestActionsOnARemoteRunHappenThere(t *testing.T) {
	fleet, e := sshFleet(t, "alpha")
	root := t.TempDir()
	dir := resumabletest.MinimalRun(t, root, "irm-act-20261201T080000Z")
	stateFile := filepath.Join(dir, "state.env")
	before, _ := os.ReadFile(stateFile)
	target := "ssh://alpha" + dir

	// The plan comes from the remote runwatch and nothing is written.
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"step", target, "--dry-run"}, &out, &errOut, e); code != 0 {
		t.Fatalf("dry run: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), `+S1_DONE="1"`) || !strings.Contains(out.String(), "dry run") {
		t.Errorf("dry run shows no diff:\n%s", out.String())
	}
	// Without a terminal and without --yes, nothing happens.
	out.Reset()
	errOut.Reset()
	e.stdinTerminal = func() bool { return false }
	if code := dispatch([]string{"step", target}, &out, &errOut, e); code != exitRefused || !strings.Contains(errOut.String(), "--yes") {
		t.Fatalf("unconfirmed: exit %d, %s", code, errOut.String())
	}
	// Read-only here means read-only there.
	if code := dispatch([]string{"step", target, "--yes", "--read-only"}, &out, &errOut, e); code != exitRefused {
		t.Fatalf("read-only step: exit %d", code)
	}
	if after, _ := os.ReadFile(stateFile); !bytes.Equal(after, before) {
		t.Fatalf("state.env changed without a confirmed step:\n%s", after)
	}

	out.Reset()
	errOut.Reset()
	if code := dispatch([]string{"step", target, "--yes", "--reason", "stepped from another machine"}, &out, &errOut, e); code != 0 {
		t.Fatalf("step: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	after, _ := os.ReadFile(stateFile)
	if !strings.Contains(string(after), `S1_DONE="1"`) || !strings.Contains(string(after), `CURRENT_STAGE="S2"`) {
		t.Fatalf("the remote state.env after step:\n%s", after)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "run.log"))
	if !strings.Contains(string(log), "stepped from another machine") {
		t.Errorf("no audit line with the reason in the remote run.log:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(fleet.StateHome("alpha"), "runwatch", "journal.jsonl")); err != nil {
		t.Errorf("the remote runwatch journaled nothing: %v", err)
	}

	// Undo, the same way.
	if code := dispatch([]string{"undo", target, "--yes"}, &out, &errOut, e); code != 0 {
		t.Fatalf("undo: exit %d\n%s", code, errOut.String())
	}
	if undone, _ := os.ReadFile(stateFile); !bytes.Equal(undone, before) {
		t.Fatalf("undo did not restore state.env:\n%s", undone)
	}
}

// The end-to-end: the real dashboard in tmux over two hosts, a step applied on the remote run with
// its audit line there, a host whose sshd is killed shown reconnecting and then live again.
func TestDashboardOverSSHTwoHosts(t *testing.T) {
	fleet, _ := sshFleet(t, "alpha", "beta")
	rootA, rootB := t.TempDir(), t.TempDir()
	dirA := resumabletest.MinimalRun(t, rootA, "irm-alpha-20261201T080000Z")
	resumabletest.MinimalRun(t, rootB, "irm-beta-20261201T080000Z")
	bin := filepath.Join(fleet.BinDir, "runwatch")

	d := newTmuxDemo(t)
	d.env = append(d.env, "RUNWATCH_SSH_COMMAND="+strings.Join(fleet.SSHCommand(), " "),
		"XDG_RUNTIME_DIR="+filepath.Join(fleet.Dir, "rt"))
	exitFile := d.start(t, fmt.Sprintf("%s ssh://alpha%s beta:%s", bin, rootA, rootB))

	s := d.waitScreen("runs from both hosts", func(s string) bool {
		return strings.Contains(s, "irm-alpha-20261201T080000Z") && strings.Contains(s, "irm-beta-20261201T080000Z") &&
			strings.Contains(s, "● alpha") && strings.Contains(s, "● beta")
	})
	if !strings.Contains(s, "HOST") {
		t.Errorf("two hosts but no HOST column:\n%s", s)
	}

	// A change on the remote side appears here.
	env, _ := os.ReadFile(filepath.Join(dirA, "checklist.state.env"))
	if err := os.WriteFile(filepath.Join(dirA, "checklist.state.env"), []byte(strings.Replace(string(env), `CB_S2_B="0"`, `CB_S2_B="1"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}

	// Step the remote run: the plan comes from alpha, the change is made there with its audit line.
	d.selectRun("host:alpha")
	// Its timeline has the log's history, written before runwatch connected: fetched from alpha.
	d.waitText("run_bootstrap mode=kickoff-new")
	d.press(keys.ActStep)
	d.waitText("[y/N]")
	if !strings.Contains(d.screen(), "alpha") {
		t.Errorf("the confirmation does not say the change is made on alpha:\n%s", d.screen())
	}
	d.send("y")
	d.waitText("done on alpha")
	state, _ := os.ReadFile(filepath.Join(dirA, "state.env"))
	if !strings.Contains(string(state), `S1_DONE="1"`) || !strings.Contains(string(state), `CURRENT_STAGE="S2"`) {
		t.Fatalf("alpha's state.env after the step:\n%s", state)
	}
	if log, _ := os.ReadFile(filepath.Join(dirA, "run.log")); !strings.Contains(string(log), "from the runwatch dashboard") {
		t.Errorf("no audit line on alpha:\n%s", log)
	}

	// A host that goes away is shown reconnecting, its runs kept; when it is back, it is live again.
	fleet.Kill("beta")
	d.waitText("beta reconnecting")
	fleet.Start("beta")
	if !d.within(45*time.Second, func(s string) bool { return strings.Contains(s, "● beta") }) {
		ps, _ := exec.Command("sh", "-c", "ps -eo pid,ppid,pgid,etime,args | grep -E 'ssh|runwatch' | grep -v grep").CombinedOutput()
		t.Fatalf("beta not live again:\n%s\n%s", d.screen(), ps)
	}

	d.press(keys.ActQuit)
	if code := d.waitExit(exitFile); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// A first argument in scp style (host:path) is a remote root for the dashboard, not a mistyped command.
func TestHostPathIsNotTakenForATypo(t *testing.T) {
	var errOut bytes.Buffer
	if code, handled := unknownCommand("gpu2:reports", &errOut); handled {
		t.Fatalf("host:path was answered as an unknown command (exit %d): %s", code, errOut.String())
	}
	if _, handled := unknownCommand("stauts", &errOut); !handled {
		t.Fatal("a typo is still answered")
	}
}

// A remote run's lock that names this machine is judged here (its host calls it unknown); one judged stale
// here is cleared on the host with the holder typed, which stands for --force there.
func TestUnlockOfARemoteRunsLockJudgedHere(t *testing.T) {
	here, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	bin := buildRunwatch(t)
	fleet := sshtest.NewNamed(t, filepath.Dir(bin), map[string]string{"alpha": fmt.Sprintf("alpha-box-%d", os.Getpid())}, "alpha")
	root := t.TempDir()
	dir := resumabletest.MinimalRun(t, root, "irm-held-here-20261201T080000Z")
	lock := filepath.Join(dir, "run.lock")
	resumabletest.WriteEnvLock(t, lock, resumabletest.DeadPID(t), here, time.Now())

	s := remote.SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	roots := []remote.Root{{Host: "alpha", Path: root}}
	runs, hosts := remote.Snapshot(context.Background(), s, roots, nil, remote.NewElsewhere(s, roots), model.DefaultStaleAfter)
	if len(hosts) != 1 || hosts[0].Error != "" {
		t.Fatalf("alpha: %+v", hosts)
	}
	var run model.Run
	for _, r := range runs {
		if r.ID == "irm-held-here-20261201T080000Z" {
			run = r
		}
	}
	if len(run.Locks) != 1 || run.Locks[0].Verdict != model.VerdictStale || run.Locks[0].JudgedOn != remote.ThisMachine {
		t.Fatalf("the lock as judged here: %+v", run.Locks)
	}
	p, err := fleetActor{ssh: s}.Plan(app.ActionRequest{Act: keys.ActUnlock, Request: action.Request{Verb: action.ActUnlock, Run: run}})
	if err != nil {
		t.Fatal(err)
	}
	if p.TypedConfirmation() != here {
		t.Fatalf("typed confirmation %q, want the holder's host %q", p.TypedConfirmation(), here)
	}
	if _, err := p.Apply(here); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("the lock is still there after the unlock (%v)", err)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "run.log")); !strings.Contains(string(log), "stale_lock_cleared") {
		t.Errorf("no audit line in the remote run.log:\n%s", log)
	}
}

// Issue 22.7: a word from the host's own files that looks like a flag (a phase key "-h", an item "--yes")
// reaches the remote runwatch as a word, after --: the plan is refused for what it names, not the help
// shown as a plan and then "done".
func TestRemoteWordsThatLookLikeFlagsStayWords(t *testing.T) {
	_, e := sshFleet(t, "alpha")
	root := t.TempDir()
	dir := resumabletest.MinimalRun(t, root, "irm-dash-20261201T080000Z")
	run := model.Run{Kind: model.KindResumable, ID: "irm-dash-20261201T080000Z", Dir: dir, StatePath: filepath.Join(dir, "state.env"),
		Remote: &model.RemoteRef{Host: "alpha", Root: "ssh://alpha" + root}}
	f := fleetActor{ssh: sshFor(e.getenv, config.Config{})}
	for _, req := range []app.ActionRequest{
		{Act: keys.ActRetry, Request: action.Request{Verb: action.ActRetry, Word: "-h", Run: run}},
		{Act: keys.ActTick, Request: action.Request{Verb: action.ActCheck, Word: "-h", Run: run}},
		{Act: keys.ActTick, Request: action.Request{Verb: action.ActCheck, Word: "--help", Run: run}},
	} {
		p, err := f.Plan(req)
		if err == nil {
			t.Errorf("%s %q: planned %q (%q), want a refusal naming the word", req.Verb, req.Word, p.Summary(), p.Preview())
			continue
		}
		if strings.Contains(err.Error(), "Usage") || strings.Contains(err.Error(), "-dry-run") {
			t.Errorf("%s %q: the remote runwatch took the word for a flag: %v", req.Verb, req.Word, err)
		}
	}
}

// Issue 22.4: a remote run is handled on its host. `b` shows the brief the host's runwatch builds from its
// own files (the host's runwatch here marks its answer, so the test sees whose it is), and `X` is refused
// with why: the resume command would run here with that host's paths.
func TestDashboardBriefComesFromTheHostAndLaunchIsRefused(t *testing.T) {
	bin := buildRunwatch(t)
	wrap := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\n[ \"$1\" = %[2]s ] && eval \"set -- $(%[1]q %[2]s --sh \"$2\")\"\n"+
		"[ \"$1\" = brief ] && echo 'ANSWERED-ON-THE-HOST'\nexec %[1]q \"$@\"\n", bin, remote.ArgvCommand)
	if err := os.WriteFile(filepath.Join(wrap, "runwatch"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	fleet := sshtest.New(t, wrap, "alpha")
	root := t.TempDir()
	dir := resumabletest.MinimalRun(t, root, "irm-brief-20261201T080000Z")

	d := newTmuxDemo(t)
	d.env = append(d.env, "RUNWATCH_SSH_COMMAND="+strings.Join(fleet.SSHCommand(), " "),
		"XDG_RUNTIME_DIR="+filepath.Join(fleet.Dir, "rt"))
	exitFile := d.start(t, fmt.Sprintf("%s ssh://alpha%s", bin, root))
	d.waitScreen("alpha's run", func(s string) bool {
		return strings.Contains(s, "irm-brief-20261201T080000Z") && strings.Contains(s, "● alpha")
	})
	d.press(keys.ActBrief)
	s := d.waitText("ANSWERED-ON-THE-HOST")
	if !strings.Contains(s, "from alpha") || !strings.Contains(s, "irm-brief-20261201T080000Z") {
		t.Errorf("the brief's pager does not say it is alpha's:\n%s", s)
	}
	d.press(keys.ActBack)
	d.waitScreen("the pager closed", func(s string) bool { return !strings.Contains(s, "ANSWERED-ON-THE-HOST") })
	d.press(keys.ActLaunch)
	if s := d.waitText("launch refused"); !strings.Contains(s, "is on alpha") {
		t.Errorf("the refusal does not say where the run is:\n%s", s)
	}
	d.press(keys.ActQuit)
	if code := d.waitExit(exitFile); code != 0 {
		t.Fatalf("exit %d", code)
	}

	// The command line asks the host the same way.
	_, e := useFleet(t, fleet)
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"brief", "ssh://alpha" + dir}, &out, &errOut, e); code != 0 || !strings.Contains(out.String(), "ANSWERED-ON-THE-HOST") {
		t.Fatalf("brief ssh://alpha…: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

// Issue 25.4: remote events primes its attention lines on what a host has when first reached, as the local
// root does: a run already stalled at start-up says nothing; one that stalls later does.
func TestRemoteEventsPrimeAttentionOnTheFirstBatch(t *testing.T) {
	_, e := sshFleet(t, "alpha")
	root, live, _, h := notifyFixture(t)
	s := startEvents(t, e, "--until", "stalled", "--run", "live-", "ssh://alpha"+root)
	s.next("alpha live", func(m map[string]any) bool {
		host, _ := m["host"].(map[string]any)
		return m["type"] == "host-health" && host["state"] == "live"
	})
	h.kill()
	at := s.next("attention", ofType("attention"))
	if at["id"] != "live-20260301T000000Z" || at["transition"] != "entered" || at["state_path"] != filepath.Join(live, "state.env") {
		t.Fatalf("attention line: %v", at)
	}
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, m := range s.seen {
		if m["type"] == "attention" && m["id"] != "live-20260301T000000Z" {
			t.Errorf("an attention line for the state at start-up: %v", m)
		}
	}
}
