package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/state/resumable/resumabletest"
)

// TestEveryCommandRefusesTheSameBadConfig runs the real binary's commands over one bad config each: every
// command exits 2 with the same message, naming the file and the line, before it reads a run. Before the
// config was checked once at load, status accepted `keys: {step: [S], unlock: [S]}` that the dashboard
// refused, and a misspelt resume_command field failed only when X was pressed.
func TestEveryCommandRefusesTheSameBadConfig(t *testing.T) {
	runs := filepath.Join(resumabletest.Copy(t), "reports")
	run := filepath.Join(runs, resumabletest.Sphinx)
	for _, bad := range []struct{ body, want string }{
		{"keys:\n  step: [S]\n  unlock: [S]\n", `key "S" is bound to both`},
		{"resume_command:\n  resumable: 'opencode {{.RepoRot}}'\n", "line 2: resume_command.resumable: no field .RepoRot (did you mean .RepoRoot?)"},
		{"rots: [/x]\n", `line 1: unknown key "rots" (did you mean "roots"?)`},
	} {
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(cfg, []byte(bad.body), 0o600); err != nil {
			t.Fatal(err)
		}
		var first string
		for _, args := range [][]string{
			{"status", runs}, {"status", "--json", runs}, {"events", "--timeout", "1s", runs}, {"brief", run},
			{"step", "--dry-run", run}, {"goto", "--print", run}, {"notify", runs}, {runs},
		} {
			var out, errOut bytes.Buffer
			cmd := helperProcess(t, append([]string{"--config", cfg}, args...)...)
			if args[0] != runs {
				cmd = helperProcess(t, append(append([]string{args[0]}, "--config", cfg), args[1:]...)...)
			}
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// notify and the dashboard run until stopped once their config is accepted.
			stop := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
			code := exitCodeOf(t, cmd.Wait())
			stop.Stop()
			msg := errOut.String()
			// A config error is no misuse of the command: no usage lines follow it.
			if code != 2 || !strings.Contains(msg, cfg) || !strings.Contains(msg, bad.want) || out.Len() > 0 || strings.Contains(msg, "usage:") {
				t.Errorf("runwatch %s with %q: exit %d, stdout %q, stderr %q; want exit 2 naming %s and %q, no usage lines",
					strings.Join(args, " "), bad.body, code, out.String(), msg, cfg, bad.want)
				continue
			}
			// The same words from every command, whatever its prefix and usage lines.
			line, _, _ := strings.Cut(msg, "\n")
			_, rest, _ := strings.Cut(line, "config ")
			if first == "" {
				first = rest
			} else if rest != first {
				t.Errorf("runwatch %s says %q, another command %q", args[0], rest, first)
			}
		}
	}
}
