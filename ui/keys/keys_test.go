// Tests of the keymap: no conflicts, overrides, read-only, help generated from the bindings.

package keys_test

import (
	"runwatch/ui/keys"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestDefaultKeyMapHasNoConflicts(t *testing.T) {
	for _, ro := range []bool{false, true} {
		if _, err := keys.NewKeyMap(nil, ro); err != nil {
			t.Fatalf("readOnly=%v: %v", ro, err)
		}
	}
}

func TestKeyMapOverride(t *testing.T) {
	km, err := keys.NewKeyMap(map[string][]string{"step": {"W"}, "quit": {"Q", "ctrl+c"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := km.Action("W"); got != keys.ActStep {
		t.Errorf("W → %q, want step", got)
	}
	if got := km.Action("S"); got != "" {
		t.Errorf("S still bound to %q after remapping step", got)
	}
	if got := km.Action("q"); got != "" {
		t.Errorf("q still bound to %q after remapping quit", got)
	}
}

func TestKeyMapConflictsAreErrors(t *testing.T) {
	cases := []struct {
		name string
		over map[string][]string
		want string
	}{
		{"two actions one key", map[string][]string{"step": {"j"}}, `key "j" is bound to both`},
		{"unknown action", map[string][]string{"explode": {"x"}}, `unknown action "explode"`},
		{"ctrl chord on mutating", map[string][]string{"unlock": {"ctrl+x"}}, "may not use a ctrl chord"},
		{"empty key list", map[string][]string{"help": {}}, "no keys given"},
		{"confirm key on mutating", map[string][]string{"copy": {"c"}, "unlock": {"y"}}, "a key the confirmation dialog answers"},
		{"enter on mutating", map[string][]string{"open": {"o"}, "step": {"enter"}}, `may not use "enter"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := keys.NewKeyMap(c.over, false)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestReadOnlyKeyMapDropsMutatingKeys(t *testing.T) {
	km := keys.DefaultKeyMap(true)
	for _, k := range []string{"U", "S", "space", "R", "P", "Z"} {
		if a := km.Action(k); a != "" {
			t.Errorf("read-only keymap binds %s to %s", k, a)
		}
	}
	help := strings.Join(km.HelpLines(nil), "\n")
	if strings.Contains(help, "step run forward") || !strings.Contains(help, "Read-only") {
		t.Errorf("help does not reflect read-only:\n%s", help)
	}
}

func TestHelpIsGeneratedFromBindings(t *testing.T) {
	km, err := keys.NewKeyMap(map[string][]string{"copy": {"c"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	help := strings.Join(km.HelpLines(nil), "\n")
	for _, b := range km.Bindings {
		if !strings.Contains(help, b.Help) {
			t.Errorf("help lacks %q", b.Help)
		}
	}
	if !strings.Contains(help, "c  ") || strings.Contains(help, "  y  ") {
		t.Errorf("help does not show the remapped copy key:\n%s", help)
	}
	table := km.MarkdownTable()
	if !strings.Contains(table, "| `c` | copy focused item (OSC 52) | `copy` |") {
		t.Errorf("markdown table:\n%s", table)
	}
}

// TestEveryBoundKeyIsWhatBubbleTeaReports builds the key press a terminal would produce for every default
// key and checks that its String() is the name the keymap uses, so no binding is dead.
func TestEveryBoundKeyIsWhatBubbleTeaReports(t *testing.T) {
	special := map[string]tea.KeyPressMsg{
		"up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown}, "home": {Code: tea.KeyHome}, "end": {Code: tea.KeyEnd},
		"pgup": {Code: tea.KeyPgUp}, "pgdown": {Code: tea.KeyPgDown}, "tab": {Code: tea.KeyTab},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift}, "enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape},
		"space": {Code: tea.KeySpace, Text: " "}, "ctrl+u": {Code: 'u', Mod: tea.ModCtrl},
		"ctrl+d": {Code: 'd', Mod: tea.ModCtrl}, "ctrl+c": {Code: 'c', Mod: tea.ModCtrl},
	}
	km := keys.DefaultKeyMap(false)
	for _, b := range km.Bindings {
		for _, k := range b.Keys {
			msg, ok := special[k]
			if !ok {
				msg = runeKey(k)
			}
			if got := msg.String(); got != k {
				t.Errorf("%s: key %q arrives as %q", b.Action, k, got)
			}
			if got := km.Action(msg.String()); got != b.Action {
				t.Errorf("key %q resolves to %q, want %q", k, got, b.Action)
			}
		}
	}
}

func TestKeyMapConflictReportedInReadOnlyToo(t *testing.T) {
	if _, err := keys.NewKeyMap(map[string][]string{"unlock": {"j"}}, true); err == nil {
		t.Fatal("a conflict with a mutating key passed because read-only hides that key")
	}
}

// runeKey is the press of a one-character key as a terminal reports it: a capital arrives as its letter with
// shift.
func runeKey(s string) tea.KeyPressMsg {
	r := []rune(s)[0]
	if r >= 'A' && r <= 'Z' {
		return tea.KeyPressMsg{Code: r + ('a' - 'A'), ShiftedCode: r, Mod: tea.ModShift, Text: s}
	}
	return tea.KeyPressMsg{Code: r, Text: s}
}
