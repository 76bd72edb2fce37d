package ui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/agentpane"
	"runwatch/state/agentpane/agentpanetest"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/app"
)

// heldRun is a resumable run whose lock pid holds, taken now, as the dashboard reads it.
func heldRun(t *testing.T, pid int) model.Run {
	t.Helper()
	env := state.NewEnv(0)
	dir := resumabletest.MinimalRun(t, t.TempDir(), "irm-held-20261201T080000Z")
	resumabletest.WriteJSONLock(t, filepath.Join(dir, "run.lock"), pid, env.Host, time.Now())
	locs, err := state.Discover([]string{dir}, 1)
	if err != nil || len(locs) != 1 {
		t.Fatalf("discover %s: %v %v", dir, locs, err)
	}
	return state.Load(locs[0], env)
}

// findHere is the dashboard's FindAgent for runs of this machine, as cli gives it, with tmux reached
// through getenv's environment.
func findHere(getenv func(string) string) app.FindAgentFunc {
	return func(ctx context.Context, run model.Run) (agentpane.Pane, []string, error) {
		p, err := agentpane.NewFinder(state.NewEnv(0), agentpane.TmuxOf(getenv), "").Find(&run)
		return p, p.AttachArgv(), err
	}
}

// envMap is an environment of the variables given, for app.Options.Getenv.
func envMap(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// Detail says where the agent of a run with a live holder runs; a switches this tmux client there, and
// outside tmux says the command that attaches; with no agent, it says why.
func TestAgentKeyGoesToThePane(t *testing.T) {
	t.Parallel()
	tmpdir, _ := agentpanetest.Private(t)
	s := agentpanetest.New(t, tmpdir, "default", "home")
	home := s.Run("display-message", "-p", "-t", "home:", "#{pane_id}")
	s.Run("new-session", "-d", "-s", "agents")
	paneID, pid := s.Nested("agents")
	s.Attach("home")

	outside := envMap(map[string]string{"TMUX_TMPDIR": tmpdir})
	m := newTestModel(t, 140, 40, []model.Run{heldRun(t, pid)}, app.Options{FindAgent: findHere(outside), Now: time.Now, Getenv: outside})
	where := "agent: pane " + paneID + " (" + s.Target(paneID) + ")"
	if frame := render(t, m, colorprofile.NoTTY); !strings.Contains(frame, where) {
		t.Fatalf("Detail does not say %q:\n%s", where, frame)
	}

	m.app.Opts.Getenv = envMap(map[string]string{"TMUX_TMPDIR": tmpdir, "TMUX": s.Sock + ",1,0", "TMUX_PANE": home})
	m = send(t, m, press("a"))
	s.ClientOn(paneID, "after a")
	if frame := render(t, m, colorprofile.NoTTY); !strings.Contains(frame, "switched to pane "+paneID) {
		t.Errorf("the footer does not say where it went:\n%s", frame)
	}

	m.app.Opts.Getenv = outside
	m = send(t, m, press("a"))
	attach := "attach with tmux -S " + s.Sock + " attach -t " + paneID
	if got := m.app.Msgs.Last.Text; !strings.Contains(got, attach) {
		t.Errorf("outside tmux: %q, want it to say %q", got, attach)
	}

	dead := newTestModel(t, 140, 40, []model.Run{heldRun(t, resumabletest.DeadPID(t))}, app.Options{FindAgent: findHere(outside), Now: time.Now, Getenv: outside})
	dead = send(t, dead, press("a"))
	if got := dead.app.Msgs.Last.Text; !strings.Contains(got, "has no live process of its own") {
		t.Errorf("dead holder: %q", got)
	}
	if frame := render(t, dead, colorprofile.NoTTY); strings.Contains(frame, "agent: pane") {
		t.Errorf("Detail shows a pane for a dead holder:\n%s", frame)
	}
}
