package action

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"runwatch/sim"
	"runwatch/state/atomicfile"
	"runwatch/state/envfile"
	"runwatch/state/journal"
)

// stateToolUpdate is a writer equivalent to state_tool.py's `update FILE KEY=VALUE` (the resumable runs'
// helper, github.com/PLeVasseur/opencode-project-agents, iso_26262_rust_mapping/reports/tooling): load
// every KEY=VALUE line of FILE (a missing file is empty), set the key, write all keys sorted as KEY="value"
// to FILE.tmp, run `bash -n` on it, and rename it over FILE, taking no lock. The reading and writing are the
// simulator's (sim.ParseEnvFile, sim.EnvFileBytes: the same format; state_tool.py also decodes Python
// escapes in quoted values, which the values here have none of). Nothing of state_tool.py's code is used.
// It returns the bytes it read and the bytes it wrote.
func stateToolUpdate(path, key, value string) (read, wrote []byte, err error) {
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	data, err := sim.ParseEnvFile(raw)
	if err != nil {
		return raw, nil, err
	}
	data[key] = value
	out := sim.EnvFileBytes(data)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		return raw, nil, err
	}
	if msg, err := exec.Command("bash", "-n", tmp).CombinedOutput(); err != nil {
		return raw, nil, fmt.Errorf("bash -n %s: %v: %s", tmp, err, msg)
	}
	return raw, out, os.Rename(tmp, path)
}

// raceWriter runs updates W_1=1, W_2=2, ... on path until stop is closed: a key per update, so an update
// lost is a key missing from the file at the end, whatever came after it. Each update is what one run of
// `state_tool.py update` does; between two of them the loop pauses for gap to twice gap, which stands for the
// end of one python3 process and the start of the next (15 ms on a quiet machine here, 180 ms loaded): the
// writer reads again only that long after its own rename. RUNWATCH_RACE_WRITER, when set, is run instead as a command
// given FILE KEY=VALUE (e.g. `python3 /path/to/state_tool.py update`), the real writer.
type raceWriter struct {
	path string
	gap  time.Duration
	cmd  []string
	mu   sync.Mutex
	seen map[string]bool // the hash of every content the writer read and built on (in-process writer only)
	// own is the hash of every content the writer wrote: the item is toggled back and forth, so a refused
	// plan's bytes can equal bytes the writer made on its own, and its reading them proves nothing.
	own map[string]bool
	n   int
}

func (w *raceWriter) run(t *testing.T, stop <-chan struct{}) {
	for i := 1; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		time.Sleep(w.gap + time.Duration(rand.Int64N(int64(w.gap)+1)))
		key, value := "W_"+strconv.Itoa(i), strconv.Itoa(i)
		var err error
		if len(w.cmd) > 0 {
			var out []byte
			out, err = exec.Command(w.cmd[0], append(w.cmd[1:], w.path, key+"="+value)...).CombinedOutput()
			if err != nil {
				err = fmt.Errorf("%v: %s", err, out)
			}
		} else {
			var read, wrote []byte
			read, wrote, err = stateToolUpdate(w.path, key, value)
			w.mu.Lock()
			w.seen[atomicfile.Hash(read)] = true
			w.own[atomicfile.Hash(wrote)] = true
			w.mu.Unlock()
		}
		if err != nil {
			t.Errorf("writer update %d: %v", i, err)
			return
		}
		w.mu.Lock()
		w.n = i
		w.mu.Unlock()
	}
}

