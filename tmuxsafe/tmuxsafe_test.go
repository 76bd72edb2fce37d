package tmuxsafe_test

import (
	"strings"
	"testing"

	"runwatch/tmuxsafe"
	"runwatch/tmuxsafe/tmuxsafetest"
)

// hostile is text that tmux would run, substitute, style or split if it reached it unquoted.
var hostile = []string{
	"#(touch PWN)", "run #{session_name} #{pane_current_path}", "%H:%M %% %", "100% done#", "##(touch PWN)",
	"end;", `esc\;`, "both #(touch PWN) %Y;", "#[fg=red]styled", "##[x", "a #### b ###[y #", "plain",
}

// TestMessageShowsLiterallyInRealTmux shows each text with display-message in the status line of a real
// client: every text shows as it is, and nothing in it runs.
func TestMessageShowsLiterallyInRealTmux(t *testing.T) {
	s := tmuxsafetest.New(t)
	for _, text := range hostile {
		if out, err := s.Run("display-message", "-d", "0", "-t", "t", tmuxsafe.Message(text)); err != nil {
			t.Fatalf("display-message of Message(%q): %v\n%s", text, err, out)
		}
		if got := s.WaitStatus(text); got != text {
			t.Errorf("display-message of Message(%q) showed %q", text, got)
		}
	}
	// Arg keeps each one literal word where tmux expands nothing: set a user option and read it back
	for _, text := range hostile {
		if out, err := s.Run("set-option", "-t", "t", "@v", tmuxsafe.Arg(text)); err != nil {
			t.Errorf("set-option of Arg(%q): %v\n%s", text, err, out)
			continue
		}
		if out, _ := s.Run("show-options", "-v", "-t", "t", "@v"); strings.TrimSuffix(out, "\n") != text {
			t.Errorf("Arg(%q) came back as %q", text, out)
		}
	}
	if ran := s.Ran(); len(ran) > 0 {
		t.Errorf("tmux ran a command from the text: PWN in %q", ran)
	}
}
