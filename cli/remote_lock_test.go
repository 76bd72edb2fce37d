package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/remote/sshtest"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/keys"
)

// sshFleetNamed is sshFleet with servers that are other machines by name (alias → host name), and a config
// whose roots reach them, as a person's would; with the environment to run runwatch in.
func sshFleetNamed(t *testing.T, hostnames map[string]string, aliases ...string) (*sshtest.Fleet, env) {
	t.Helper()
	bin := buildRunwatch(t)
	fleet := sshtest.NewNamed(t, filepath.Dir(bin), hostnames, aliases...)
	config := t.TempDir()
	e := testEnv(t, append(fleetVars(fleet), "XDG_CONFIG_HOME", config)...)
	var roots strings.Builder
	for _, a := range aliases {
		fmt.Fprintf(&roots, "  - ssh://%s%s\n", a, t.TempDir())
	}
	if err := os.MkdirAll(filepath.Join(config, "runwatch"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "runwatch", "config.yaml"), []byte("roots:\n"+roots.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return fleet, e
}

func statusLock(t *testing.T, e env, dir string) model.Lock {
	t.Helper()
	code, out, errOut := runCmd(e, "status", "--json", dir)
	if code != 0 && code != 1 {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	var snap model.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if len(snap.Runs) != 1 || len(snap.Runs[0].Locks) != 1 {
		t.Fatalf("want one run with one lock: %s", out)
	}
	return snap.Runs[0].Locks[0]
}

// A lock here that names a machine runwatch reaches over ssh is judged on that machine, by its processes:
// stale when the pid is not running there (and then cleared after a y/N), live when it is (and then never
// cleared), and unknown, with why, while the machine is down.
func TestALockHeldOnAReachedMachineIsJudgedThere(t *testing.T) {
	name := "alpha" // the machine calls itself by the name it is reached as
	fleet, e := sshFleetNamed(t, map[string]string{"alpha": name}, "alpha")
	dir := resumabletest.MinimalRun(t, t.TempDir(), "irm-held-20261201T080000Z")
	lock := filepath.Join(dir, "run.lock")

	dead := resumabletest.DeadPID(t)
	resumabletest.WriteEnvLock(t, lock, dead, name, time.Now())
	l := statusLock(t, e, dir)
	want := fmt.Sprintf("judged on alpha: pid %d is not running", dead)
	if l.Verdict != model.VerdictStale || l.JudgedOn != "alpha" || len(l.Reasons) == 0 || l.Reasons[0] != want {
		t.Fatalf("dead pid on %s: %s judged on %q %q, want stale %q", name, l.Verdict, l.JudgedOn, l.Reasons, want)
	}
	if code, out, _ := runCmd(e, "status", dir); !strings.Contains(out, fmt.Sprintf("lock held by dead pid %d on alpha", dead)) {
		t.Errorf("status (table) does not say where the lock was judged (exit %d):\n%s", code, out)
	}

	// Stale there: cleared after a plain y/N, with the verdict and where it was made in the audit line.
	if code, out, errOut := runCmd(fakeTerminal(e, "y\n"), "unlock", dir); code != 0 {
		t.Fatalf("unlock of a lock stale on alpha: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("the stale lock is still there: %v", err)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "run.log")); !strings.Contains(string(log), "stale_lock_cleared") || !strings.Contains(string(log), "judged on alpha") {
		t.Errorf("the audit line does not say where the lock was judged:\n%s", log)
	}

	// Alive there (the sshd itself, which lives on that machine): live, and never cleared.
	resumabletest.WriteEnvLock(t, lock, fleet.PID("alpha"), name, time.Now())
	if l := statusLock(t, e, dir); l.Verdict != model.VerdictLive || l.JudgedOn != "alpha" {
		t.Fatalf("live pid on %s: %s judged on %q %q", name, l.Verdict, l.JudgedOn, l.Reasons)
	}
	code, _, errOut := runCmd(e, "unlock", dir, "run.lock", "--yes", "--force")
	if code != exitRefused || !strings.Contains(errOut, "refusing to clear a live lock") {
		t.Fatalf("unlock of a lock live on alpha: exit %d, %s", code, errOut)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the live lock was removed: %v", err)
	}

	// The machine is down: unknown, saying which machine and why, and the unlock needs the holder typed.
	fleet.Kill("alpha")
	l = statusLock(t, e, dir)
	if l.Verdict != model.VerdictUnknown || l.JudgedOn != "" || !strings.Contains(strings.Join(l.Reasons, "; "), "alpha did not say its host name") {
		t.Fatalf("machine down: %s judged on %q %q", l.Verdict, l.JudgedOn, l.Reasons)
	}
}

// A watcher judges such a lock there too, without waiting on the network: the holder exiting on that
// machine turns the run from running to stalled here.
func TestAWatcherSeesTheHolderExitOnTheMachineThatHoldsTheLock(t *testing.T) {
	name := "alpha" // the machine calls itself by the name it is reached as
	fleet, e := sshFleetNamed(t, map[string]string{"alpha": name}, "alpha")
	dir := resumabletest.MinimalRun(t, t.TempDir(), "irm-watched-20261201T080000Z")
	n := fleet.Holder("alpha")
	resumabletest.WriteEnvLock(t, filepath.Join(dir, "run.lock"), n, name, time.Now())

	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var errOut bytes.Buffer
	go func() {
		done <- dispatch([]string{"events", "--timeout", "90s", "--until", "stalled", "--run", "irm-watched", dir}, pw, &errOut, e)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	lines.Buffer(nil, 16<<20)
	sawLive, killed := false, false
	var last model.Lock
	for lines.Scan() {
		var ev struct {
			Run *model.Run `json:"run"`
		}
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			t.Fatalf("not JSON: %s", lines.Text())
		}
		if ev.Run == nil || len(ev.Run.Locks) != 1 {
			continue
		}
		last = ev.Run.Locks[0]
		if last.Verdict == model.VerdictLive && last.JudgedOn == "alpha" && ev.Run.Status == model.StatusRunning && !killed {
			sawLive, killed = true, true
			fleet.On("alpha", fmt.Sprintf("kill %d", n))
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("events exit %d (live seen: %v, last lock %s %q): %s", code, sawLive, last.Verdict, last.Reasons, errOut.String())
	}
	want := fmt.Sprintf("judged on alpha: pid %d is not running", n)
	if !sawLive || last.Verdict != model.VerdictStale || len(last.Reasons) == 0 || last.Reasons[0] != want {
		t.Fatalf("live seen: %v; last lock %s %q, want stale %q", sawLive, last.Verdict, last.Reasons, want)
	}
}

// The dashboard, in tmux: a local run whose lock names alpha's host name is judged on alpha, and says so in
// its reason and Detail; its unlock is a plain y/N while the pid is dead there, refused while it lives
// there, and the verdict falls back to unknown, with why, when alpha goes down.
func TestDashboardJudgesALockOnTheMachineThatHoldsIt(t *testing.T) {
	name := "alpha" // the machine calls itself by the name it is reached as
	fleet, _ := sshFleetNamed(t, map[string]string{"alpha": name}, "alpha")
	local := t.TempDir()
	dir := resumabletest.MinimalRun(t, local, "irm-held-20261201T080000Z")
	lock := filepath.Join(dir, "run.lock")
	dead := resumabletest.DeadPID(t)
	resumabletest.WriteEnvLock(t, lock, dead, name, time.Now())
	remoteRoot := t.TempDir()
	resumabletest.MinimalRun(t, remoteRoot, "irm-far-20261201T080000Z")

	d := newTmuxDemo(t)
	d.env = append(d.env, "RUNWATCH_SSH_COMMAND="+strings.Join(fleet.SSHCommand(), " "),
		"XDG_RUNTIME_DIR="+filepath.Join(fleet.Dir, "rt"))
	exitFile := d.start(t, fmt.Sprintf("%s %s ssh://alpha%s", filepath.Join(fleet.BinDir, "runwatch"), local, remoteRoot))
	d.waitText("● alpha")
	d.selectRun("irm-held")
	d.waitText(fmt.Sprintf("judged on alpha: pid %d is not running", dead))
	d.waitText(fmt.Sprintf("lock held by dead pid %d on alpha", dead))

	d.press(keys.ActUnlock)
	d.confirm("unlock", func() bool { _, err := os.Stat(lock); return os.IsNotExist(err) })

	live := fleet.PID("alpha")
	resumabletest.WriteEnvLock(t, lock, live, name, time.Now())
	d.waitText(fmt.Sprintf("judged on alpha: pid %d is running", live))
	d.press(keys.ActUnlock)
	// Refused at the key, by the one not-here rule: the run's only lock is live there.
	d.waitText("has no stale lock")
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the lock live on alpha was removed: %v", err)
	}

	fleet.Kill("alpha")
	d.waitText("(alpha), which can") // "which cannot be asked now", wrapped
	d.press(keys.ActQuit)
	if code := d.waitExit(exitFile); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// A run on alpha whose lock names beta (a disk they share): alpha's runwatch cannot reach beta and calls it
// unknown, runwatch here reaches both and judges it on beta, and the run's status follows.
func TestARemoteRunsLockNamingAThirdMachineIsJudgedThere(t *testing.T) {
	alphaName, betaName := "alpha", "beta"
	fleet, e := sshFleetNamed(t, map[string]string{"alpha": alphaName, "beta": betaName}, "alpha", "beta")
	rootA, rootB := t.TempDir(), t.TempDir()
	dir := resumabletest.MinimalRun(t, rootA, "irm-shared-20261201T080000Z")
	lock := filepath.Join(dir, "run.lock")
	status := func() model.Run {
		t.Helper()
		code, out, errOut := runCmd(e, "status", "--json", "ssh://alpha"+rootA, "beta:"+rootB)
		if code != 0 && code != 1 {
			t.Fatalf("status: exit %d\n%s", code, errOut)
		}
		var snap model.Snapshot
		if err := json.Unmarshal([]byte(out), &snap); err != nil || len(snap.Runs) != 1 || len(snap.Runs[0].Locks) != 1 {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		return snap.Runs[0]
	}

	dead := resumabletest.DeadPID(t)
	resumabletest.WriteEnvLock(t, lock, dead, betaName, time.Now())
	r := status()
	want := fmt.Sprintf("judged on beta: pid %d is not running", dead)
	if l := r.Locks[0]; l.Verdict != model.VerdictStale || l.JudgedOn != "beta" || l.Reasons[0] != want || r.Status != model.StatusStalled {
		t.Fatalf("dead on beta: %s judged on %q %q, run %s; want stale %q, stalled", l.Verdict, l.JudgedOn, l.Reasons, r.Status, want)
	}
	for _, p := range r.Problems {
		if p.Code == model.CodeLockUnknown {
			t.Errorf("alpha's unknown verdict is still among the problems: %+v", r.Problems)
		}
	}

	resumabletest.WriteEnvLock(t, lock, fleet.PID("beta"), betaName, time.Now())
	if r := status(); r.Locks[0].Verdict != model.VerdictLive || r.Locks[0].JudgedOn != "beta" || r.Status != model.StatusRunning {
		t.Fatalf("alive on beta: %s judged on %q %q, run %s", r.Locks[0].Verdict, r.Locks[0].JudgedOn, r.Locks[0].Reasons, r.Status)
	}

	// Without beta among the roots (given or in the config), nothing here reaches it: alpha's verdict stands.
	code, out, _ := runCmd(e.with("XDG_CONFIG_HOME", t.TempDir()), "status", "--json", "ssh://alpha"+rootA)
	if code > 1 || !strings.Contains(out, "liveness cannot be checked here") {
		t.Fatalf("beta not reached: exit %d\n%s", code, out)
	}
}

// Issue 22.5 and 37.12: a host's name is only its word. A destination that calls itself the machine a lock
// names, but is reached by another name, may not judge it: the lock stays unknown, "cannot check gpu9 from
// here" (an impostor answering "not running" made it stale and clearable with a y), and unlock still needs
// --force. One that calls itself a reached machine's name is not heard either: that machine judges.
func TestAHostsWordAloneJudgesNoLock(t *testing.T) {
	fleet, e := sshFleetNamed(t, map[string]string{"alpha": "alpha", "evil": "gpu9"}, "alpha", "evil")
	dir := resumabletest.MinimalRun(t, t.TempDir(), "irm-claim-20261201T080000Z")
	lock := filepath.Join(dir, "run.lock")
	resumabletest.WriteEnvLock(t, lock, resumabletest.DeadPID(t), "gpu9", time.Now())

	l := statusLock(t, e, dir)
	why := strings.Join(l.Reasons, "; ")
	if l.Verdict != model.VerdictUnknown || l.JudgedOn != "" || !strings.Contains(why, "evil calls itself gpu9") ||
		!strings.Contains(why, "cannot check gpu9 from here") {
		t.Fatalf("a lock of gpu9, which only evil claims to be: %s judged on %q %q", l.Verdict, l.JudgedOn, l.Reasons)
	}
	if code, _, errOut := runCmd(e, "unlock", dir, "--yes"); code == exitOK {
		t.Fatalf("unlock --yes cleared a lock nobody could judge: %s", errOut)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the lock is gone: %v", err)
	}

	// evil restarted calling itself alpha: alpha, reached by that name, is the one that judges.
	fleet.Servers["evil"].Hostname = "alpha"
	fleet.Kill("evil")
	fleet.Start("evil")
	resumabletest.WriteEnvLock(t, lock, fleet.PID("alpha"), "alpha", time.Now())
	if l := statusLock(t, e, dir); l.Verdict != model.VerdictLive || l.JudgedOn != "alpha" {
		t.Fatalf("a lock of alpha, which evil claims too: %s judged on %q %q", l.Verdict, l.JudgedOn, l.Reasons)
	}
}
