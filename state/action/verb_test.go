package action

import (
	"reflect"
	"strings"
	"testing"

	"runwatch/model"
)

// The words of a remote call: the verb, its flags, then `--` before every word that names the run or a part
// of it, so none can be read as an option by the host's runwatch.
func TestRemoteArgvPutsEveryWordAfterTheEndOfOptions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		req   Request
		flags []string
		want  []string
	}{
		{Request{Verb: ActStep}, nil, []string{"step", "--", "-r"}},
		{Request{Verb: ActStep, To: "-S3"}, []string{"--dry-run"}, []string{"step", "--to=-S3", "--dry-run", "--", "-r"}},
		{Request{Verb: ActUncheck, Word: "--yes"}, []string{"--json"}, []string{"uncheck", "--json", "--", "-r", "--yes"}},
		{Request{Verb: ActRetry, Word: "-h"}, nil, []string{"retry", "--", "-r", "-h"}},
		{Request{Verb: ActUnlock}, nil, []string{"unlock", "--", "-r"}},
	} {
		if got := c.req.RemoteArgv("-r", c.flags...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.req, got, c.want)
		}
	}
}

// Every verb says what it does and what it takes; a verb outside the list is planned by nothing.
func TestEveryVerbIsDescribedAndPlanned(t *testing.T) {
	t.Parallel()
	run := model.Run{Kind: model.KindResumable, ID: "r", Dir: t.TempDir()}
	for _, v := range Verbs() {
		if !v.Known() || v.Summary() == "" {
			t.Errorf("%s: known %v, summary %q", v, v.Known(), v.Summary())
		}
		if _, err := (Request{Verb: v, Run: run}).Plan(Options{ReadOnly: true}); err != nil && strings.Contains(err.Error(), "unknown action") {
			t.Errorf("%s is not planned: %v", v, err)
		}
	}
	if _, err := (Request{Verb: "tick", Run: run}).Plan(Options{}); err == nil || !strings.Contains(err.Error(), "unknown action") {
		t.Errorf("tick, a key and no verb, was planned: %v", err)
	}
	if _, err := (Request{Verb: ActCheck, To: "S2", Run: run}).Plan(Options{}); err == nil {
		t.Error("--to was taken by check")
	}
}
