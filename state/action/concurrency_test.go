package action

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"runwatch/state/atomicfile"
	"runwatch/state/envfile"
	"runwatch/state/journal"
	"runwatch/state/yamledit"
)

// A simulated resumable agent works under the run lock, as the convention requires, rewriting
// checklist.state.env (tmp + rename, like state_tool.py) with a counter, while actions tick and untick an
// item. Neither side may lose an update silently: the agent's counter must survive every action, the item
// must hold what the last applied action wrote, and every action that did not apply must say why.
func TestConcurrentResumableAgent(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	dir := filepath.Dir(sp)
	cp := filepath.Join(dir, "checklist.state.env")
	lock := filepath.Join(dir, "run.lock")
	const agentWrites = 300

	var agentDone atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer agentDone.Store(true)
		for n := 1; n <= agentWrites; {
			f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				continue // someone holds the run: wait for it, as the convention's writers do
			}
			fmt.Fprintf(f, `{"acquired_at_utc": "2026-11-30T01:00:00Z", "host": "testhost", "pid": %d, "run_id": "agent", "user": "agent"}`+"\n", os.Getpid())
			f.Close()
			data, err := os.ReadFile(cp)
			if err != nil {
				t.Error(err)
				return
			}
			ef, err := envfile.Parse(data)
			if err != nil {
				t.Errorf("agent read a torn checklist: %v", err)
				return
			}
			ef.Set("AGENT_SEQ", strconv.Itoa(n))
			tmp := cp + ".tmp"
			os.WriteFile(tmp, ef.Bytes(), 0o644)
			os.Rename(tmp, cp)
			n++
			os.Remove(lock)
		}
	}()

	o := opts(t, realEnv())
	applied, refusedN, lastApplied := 0, 0, ""
	for !agentDone.Load() || applied < 20 {
		cb := checklistValue(t, cp)
		p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", cb != "1", o)
		if err == nil {
			err = Apply(p, ApplyOptions{})
		}
		switch {
		case err == nil:
			applied++
			lastApplied = map[bool]string{true: "0", false: "1"}[cb == "1"]
		case isRefusal(err):
			refusedN++
		default:
			t.Fatalf("an action failed without a refusal: %v", err)
		}
	}
	wg.Wait()
	ef, err := envfile.Parse([]byte(mustRead(t, cp)))
	if err != nil {
		t.Fatal(err)
	}
	if seq, _ := ef.Get("AGENT_SEQ"); seq != strconv.Itoa(agentWrites) {
		t.Fatalf("the agent's last update was lost: AGENT_SEQ=%s, want %d", seq, agentWrites)
	}
	if v, _ := ef.Get("CB_S3_VERIFY_GREEN"); v != lastApplied {
		t.Fatalf("the last applied action's update was lost: CB_S3_VERIFY_GREEN=%s, want %s", v, lastApplied)
	}
	entries, _, _ := journal.Read(o.JournalPath)
	if len(entries) != applied {
		t.Fatalf("journal has %d entries for %d applied actions", len(entries), applied)
	}
	t.Logf("agent wrote %d times; actions: %d applied, %d refused (conflict or lock held)", agentWrites, applied, refusedN)
}

// A jonggrang agent takes no lock and writes non-atomically (fs.writeFileSync: truncate, then write). runwatch
// cannot stop it, but must never overwrite one of its updates: every agent update survives, and every action
// that did not apply reports the conflict.
func TestConcurrentJonggrangAgent(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
	const agentWrites = 300
	var mu sync.Mutex // only to read the agent's last value at the end
	lastAgent := ""
	var agentDone atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer agentDone.Store(true)
		for n := 1; n <= agentWrites; n++ {
			for {
				data, err := os.ReadFile(mp)
				if err != nil {
					t.Error(err)
					return
				}
				usage := fmt.Sprintf("0.%03d", n)
				out, err := yamledit.Apply(data, []yamledit.Edit{{Path: []string{"context_usage"}, Value: yamledit.Number(usage)}})
				if err != nil {
					continue // read a half-written file (ours or its own): read again, like a retrying reader
				}
				f, err := os.OpenFile(mp, os.O_WRONLY|os.O_TRUNC, 0o644)
				if err != nil {
					t.Error(err)
					return
				}
				f.Write(out)
				f.Close()
				mu.Lock()
				lastAgent = usage
				mu.Unlock()
				break
			}
		}
	}()
	o := opts(t, realEnv())
	applied, conflicts, displaced := 0, 0, 0
	for !agentDone.Load() || applied < 20 {
		run := load(t, mp, o.Env)
		var p *Plan
		var err error
		if run.RawStatus == "paused" {
			p, err = PlanResume(run, o)
		} else {
			p, err = PlanPause(run, o)
		}
		if err == nil {
			err = Apply(p, ApplyOptions{})
		}
		switch {
		case err == nil:
			applied++
		case errors.Is(err, atomicfile.ErrChanged) || isRefusal(err):
			conflicts++
		case errors.As(err, new(*OverwroteError)):
			// The agent's write landed between the last check and the rename (a window of microseconds,
			// hit under load): applied, reported, and the agent's bytes kept in the journal for undo.
			applied++
			displaced++
		default:
			wg.Wait() // the agent must not write into a folder the failed test removes
			t.Fatalf("an action failed without reporting a conflict: %v", err)
		}
	}
	wg.Wait()
	root2, err := yamledit.Parse([]byte(mustRead(t, mp)))
	if err != nil {
		t.Fatal(err)
	}
	if got := yamledit.Lookup(root2, "context_usage").Value; got != lastAgent && !displacedInJournal(t, o.JournalPath, lastAgent) {
		t.Fatalf("an agent update was overwritten without a trace: context_usage=%s, want %s, and no journal entry keeps it", got, lastAgent)
	}
	t.Logf("agent wrote %d times; actions: %d applied (%d over a write they reported and journaled), %d conflicts reported",
		agentWrites, applied, displaced, conflicts)
}

// displacedInJournal reports whether a journal entry keeps, as bytes a lockless writer put there between
// runwatch's last check and its rename, a manifest whose context_usage is usage: what undo puts back.
func displacedInJournal(t *testing.T, journalPath, usage string) bool {
	t.Helper()
	entries, _, err := journal.Read(journalPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		for _, f := range e.Files {
			if !f.Displaced {
				continue
			}
			if n, err := yamledit.Parse(f.Old); err == nil && yamledit.Lookup(n, "context_usage").Value == usage {
				return true
			}
		}
	}
	return false
}
