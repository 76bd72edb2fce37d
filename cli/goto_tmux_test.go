package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"runwatch/remote/sshtest"
	"runwatch/state"
	"runwatch/state/agentpane/agentpanetest"
	"runwatch/state/resumable/resumabletest"
)

// gotoRun writes a resumable run whose lock is held by pid since acquired.
func gotoRun(t *testing.T, pid int, acquired time.Time) string {
	t.Helper()
	dir := resumabletest.MinimalRun(t, t.TempDir(), "irm-goto-20261201T080000Z")
	if pid != 0 {
		resumabletest.WriteJSONLock(t, filepath.Join(dir, "run.lock"), pid, state.NewEnv(0).Host, acquired)
	}
	return dir
}

// gotoEnv is a test's environment (testEnv) outside tmux, with tmux's folder the test's own (tmpdir).
func gotoEnv(t *testing.T) (tmpdir string, e env) {
	tmpdir, vars := agentpanetest.Private(t)
	var kv []string
	for _, v := range vars {
		k, v, _ := strings.Cut(v, "=")
		kv = append(kv, k, v)
	}
	return tmpdir, testEnv(t, kv...)
}

// goto --print and --json say where the agent is; with no agent, exit 3 and the reason.
func TestGotoPrintsThePane(t *testing.T) {
	tmpdir, e := gotoEnv(t)
	s := agentpanetest.New(t, tmpdir, "default", "work")
	paneID, pid := s.Agent("work")
	dir := gotoRun(t, pid, time.Now())

	code, out, errOut := runIn(t, e, "goto", "--print", dir)
	if code != exitOK || out != s.Target(paneID)+" "+paneID+"\n" {
		t.Fatalf("goto --print: exit %d, %q (stderr %q), want %q", code, out, errOut, s.Target(paneID)+" "+paneID)
	}
	code, out, errOut = runIn(t, e, "goto", "--json", dir)
	var got map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("goto --json: exit %d, %q (stderr %q)", code, out, errOut)
	}
	win, _ := strconv.Atoi(strings.TrimSuffix(strings.Split(s.Target(paneID), ":")[1], ".0"))
	want := map[string]any{"host": state.NewEnv(0).Host, "pid": float64(pid), "session": "work", "window": float64(win), "pane": float64(0), "pane_id": paneID}
	if len(got) != len(want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}

	// No agent: a dead holder, then tmux not running.
	code, _, errOut = runIn(t, e, "goto", "--print", gotoRun(t, resumabletest.DeadPID(t), time.Now()))
	if code != exitNoAgent || !strings.Contains(errOut, "no live holder") || !strings.Contains(errOut, "is not running") {
		t.Errorf("dead holder: exit %d, stderr %q", code, errOut)
	}
	// The agent in the pane dies with the server, at a time of its own: the holder here is a process outside
	// tmux, alive either side of kill-server, so the only thing goto can say is that tmux is not running.
	outside := gotoRun(t, resumabletest.LivePID(t), time.Now())
	s.Run("kill-server")
	code, _, errOut = runIn(t, e, "goto", "--print", outside)
	if code != exitNoAgent || !strings.Contains(errOut, "tmux is not running") {
		t.Errorf("no tmux: exit %d, stderr %q", code, errOut)
	}
}

