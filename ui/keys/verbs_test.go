package keys

import (
	"slices"
	"testing"

	"runwatch/state/action"
)

// Every verb of state/action has a key, through exactly one binding; every binding that names verbs is
// mutating, so read-only mode and the confirmation rules cover it.
func TestEveryVerbHasOneKey(t *testing.T) {
	for _, v := range action.Verbs() {
		var acts []string
		for _, b := range defaultBindings() {
			if slices.Contains(b.Verbs, v) {
				acts = append(acts, b.Action)
			}
		}
		if len(acts) != 1 || ActOf(v) != acts[0] {
			t.Errorf("%s: bound by %v, ActOf %q", v, acts, ActOf(v))
		}
	}
	for _, b := range defaultBindings() {
		for _, v := range b.Verbs {
			if !v.Known() || !b.Mutating {
				t.Errorf("%s names %q (known %v), mutating %v", b.Action, v, v.Known(), b.Mutating)
			}
		}
	}
	if got := VerbActs(); !slices.Equal(got, []string{ActUnlock, ActStep, ActTick, ActRetry, ActPause, ActUndo}) {
		t.Errorf("the keys that change a run: %q", got)
	}
}
