package state

import (
	"os"
	"time"

	"runwatch/model"
	"runwatch/state/procinfo"
)

// NewEnv is the real world for judging runs: this host's name, the wall clock, and its processes.
func NewEnv(staleAfter time.Duration) model.Env {
	host, _ := os.Hostname()
	if staleAfter <= 0 {
		staleAfter = model.DefaultStaleAfter
	}
	return model.Env{Now: time.Now(), Host: host, StaleAfter: staleAfter, Proc: procinfo.System{}}
}
