package cli

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui"
	"runwatch/ui/app"
	"runwatch/ui/keys"
)

// Every dashboard action on a remote run becomes the action subcommand that does it there, with the same
// arguments a person would type; launching is not an action on an existing run.
func TestDashboardActionsMapOntoTheSubcommands(t *testing.T) {
	run := model.Run{Kind: model.KindResumable, Dir: "/r/irm-x", StatePath: "/r/irm-x/state.env"}
	cases := []struct {
		req  action.Request
		want []string
	}{
		{action.Request{Verb: action.ActUnlock}, []string{"unlock", "--dry-run", "--", "/r/irm-x"}},
		{action.Request{Verb: action.ActUnlock, Word: "/r/irm-x/run.lock"}, []string{"unlock", "--dry-run", "--", "/r/irm-x", "/r/irm-x/run.lock"}},
		{action.Request{Verb: action.ActStep}, []string{"step", "--dry-run", "--", "/r/irm-x"}},
		{action.Request{Verb: action.ActStep, To: "S3"}, []string{"step", "--to=S3", "--dry-run", "--", "/r/irm-x"}},
		{action.Request{Verb: action.ActCheck, Word: "CB_S1_A"}, []string{"check", "--dry-run", "--", "/r/irm-x", "CB_S1_A"}},
		{action.Request{Verb: action.ActUncheck, Word: "CB_S1_A"}, []string{"uncheck", "--dry-run", "--", "/r/irm-x", "CB_S1_A"}},
		{action.Request{Verb: action.ActRetry}, []string{"retry", "--dry-run", "--", "/r/irm-x"}},
		{action.Request{Verb: action.ActRetry, Word: "P2"}, []string{"retry", "--dry-run", "--", "/r/irm-x", "P2"}},
		// Words from the host's files come after --: a phase or item named like a flag stays a word.
		{action.Request{Verb: action.ActRetry, Word: "-h"}, []string{"retry", "--dry-run", "--", "/r/irm-x", "-h"}},
		{action.Request{Verb: action.ActCheck, Word: "--yes"}, []string{"check", "--dry-run", "--", "/r/irm-x", "--yes"}},
		{action.Request{Verb: action.ActPause}, []string{"pause", "--dry-run", "--", "/r/irm-x"}},
		{action.Request{Verb: action.ActResume}, []string{"resume", "--dry-run", "--", "/r/irm-x"}},
		{action.Request{Verb: action.ActUndo}, []string{"undo", "--dry-run", "--", "/r/irm-x"}},
	}
	for _, c := range cases {
		c.req.Run = run
		call, err := remoteActionArgs(app.ActionRequest{Request: c.req})
		if got := call.argv("--dry-run"); err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: got %q, %v; want %q", c.req, call.argv("--dry-run"), err, c.want)
		}
	}
	if _, err := remoteActionArgs(app.ActionRequest{Act: keys.ActLaunch, Request: action.Request{Run: run}}); err == nil {
		t.Error("launch mapped onto a subcommand")
	}
	// A <name>.state.env run is named by its state file: several can share one folder.
	named := run
	named.StatePath = "/r/irm-x/b.state.env"
	if call, _ := remoteActionArgs(app.ActionRequest{Request: action.Request{Verb: action.ActStep, Run: named}}); !reflect.DeepEqual(call.argv(), []string{"step", "--", "/r/irm-x/b.state.env"}) {
		got := call.argv()
		t.Errorf("named state file: %q", got)
	}
}

// stubElsewhere reaches one machine, box-b, whose pid 4242 is alive or not.
type stubElsewhere struct{ alive bool }

func (s stubElsewhere) On(host string, pid int) (model.ProcInspector, string, bool, string, error) {
	if !model.SameHost(host, "box-b") {
		return nil, "", false, "", nil
	}
	return stubProc{pid: 4242, alive: s.alive}, "b", true, "", nil
}

type stubProc struct {
	pid   int
	alive bool
}

func (p stubProc) Alive(pid int) bool              { return pid == p.pid && p.alive }
func (p stubProc) StartTime(int) (time.Time, bool) { return time.Time{}, false }

// The dashboard's unlock judges a lock held on another machine again when it is planned: a verdict shown
// stale a moment ago does not clear a lock whose holder lives there now.
func TestUnlockPlanJudgesTheLockElsewhereAgain(t *testing.T) {
	dir := resumabletest.MinimalRun(t, t.TempDir(), "irm-b-20261201T080000Z")
	resumabletest.WriteEnvLock(t, filepath.Join(dir, "run.lock"), 4242, "box-b", time.Now())
	envWith := func(alive bool) model.Env {
		env := model.Env{Now: time.Now(), Host: "box-a", StaleAfter: model.DefaultStaleAfter, Elsewhere: stubElsewhere{alive: alive}}
		return env
	}
	shown := state.Load(state.Location{Kind: model.KindResumable, Dir: dir, StatePath: filepath.Join(dir, "state.env")}, envWith(false))
	if len(shown.Locks) != 1 || shown.Locks[0].Verdict != model.VerdictStale || shown.Locks[0].JudgedOn != "b" {
		t.Fatalf("as shown: %+v", shown.Locks)
	}
	now := func() model.Env { return envWith(true) }
	f := fleetActor{local: ui.NewActor(action.Options{Env: now()}, now), env: now}
	if _, err := f.Plan(app.ActionRequest{Act: keys.ActUnlock, Request: action.Request{Verb: action.ActUnlock, Run: shown}}); err == nil || !strings.Contains(err.Error(), "no stale lock") {
		t.Fatalf("planned on the verdict shown, not the one of the plan's time: %v", err)
	}
	stale := func() model.Env { return envWith(false) }
	f = fleetActor{local: ui.NewActor(action.Options{Env: stale()}, stale), env: stale}
	if p, err := f.Plan(app.ActionRequest{Act: keys.ActUnlock, Request: action.Request{Verb: action.ActUnlock, Run: shown}}); err != nil || p.TypedConfirmation() != "" {
		t.Fatalf("a lock stale on b: %v", err)
	}
}

// A remote run's lock that runwatch here judged live on a third machine is not cleared through the run's
// host, which can only call it unknown and would take --force for an answer.
func TestRemoteUnlockRefusedForALockJudgedLiveElsewhere(t *testing.T) {
	run := model.Run{Kind: model.KindResumable, ID: "irm-x", Dir: "/r/irm-x", StatePath: "/r/irm-x/state.env",
		Remote: &model.RemoteRef{Host: "alpha", Root: "ssh://alpha/r"},
		Locks: []model.Lock{{Path: "/r/irm-x/run.lock", Host: "box-b", PID: 4242, Verdict: model.VerdictLive,
			JudgedOn: "beta", Reasons: []string{"judged on beta: pid 4242 is running"}}}}
	f := fleetActor{}
	_, err := f.Plan(app.ActionRequest{Act: keys.ActUnlock, Request: action.Request{Verb: action.ActUnlock, Run: run}})
	if err == nil || !strings.Contains(err.Error(), "live") || !strings.Contains(err.Error(), "judged on beta") {
		t.Fatalf("unlock of a lock judged live on beta: %v, want a refusal naming it", err)
	}
}
