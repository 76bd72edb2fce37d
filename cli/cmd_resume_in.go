package cli

import (
	"io"
	"os"

	"runwatch/state/launch"
)

// The dashboard's resume key, inside tmux, opens a window running this: it starts the resume command in the
// run's work folder without handing that folder to tmux, which would expand it as a format.
func init() {
	register(command{
		name:    launch.InDirCommand,
		summary: "start a resume command in its work folder (what the dashboard's tmux window runs)",
		args:    "DIR -- COMMAND...",
		hidden:  true,
		rawArgs: true,
		define: func(*flagSet) runFunc {
			return func(args []string, _, stderr io.Writer) int { return launch.ExecInDir(args, os.Stdin, stderr) }
		},
	})
}
