package notify

import (
	"context"
	"testing"

	"runwatch/tmuxsafe/tmuxsafetest"
)

// TestDisplayShowsRunTextLiterallyInRealTmux: a notification whose run text holds tmux formats, strftime
// specifiers and a final ';' shows in a real client's status line as the text it is, and runs nothing.
func TestDisplayShowsRunTextLiterallyInRealTmux(t *testing.T) {
	s := tmuxsafetest.New(t)
	tm := Tmux{Pane: "t", Run: func(_ context.Context, args ...string) (string, error) { return s.Run(args...) }}
	for _, text := range []string{"r1-#(touch PWN) needs you: 100% at %H:%M", "x #{session_name} ##[fg=red] %%;"} {
		if err := tm.Display(context.Background(), text); err != nil {
			t.Fatal(err)
		}
		if got := s.WaitStatus(Plain(text)); got != Plain(text) {
			t.Errorf("Display(%q) showed %q", text, got)
		}
	}
	if ran := s.Ran(); len(ran) > 0 {
		t.Errorf("tmux ran a command from the notification: PWN in %q", ran)
	}
}
