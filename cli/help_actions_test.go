package cli

import (
	"testing"

	"runwatch/state/action"
)

// The action subcommands are the verbs of state/action, each with its summary there and its help here.
func TestEveryVerbIsASubcommandWithHelp(t *testing.T) {
	for _, v := range action.Verbs() {
		c, ok := commands[string(v)]
		if !ok || c.summary != v.Summary() || c.group != groupChange {
			t.Errorf("%s: command %v, summary %q, group %v", v, ok, c.summary, c.group)
		}
		if h := actionHelp[v]; h.about == "" || len(h.examples) == 0 {
			t.Errorf("%s has no help beyond its flags", v)
		}
	}
	if len(actionHelp) != len(action.Verbs()) {
		t.Errorf("help for %d actions, %d verbs", len(actionHelp), len(action.Verbs()))
	}
}