// Inside tmux, goto switches this client to the agent's pane; outside tmux it attaches a terminal to it.
func TestGotoSwitchesOrAttaches(t *testing.T) {
	tmpdir, e := gotoEnv(t)
	s := agentpanetest.New(t, tmpdir, "default", "home")
	home := s.Run("display-message", "-p", "-t", "home", "#{pane_id}")
	s.Run("new-session", "-d", "-s", "agents")
	paneID, pid := s.Agent("agents")
	dir := gotoRun(t, pid, time.Now())
	// The terminal a person looks at: a client of the server, attached to "home", inside a second server.
	outer := agentpanetest.New(t, tmpdir, "outer", "term")
	outer.Run("new-window", "-t", "term:", strings.Join(s.Argv("attach", "-t", "home"), " "))
	s.ClientOn(home, "the client never attached")

	if code, out, errOut := runIn(t, e.with("TMUX", s.Sock+",1,0", "TMUX_PANE", home), "goto", dir); code != exitOK {
		t.Fatalf("goto: exit %d, %q %q", code, out, errOut)
	}
	s.ClientOn(paneID, "goto inside tmux")

	// Outside tmux: runwatch becomes `tmux attach`, in a terminal of its own.
	bin := buildRunwatch(t)
	before := s.Run("list-clients", "-F", "#{client_name}")
	outer.Run("new-window", "-t", "term:", "env -u TMUX -u TMUX_PANE TMUX_TMPDIR="+tmpdir+" XDG_CONFIG_HOME="+e.getenv("XDG_CONFIG_HOME")+
		" "+bin+" goto "+dir+"; sleep 600")
	for deadline := time.Now().Add(30 * time.Second); s.Run("list-clients", "-F", "#{client_name}") == before; {
		if time.Now().After(deadline) {
			t.Fatalf("goto outside tmux never attached:\n%s", outer.Run("capture-pane", "-p", "-t", "term:"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(strings.Fields(s.Run("list-clients", "-F", "#{pane_id}"))); n != 2 {
		t.Fatalf("%d clients, want 2", n)
	}
	s.ClientOn(paneID, "goto outside tmux")
}

// A remote run's pane is found by its host's runwatch, and goto inside tmux opens a window here running ssh
// to that host, attached to the pane.
func TestGotoRemoteRun(t *testing.T) {
	tmpdir, e := gotoEnv(t)
	fleet, _ := sshFleet(t, "alpha")
	// The host's default tmux server is the test's own: ssh sends the folder, sshtest accepts it.
	e = e.with(append(fleetVars(fleet), "RUNWATCH_SSH_COMMAND", strings.Join(fleet.SSHCommand(), " ")+" -o SetEnv=TMUX_TMPDIR="+tmpdir)...)
	s := agentpanetest.New(t, tmpdir, "default", "work")
	paneID, pid := s.Agent("work")
	dir := gotoRun(t, pid, time.Now())
	target := "ssh://alpha" + dir

	code, out, errOut := runIn(t, e, "goto", "--json", target)
	var got map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil || got["host"] != "alpha" || got["pane_id"] != paneID || got["pid"] != float64(pid) {
		t.Fatalf("goto --json %s: exit %d, %q (stderr %q)", target, code, out, errOut)
	}
	if code, out, _ := runIn(t, e, "goto", "--print", target); code != exitOK || out != s.Target(paneID)+" "+paneID+"\n" {
		t.Fatalf("goto --print: exit %d, %q", code, out)
	}

	// From a tmux here (another server), goto opens a window that attaches to the pane over ssh.
	here := agentpanetest.New(t, tmpdir, "here", "me")
	if code, out, errOut := runIn(t, e.with("TMUX", here.Sock+",1,0"), "goto", target); code != exitOK {
		t.Fatalf("goto: exit %d, %q %q", code, out, errOut)
	}
	s.ClientOn(paneID, "the window goto opened")
	if w := here.Run("list-windows", "-t", "me", "-F", "#{window_name}"); !strings.Contains(w, "agent alpha") {
		t.Errorf("windows here: %q", w)
	}

	code, _, errOut = runIn(t, e, "goto", "--print", "ssh://alpha"+gotoRun(t, 0, time.Time{}))
	if code != exitNoAgent || !strings.Contains(errOut, "on alpha: no live holder") {
		t.Errorf("no agent there: exit %d, stderr %q", code, errOut)
	}
}

// A host's answer is untrusted: a pane id that is not tmux's %N never becomes a word of ssh or tmux, and a
// session name reaches the terminal sanitized.
func TestGotoHostileHostAnswer(t *testing.T) {
	_, e := gotoEnv(t)
	bin := t.TempDir()
	answer := filepath.Join(t.TempDir(), "answer.json")
	// The host's "runwatch" prints whatever the test put in answer.json.
	if err := os.WriteFile(filepath.Join(bin, "runwatch"), []byte("#!/bin/sh\ncat "+answer+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fleet := sshtest.New(t, bin, "alpha")
	e = e.with(fleetVars(fleet)...)
	say := func(v any) {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(answer, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	say(map[string]any{"pane": map[string]any{"pane_id": "%1; touch PWN", "session": "s", "pid": 1}})
	code, out, errOut := runIn(t, e, "goto", "--print", "ssh://alpha/runs/x")
	if code != exitProblems || out != "" || !strings.Contains(errOut, "answered a pane id that is none") {
		t.Errorf("pane id %%1; touch PWN: exit %d, %q, stderr %q", code, out, errOut)
	}
	say(map[string]any{"pane": map[string]any{"pane_id": "%7", "session": "s\x1b]0;PWN\x07\x9b31m", "window": 2, "pid": 1}})
	code, out, errOut = runIn(t, e, "goto", "--print", "ssh://alpha/runs/x")
	if code != exitOK || strings.ContainsAny(out, "\x1b\x07\u009b") || !strings.HasSuffix(out, ":2.0 %7\n") {
		t.Errorf("hostile session name: exit %d, %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runIn(t, e, "goto", "--json", "ssh://alpha/runs/x")
	if code != exitOK || strings.ContainsAny(out, "\x1b\x07\u009b") {
		t.Errorf("hostile session name in JSON: exit %d, %q", code, out)
	}
	say(map[string]any{"not_found": "no live holder\x1b[2J"})
	code, _, errOut = runIn(t, e, "goto", "--print", "ssh://alpha/runs/x")
	if code != exitNoAgent || strings.Contains(errOut, "\x1b") || !strings.Contains(errOut, "on alpha: no live holder") {
		t.Errorf("hostile reason: exit %d, stderr %q", code, errOut)
	}
}

// status --json carries each live holder's pane as agent_pane, and asks tmux once for the whole status, only
// when some run has a live holder.
func TestStatusJSONCarriesAgentPane(t *testing.T) {
	tmpdir, e := gotoEnv(t)
	s := agentpanetest.New(t, tmpdir, "default", "work")
	root := t.TempDir()
	var panes []string
	for _, name := range []string{"irm-a-20261201T080000Z", "irm-b-20261201T080000Z"} {
		paneID, pid := s.Agent("work")
		panes = append(panes, paneID)
		dir := resumabletest.MinimalRun(t, root, name)
		resumabletest.WriteJSONLock(t, filepath.Join(dir, "run.lock"), pid, state.NewEnv(0).Host, time.Now())
	}
	resumabletest.MinimalRun(t, root, "irm-idle-20261201T080000Z")
	idle := t.TempDir()
	resumabletest.MinimalRun(t, idle, "irm-idle-20261201T080000Z")

	// tmux, as status finds it on PATH, notes each call.
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	fake, calls := t.TempDir(), filepath.Join(t.TempDir(), "calls")
	if err := os.WriteFile(filepath.Join(fake, "tmux"), []byte("#!/bin/sh\necho \"$*\" >> "+calls+"\nexec "+real+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The real binary, whose PATH finds that tmux first.
	status := func(args ...string) (int, string, string) {
		return runReal(t, append(e.environ(), "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH")), "", args...)
	}
	listed := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "list-panes")
	}

	code, out, errOut := status("status", "--json", root)
	var snap struct {
		Runs []struct {
			ID        string          `json:"id"`
			AgentPane json.RawMessage `json:"agent_pane"`
		} `json:"runs"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &snap) != nil || len(snap.Runs) != 3 {
		t.Fatalf("status: exit %d, stderr %q\n%s", code, errOut, out)
	}
	for _, r := range snap.Runs {
		var p map[string]any
		_ = json.Unmarshal(r.AgentPane, &p)
		switch r.ID {
		case "irm-a-20261201T080000Z", "irm-b-20261201T080000Z":
			want := panes[0]
			if r.ID[4] == 'b' {
				want = panes[1]
			}
			if p["pane_id"] != want || p["session"] != "work" {
				t.Errorf("%s: agent_pane %s, want pane %s", r.ID, r.AgentPane, want)
			}
		default:
			if r.AgentPane != nil {
				t.Errorf("%s has no live holder, yet agent_pane %s", r.ID, r.AgentPane)
			}
		}
	}
	if n := listed(); n != 1 {
		t.Errorf("status listed tmux's panes %d times, want once", n)
	}
	if code, _, errOut := status("status", "--json", idle); code != exitOK || listed() != 1 {
		t.Errorf("no live holder: exit %d (%q), tmux listed %d times in all, want no more", code, errOut, listed())
	}
}
