package app

import "testing"

// An error's reason leads and the path it names follows, so a cut footer keeps the reason.
func TestReasonFirst(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"pause: /a/b/MANIFEST.yaml: yaml: bad":         "pause: yaml: bad (/a/b/MANIFEST.yaml)",
		"step: open /r/state.env: permission denied":   "step: open: permission denied (/r/state.env)",
		"step refused: gate not met: M2 open: CB_M2_X": "step refused: gate not met: M2 open: CB_M2_X",
		"copied /a/b": "copied /a/b",
	} {
		if got := ReasonFirst(in); got != want {
			t.Errorf("reasonFirst(%q) = %q, want %q", in, got, want)
		}
	}
}