// TestWriterUpdateNeverLost (issue 37 row 14) races runwatch's check and uncheck of one checklist item
// against a writer of the same checklist.state.env that takes no lock (stateToolUpdate), and asserts:
//   - no writer update lost: every W_i the writer wrote is in the file at the end. A writer rename that lands
//     between runwatch's last check and its rename was, before, replaced by runwatch's bytes (reported, kept
//     for undo, but gone from the file): now the writer's file is put back and the same edit made on it;
//   - nothing refused but applied: no action reported as not applied left its bytes where the writer read
//     them and built its update on them.
//
// The check-to-rename window is microseconds wide; a few hundred actions would rarely meet a writer there, so
// Options.Seams.BeforeRename widens it (a random pause of up to 2 ms, nothing else changed) unless
// RUNWATCH_RACE_WIDEN=0. RUNWATCH_RACE_ACTIONS sets the number of actions (default 300, 60 with -short);
// with RUNWATCH_RACE_WRITER the real state_tool.py can be raced (see raceWriter). The measurement of
// docs/BENCHMARKS.md: RUNWATCH_RACE_ACTIONS=10000 RUNWATCH_RACE_WIDEN=0
// RUNWATCH_RACE_WRITER="python3 state_tool.py update" go test ./state/action -run TestWriterUpdateNeverLost -v.
func TestWriterUpdateNeverLost(t *testing.T) {
	t.Parallel()
	actions := 300
	if testing.Short() {
		actions = 60
	}
	if v := os.Getenv("RUNWATCH_RACE_ACTIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("RUNWATCH_RACE_ACTIONS=%q: want a number of actions", v)
		}
		actions = n
	}
	if !atomicfile.CanReportDisplaced {
		t.Skip("this build renames plainly: a writer's rename landing in between is overwritten unseen (atomicfile.CanReportDisplaced)")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("state_tool.py checks its temp file with bash -n; no bash here")
	}
	root := t.TempDir()
	sp := makeResumable(t, root)
	cp := filepath.Join(filepath.Dir(sp), "checklist.state.env")
	// The fixture's bytes, on disk before the race: a refused action that would have ticked the item back
	// to them (the first action ticked it, the second was refused by the writer's first update) has the
	// same bytes as the file the writer first read, which proves nothing of the refused action.
	fixture := atomicfile.Hash([]byte(mustRead(t, cp)))
	w := &raceWriter{path: cp, gap: 10 * time.Millisecond, cmd: strings.Fields(os.Getenv("RUNWATCH_RACE_WRITER")), seen: map[string]bool{}, own: map[string]bool{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.run(t, stop) }()
	stopWriter := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopWriter()

	o := opts(t, realEnv())
	if os.Getenv("RUNWATCH_RACE_WIDEN") != "0" {
		o.Seams.BeforeRename = func() { time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond) }
	}
	applied, raced, putBack, overwrote, refused := 0, 0, 0, 0, 0
	appliedHashes, refusedHashes := map[string]bool{}, map[string]string{} // refused: hash → the refusal
	for i, stale := 0, 0; i < actions; i++ {
		p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", checklistValue(t, cp) != "1", o)
		if err != nil {
			// Planned from a value the writer's rename had just made stale: plan again.
			if stale++; stale > 1000 {
				t.Fatalf("no action could be planned: %v", err)
			}
			i--
			continue
		}
		stale = 0
		planned := atomicfile.Hash(p.Files[0].New)
		err = Apply(p, ApplyOptions{})
		var pb *PutBackError
		var oe *OverwroteError
		switch {
		case err == nil:
			applied++
			appliedHashes[atomicfile.Hash(p.Files[0].New)] = true
			if len(p.Raced) > 0 {
				raced++
			}
		case errors.As(err, &oe):
			applied++
			overwrote++
			appliedHashes[planned] = true
		case errors.As(err, &pb):
			putBack++
			refusedHashes[planned] = err.Error()
		case isRefusal(err) || errors.Is(err, atomicfile.ErrChanged):
			refused++
			refusedHashes[planned] = err.Error()
		default:
			t.Fatalf("action %d failed without a refusal: %v", i, err)
		}
		p.Close()
	}
	stopWriter()

	f, err := envfile.Parse([]byte(mustRead(t, cp)))
	if err != nil {
		t.Fatal(err)
	}
	var lost []string
	for i := 1; i <= w.n; i++ {
		if v, _ := f.Get("W_" + strconv.Itoa(i)); v != strconv.Itoa(i) {
			lost = append(lost, "W_"+strconv.Itoa(i))
		}
	}
	refusedButApplied := 0
	for h, why := range refusedHashes {
		if w.seen[h] && !appliedHashes[h] && !w.own[h] && h != fixture {
			refusedButApplied++
			t.Logf("refused, and its bytes read by the writer: %s", why)
		}
	}
	entries, _, err := journal.Read(o.JournalPath)
	if err != nil {
		t.Fatal(err)
	}
	journaledRaces := 0
	for _, e := range entries {
		if e.Raced != "" {
			journaledRaces++
		}
	}
	t.Logf("writer updates %d, lost %d %v; actions %d: applied %d (%d made again on the writer's newer bytes, %d over them), "+
		"not applied with the writer's file put back %d, refused %d; refused but applied %d; journal entries saying raced %d",
		w.n, len(lost), lost, actions, applied, raced, overwrote, putBack, refused, refusedButApplied, journaledRaces)
	if len(lost) > 0 {
		t.Errorf("%d writer update(s) lost: %v", len(lost), lost)
	}
	if refusedButApplied > 0 {
		t.Errorf("%d refused action(s) left bytes the writer read", refusedButApplied)
	}
	if w.n == 0 || applied == 0 {
		t.Errorf("the race measured nothing: %d writer updates, %d actions applied", w.n, applied)
	}
	if raced+putBack != journaledRaces {
		t.Errorf("%d races settled but %d journal entries say so", raced+putBack, journaledRaces)
	}
}
