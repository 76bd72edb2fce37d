package action

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"
)

// lockPayload is the resumable convention's lock content (formats.md B.6): one line of JSON with sorted keys,
// in Python's json.dumps spacing as the mining tool writes it, plus tool=runwatch so people can tell.
func (p *Plan) lockPayload() []byte {
	fields := []struct{ k, v string }{
		{"acquired_at_utc", p.opts.now().Format("2006-01-02T15:04:05Z")},
		{"host", p.opts.Env.Host},
		{"pid", ""},
		{"run_id", p.RunID},
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

// takeRunLock creates LOCK_FILE exclusively (O_EXCL: exactly one taker wins), and returns its release.
// A lock file already there is someone's lock, live or stale; either way this action must not proceed, and
// a stale one is cleared by unlock, where the person sees why it is judged stale.
func (p *Plan) takeRunLock() (func(), error) {
	payload := p.lockPayload()
	f, err := os.OpenFile(p.LockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		held, _ := os.ReadFile(p.LockPath)
		return nil, refusef("the run lock %s is held (%s); if it is stale, clear it with: runwatch unlock %s",
			p.LockPath, oneLine(string(held), 200), p.RunID)
	}
	if err != nil {
		return nil, fmt.Errorf("take the run lock %s: %w", p.LockPath, err)
	}
	// No fsync of the lock: O_EXCL gives exclusion among live processes, which is all a lock is for. After a
	// crash the lock is either gone, empty or ours with a dead pid, and each of those is judged stale.
	_, werr := f.Write(payload)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(p.LockPath)
		return nil, fmt.Errorf("write the run lock %s: %w", p.LockPath, err)
	}
	return func() {
		// Release only our own lock: never remove one that someone replaced ours with.
		if cur, err := os.ReadFile(p.LockPath); err == nil && bytes.Equal(cur, payload) {
			os.Remove(p.LockPath)
		}
	}, nil
}

// oneLine flattens untrusted text for a message or a log field: no line breaks, no control characters,
// at most max bytes.
func oneLine(s string, max int) string {
	// Every non-printable rune (C0, DEL, the 8-bit C1 controls that some terminals honour as CSI/OSC, bidi
	// overrides) becomes a space: the result is logged, shown, and may have to be typed back.
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
