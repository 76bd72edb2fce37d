// Package childproc starts the processes runwatch runs (ssh, notify hooks) so that none outlives it,
// however it ends: its own process group (stopping it never signals the dashboard's terminal) and the
// kernel's parent-death signal, which covers SIGHUP (a closed terminal), SIGKILL and a crash, where no Go
// code runs. Linux sends that signal when the *thread* that forked the child exits, not the process, and
// the Go runtime may end threads; so every child is started from one goroutine locked to its own thread
// for the life of runwatch.
package childproc

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

var spawner struct {
	once sync.Once
	reqs chan spawnRequest
}

// Start starts c from the spawner's thread, with the parent-death signal (SIGTERM) where the system has
// one and a process group of its own.
func Start(c *exec.Cmd) error {
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.Setpgid = true
	setParentDeathSignal(c.SysProcAttr)
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnRequest)
		go func() {
			// Never unlocked: the thread lives as long as this goroutine, which lives as long as runwatch.
			runtime.LockOSThread()
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnRequest{c, done}
	return <-done
}

// Run is c.Run with Start.
func Run(c *exec.Cmd) error {
	if err := Start(c); err != nil {
		return err
	}
	return c.Wait()
}
