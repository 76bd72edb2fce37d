package cli

import (
	"reflect"
	"testing"

	"runwatch/model"
	"runwatch/ui"
)

// Every dashboard action on a remote run becomes the action subcommand that does it there, with the same
// arguments a person would type; launching is not an action on an existing run.
func TestDashboardActionsMapOntoTheSubcommands(t *testing.T) {
	run := model.Run{Kind: model.KindResumable, Dir: "/r/irm-x", StatePath: "/r/irm-x/state.env"}
	cases := []struct {
		req  ui.ActionRequest
		want []string
	}{
		{ui.ActionRequest{Action: ui.ActUnlock}, []string{"unlock", "/r/irm-x"}},
		{ui.ActionRequest{Action: ui.ActUnlock, LockPath: "/r/irm-x/run.lock"}, []string{"unlock", "/r/irm-x", "/r/irm-x/run.lock"}},
		{ui.ActionRequest{Action: ui.ActStep}, []string{"step", "/r/irm-x"}},
		{ui.ActionRequest{Action: ui.ActStep, To: "S3"}, []string{"step", "/r/irm-x", "--to", "S3"}},
		{ui.ActionRequest{Action: ui.ActTick, Item: "CB_S1_A", Check: true}, []string{"check", "/r/irm-x", "CB_S1_A"}},
		{ui.ActionRequest{Action: ui.ActTick, Item: "CB_S1_A"}, []string{"uncheck", "/r/irm-x", "CB_S1_A"}},
		{ui.ActionRequest{Action: ui.ActRetry}, []string{"retry", "/r/irm-x"}},
		{ui.ActionRequest{Action: ui.ActRetry, Stage: "P2"}, []string{"retry", "/r/irm-x", "P2"}},
		{ui.ActionRequest{Action: ui.ActPause}, []string{"pause", "/r/irm-x"}},
		{ui.ActionRequest{Action: ui.ActPause, Resume: true}, []string{"resume", "/r/irm-x"}},
		{ui.ActionRequest{Action: ui.ActUndo}, []string{"undo", "/r/irm-x"}},
	}
	for _, c := range cases {
		c.req.Run = run
		got, err := remoteActionArgs(c.req)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: got %q, %v; want %q", c.req, got, err, c.want)
		}
	}
	if _, err := remoteActionArgs(ui.ActionRequest{Action: ui.ActLaunch, Run: run}); err == nil {
		t.Error("launch mapped onto a subcommand")
	}
	// A <name>.state.env run is named by its state file: several can share one folder.
	named := run
	named.StatePath = "/r/irm-x/b.state.env"
	if got, _ := remoteActionArgs(ui.ActionRequest{Action: ui.ActStep, Run: named}); !reflect.DeepEqual(got, []string{"step", "/r/irm-x/b.state.env"}) {
		t.Errorf("named state file: %q", got)
	}
}
