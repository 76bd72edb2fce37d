package tmuxsafe_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/tmuxsafe"
)

// TestRunSaysTmuxsOwnWords: a tmux command that fails is reported by name with what the real tmux said, not
// as "exit status 1".
func TestRunSaysTmuxsOwnWords(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	sock := filepath.Join(t.TempDir(), "none.sock")
	_, err := tmuxsafe.Run(context.Background(), nil, "-u", "-S", sock, "list-panes", "-a")
	if err == nil || !strings.HasPrefix(err.Error(), "tmux list-panes: ") || strings.Contains(err.Error(), "exit status") {
		t.Fatalf("a tmux with no server: %v, want tmux list-panes: and tmux's words", err)
	}
	if !strings.Contains(err.Error(), sock) && !strings.Contains(err.Error(), "no server") {
		t.Errorf("the error does not carry what tmux said: %v", err)
	}
	out, err := tmuxsafe.Run(context.Background(), strings.NewReader(""), "-V")
	if err != nil || !strings.HasPrefix(string(out), "tmux ") {
		t.Errorf("tmux -V: %q, %v", out, err)
	}
}
