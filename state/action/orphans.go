package action

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"runwatch/state/journal"
)

// setAside reports an intent that recovery cannot finish and moves it out of the pending intents, so it
// does not stand for an action in progress for ever (install refuses to replace a runwatch that has one).
func (p *Plan) setAside(jp string, in journal.Intent, why string) {
	where, err := journal.SetAside(jp, in.ID)
	if err != nil {
		p.Recovered = append(p.Recovered, fmt.Sprintf("%s %s on %s cannot be finished: %s; and it could not be set aside: %v", in.Action, in.ID, in.Run, why, err))
		return
	}
	p.Recovered = append(p.Recovered, fmt.Sprintf("%s %s on %s cannot be finished: %s; its intent (the files' old bytes and hashes) is kept in %s for you to check by hand", in.Action, in.ID, in.Run, why, where))
}

// setAsideOrphans sets aside the intents of dead owners on this machine whose run is gone (its state file
// and run root no longer exist): no action on that run will ever come to finish them.
func (p *Plan) setAsideOrphans(jp string) {
	intents, _, err := journal.Pending(jp, "")
	if err != nil {
		return
	}
	for _, in := range intents {
		if in.Run == p.RunPath || !p.intentOwnerDead(in) {
			continue
		}
		if _, err := os.Lstat(in.Run); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if _, err := os.Lstat(in.Root); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		p.setAside(jp, in, "its run "+in.Run+" and run root are gone")
	}
}
