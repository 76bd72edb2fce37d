package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"runwatch/config"
	"runwatch/model"
	"runwatch/remote/sshtest"
	"runwatch/state/action"
	"runwatch/ui/app"
	"runwatch/ui/keys"
)

// Issue 33.2: an action on a remote run is one request whatever asks for it, and one command line on the
// host (action.Request.RemoteArgv). On a real sshd whose sessions start in their home, two copies of a run
// live in roots beginning with '-' (-cli/-x, -dash/-x), with a checklist item CB_S1_-h: the runwatch binary
// run here (check alpha:-cli/-x -h, then step, every word a host's runwatch gets beginning with '-') and the
// dashboard's actor (the run as the host's status reports it, tick then step) must change both copies alike.
func TestCommandLineAndDashboardActOnADashNamedRunAlike(t *testing.T) {
	sh, err := exec.LookPath("dash")
	if err != nil {
		t.Skip("dash is not installed (.ci/run installs it)")
	}
	bin := buildRunwatch(t)
	fleet, e := useFleet(t, sshtest.NewWith(t, filepath.Dir(bin), sshtest.Options{Shells: map[string]string{"alpha": sh}}, "alpha"))
	home := fleet.Home("alpha")
	for _, root := range []string{"-cli", "-dash"} {
		dir := filepath.Join(home, root, "-x")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for file, body := range map[string]string{
			"state.env":           "CURRENT_STAGE=\"S1\"\nS1_DONE=\"0\"\nS2_DONE=\"0\"\nTASK_NAME=\"t\"\n",
			"checklist.state.env": "CB_S1_-h=\"0\"\nCB_S2_B=\"0\"\nCHECKLIST_SCHEMA_VERSION=\"1\"\n",
			"run.log":             "[2026-12-01T08:00:00Z] run_bootstrap mode=kickoff-new\n",
		} {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The dashboard's run is the one the host reports for the root alpha:-dash.
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"status", "--json", "--", "alpha:-dash"}, &out, &errOut, e); code != exitOK {
		t.Fatalf("status: exit %d\n%s", code, errOut.String())
	}
	var snap model.Snapshot
	if err := json.Unmarshal(out.Bytes(), &snap); err != nil || len(snap.Runs) != 1 {
		t.Fatalf("status --json: %v, %d runs\n%s%s", err, len(snap.Runs), out.String(), errOut.String())
	}
	run := snap.Runs[0]
	f := fleetActor{ssh: sshFor(e.getenv, config.Config{})}

	for _, step := range []struct {
		cli  []string
		dash app.ActionRequest
	}{
		{[]string{"check", "--yes", "--", "alpha:-cli/-x", "-h"},
			app.ActionRequest{Act: keys.ActTick, Request: action.Request{Verb: action.ActCheck, Word: "CB_S1_-h", Run: run}}},
		{[]string{"step", "--yes", "--", "alpha:-cli/-x"},
			app.ActionRequest{Act: keys.ActStep, Request: action.Request{Verb: action.ActStep, Run: run}}},
	} {
		c := exec.Command(bin, step.cli...)
		c.Env = e.environ()
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("runwatch %q: %v\n%s", step.cli, err, out)
		}
		p, err := f.Plan(step.dash)
		if err != nil {
			t.Fatalf("dashboard %s: %v", step.dash.Verb, err)
		}
		if msg, err := p.Apply(""); err != nil {
			t.Fatalf("dashboard %s: %v", step.dash.Verb, err)
		} else if !strings.HasPrefix(msg, "done on alpha") {
			t.Fatalf("dashboard %s: %q", step.dash.Verb, msg)
		}
		for _, file := range []string{"state.env", "checklist.state.env"} {
			cli, dash := mustReadFile(t, filepath.Join(home, "-cli/-x", file)), mustReadFile(t, filepath.Join(home, "-dash/-x", file))
			if !bytes.Equal(cli, dash) {
				t.Errorf("after %s, %s differs:\ncommand line:\n%s\ndashboard:\n%s", step.dash.Verb, file, cli, dash)
			}
		}
	}
	if got := string(mustReadFile(t, filepath.Join(home, "-dash/-x", "checklist.state.env"))); !strings.Contains(got, `CB_S1_-h="1"`) {
		t.Errorf("the item was not ticked:\n%s", got)
	}
	if got := string(mustReadFile(t, filepath.Join(home, "-dash/-x", "state.env"))); !strings.Contains(got, `CURRENT_STAGE="S2"`) {
		t.Errorf("the run did not step:\n%s", got)
	}
	// The audit lines say the same, less when, who and the action's id.
	audit := func(root string) string {
		log := string(mustReadFile(t, filepath.Join(home, root, "-x", "run.log")))
		return regexp.MustCompile(`(?m)^\[[^]]*\] |action_id=\S+|user=\S+|reason=.*$`).ReplaceAllString(log, "")
	}
	if cli, dash := audit("-cli"), audit("-dash"); cli != dash || !strings.Contains(cli, "key=CB_S1_-h") {
		t.Errorf("the audit lines differ:\ncommand line:\n%s\ndashboard:\n%s", cli, dash)
	}
}
