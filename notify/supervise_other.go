//go:build !linux

package notify

import (
	"context"
	"io"
	"os/exec"
	"syscall"
	"time"

	"runwatch/childproc"
)

// runHook runs argv in a process group of its own, killed whole when ctx ends: a hook that is a shell
// script leaves its children (a sleep, a curl) running past it otherwise. Without a child subreaper (Linux)
// a child that leaves the group, or outlives a hook that exits at once, is not found.
func runHook(ctx context.Context, argv []string, out io.Writer) (left []string, err error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A hook that leaves a child holding its output open must not keep us waiting past the timeout.
	cmd.WaitDelay = time.Second
	return nil, childproc.Run(cmd)
}
