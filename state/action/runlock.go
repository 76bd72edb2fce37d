package action

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"runwatch/model"
	"runwatch/state/atomicfile"
	"runwatch/termsafe"
)

// lockPayload is the resumable convention's lock content (docs/FORMATS.md B.6): one line of JSON with sorted keys,
// in Python's json.dumps spacing as the mining tool writes it, plus tool=runwatch so people (and runwatch's
// own takeover) can tell. run_id is the state's RUN_ID: the real tools release a lock only when it matches.
func (p *Plan) lockPayload() []byte {
	runID := p.lockRunID
	if runID == "" {
		runID = p.RunID
	}
	fields := []struct{ k, v string }{
		{"acquired_at_utc", p.opts.now().Format("2006-01-02T15:04:05Z")},
		{"host", p.opts.Env.Host},
		{"pid", ""},
		{"run_id", runID},
		{"tool", "runwatch"},
		{"user", p.opts.user()},
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		k, _ := json.Marshal(f.k)
		b.Write(k)
		b.WriteString(": ")
		if f.k == "pid" {
			fmt.Fprintf(&b, "%d", os.Getpid())
			continue
		}
		v, _ := json.Marshal(f.v)
		b.Write(v)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// takeRunLock creates LOCK_FILE holding its whole payload from the instant it exists: the payload is written
// to a temp file that is then link(2)ed to LOCK_FILE, which fails if the name exists (exactly one taker
// wins). The real tools take an empty or unparsable lock for a free one and overwrite it, so a lock that is
// created first and written after would be stolen in between. A lock already there is someone's lock, live or
// stale; either way this action must not proceed, and a stale one is cleared by unlock, where the person sees
// why it is judged stale. The one exception is runwatch's own lock, on this host, whose process is gone: the
// leftover of a killed runwatch, taken over here with a run.log line saying so.
func (p *Plan) takeRunLock() (func(), error) {
	payload := p.lockPayload()
	base := filepath.Base(p.LockPath)
	var madeDirs []string
	if p.lockDir != "" {
		made, err := p.root.MkdirBeneath(p.lockDir)
		if err != nil {
			p.removeDirs(made)
			return nil, fmt.Errorf("create the run lock's folder %s: %w", p.lockDir, err)
		}
		madeDirs = made
	}
	taken := false
	defer func() {
		if !taken {
			p.removeDirs(madeDirs)
		}
	}()
	for attempt := 0; ; attempt++ {
		err := p.root.CreateExclusive(p.LockPath, payload, atomicfile.NewTempName(base))
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("take the run lock %s: %w", p.LockPath, err)
		}
		held, snap, rerr := p.root.Read(p.LockPath)
		if rerr != nil {
			return nil, refusef("the run lock %s exists and cannot be read (%v); see what it is and remove it by hand if it is not a lock", p.LockPath, rerr)
		}
		if !snap.Exists {
			if attempt < 3 {
				continue // released between our link and our read
			}
			return nil, refusef("the run lock %s keeps appearing and disappearing; another writer is busy, try again", p.LockPath)
		}
		why, dead := p.ownDeadLock(held)
		if !dead || attempt > 0 {
			return nil, refusef("the run lock %s is held (%s); if it is stale, clear it with: runwatch unlock %s",
				p.LockPath, termsafe.Plain(string(held), 200), p.RunID)
		}
		line := logLine(p.opts.now(), "stale_lock_replaced", "payload="+termsafe.Plain(string(held), 4096), kv("lock", relTo(filepath.Dir(p.RunPath), p.LockPath)),
			"tool=runwatch", kv("user", p.opts.user()), kv("why", why), kv("for_action", p.ID))
		err = p.root.RemoveIfUnchanged(snap, atomicfile.NewClaimName(base), func() error {
			return p.root.Append(p.LogPath, []byte(line), !p.opts.Force)
		})
		if err != nil {
			return nil, fmt.Errorf("take over runwatch's dead lock %s: %w", p.LockPath, err)
		}
		p.Recovered = append(p.Recovered, "took over "+p.LockPath+": "+why)
	}
	taken = true
	return func() {
		// Release only our own lock: never remove one that someone replaced ours with.
		if cur, snap, err := p.root.Read(p.LockPath); err == nil && snap.Exists && bytes.Equal(cur, payload) {
			p.root.RemoveIfUnchanged(snap, atomicfile.NewClaimName(base), nil)
		}
		p.removeDirs(madeDirs)
	}, nil
}

// removeDirs takes back the folders takeRunLock created, deepest first, each only while it is empty: a
// folder the run's writer has put its own lock in since is its folder now.
func (p *Plan) removeDirs(dirs []string) {
	for _, d := range dirs {
		if removed, err := p.root.RemoveDirIfEmpty(d); err != nil || !removed {
			return
		}
	}
}

// ownDeadLock reports whether held is runwatch's own lock payload, taken on this host by a process that is
// gone (or whose pid now belongs to a process started after the lock was taken), and why.
func (p *Plan) ownDeadLock(held []byte) (string, bool) {
	var l struct {
		Acquired string `json:"acquired_at_utc"`
		Host     string `json:"host"`
		PID      int    `json:"pid"`
		Tool     string `json:"tool"`
	}
	if json.Unmarshal(bytes.TrimSpace(held), &l) != nil || l.Tool != "runwatch" || l.PID <= 0 {
		return "", false
	}
	if l.Host == "" || p.opts.Env.Host == "" || !model.SameHost(l.Host, p.opts.Env.Host) {
		return "", false
	}
	alive, started := p.ownerAlive(l.PID)
	if !alive {
		return fmt.Sprintf("runwatch's own lock; its pid %d is no longer running on %s", l.PID, l.Host), true
	}
	if at, err := time.Parse(time.RFC3339, l.Acquired); err == nil && !started.IsZero() && started.After(at.Add(2*time.Second)) {
		return fmt.Sprintf("runwatch's own lock; pid %d now belongs to a process started at %s, after the lock was taken at %s",
			l.PID, started.UTC().Format(time.RFC3339), l.Acquired), true
	}
	return "", false
}
