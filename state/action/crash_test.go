package action

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"runwatch/state"
	"runwatch/state/atomicfile"
	"runwatch/state/envfile"
	"runwatch/state/journal"
	"runwatch/state/yamledit"
	"runwatch/termsafe"
)

// The crash harness: `go test ./state/action -run TestCrashConsistency -crash.kills=1400 -v`.
var crashKills = flag.Int("crash.kills", 150, "how many times TestCrashConsistency SIGKILLs the acting child")

// crashTear: one journal append in this many is torn by the child itself: it writes a random part of the
// line and SIGKILLs itself there, at the journal append (0: never).
var crashTear = flag.Int("crash.tear", 6, "one journal append in N is torn by a SIGKILL in the middle of its write")

const crashChildEnv = "RUNWATCH_ACTION_CRASH_CHILD"

const (
	crashFeatureA = "add-login-mlop4860" // pause, resume, step, undo, unlock
	crashFeatureB = "fix-retry-mlop4861" // retry, undo
)

type crashRuns struct{ sp, cp, log, lock, ma, mb, locks string }

func crashPaths(root string) crashRuns {
	dir := filepath.Join(root, "reports", runName)
	features := filepath.Join(root, "proj", ".jonggrang", ".output", "features")
	return crashRuns{
		sp: filepath.Join(dir, "state.env"), cp: filepath.Join(dir, "checklist.state.env"),
		log: filepath.Join(dir, "run.log"), lock: filepath.Join(dir, "run.lock"),
		ma: filepath.Join(features, crashFeatureA, "MANIFEST.yaml"), mb: filepath.Join(features, crashFeatureB, "MANIFEST.yaml"),
		locks: filepath.Join(root, "proj", ".jonggrang", "locks"),
	}
}

// TestCrashChild is the child process of TestCrashConsistency: it applies every kind of action to the three
// runs under $RUNWATCH_ACTION_CRASH_CHILD, forever, until it is killed. Before each apply it announces the
// SHA-256 of every content it is about to write ("will <hash>"), so the parent knows every content a state
// file may legitimately hold, and after it the outcome with the action id.
func TestCrashChild(t *testing.T) {
	t.Parallel()
	root := os.Getenv(crashChildEnv)
	if root == "" {
		t.Skip("helper process of TestCrashConsistency")
	}
	c := crashPaths(root)
	o := Options{User: "crash", JournalPath: filepath.Join(root, "journal.jsonl")}
	out := bufio.NewWriter(os.Stdout)
	start, _ := strconv.Atoi(os.Getenv(crashChildEnv + "_START"))
	if tear, _ := strconv.Atoi(os.Getenv(crashChildEnv + "_TEAR")); tear > 0 {
		rng := rand.New(rand.NewPCG(uint64(start), uint64(os.Getpid())))
		o.Seams.BeforeJournalAppend = func(f *os.File, line []byte) {
			if rng.IntN(tear) != 0 {
				return
			}
			// The kill at the append: part of the line reaches the file, never its newline.
			var e journal.Entry
			if err := json.Unmarshal(line, &e); err != nil {
				panic(err)
			}
			cut := 1 + rng.IntN(len(line)-1)
			fmt.Fprintln(out, "tear", e.ID, atomicfile.Hash(bytes.TrimPrefix(line[:cut], []byte("\n"))))
			out.Flush()
			f.Write(line[:cut])
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	for i := start; ; i++ {
		o.Env = realEnv()
		var p *Plan
		var err error
		switch i % 3 {
		case 0:
			run := load(t, c.sp, o.Env)
			// A foreign stale lock planted by the parent is cleared as a person would; runwatch's own dead
			// lock (a killed predecessor's) is taken over by the next action by itself.
			held, _ := os.ReadFile(c.lock)
			if strings.Contains(string(held), `"tool": "runwatch"`) {
				err = errors.New("own lock")
			} else {
				p, err = PlanUnlock(run, "", o)
			}
			if err != nil {
				switch i / 3 % 4 {
				case 0, 2:
					p, err = PlanCheck(run, "CB_S3_VERIFY_GREEN", checklistValue(t, c.cp) != "1", o)
				case 1:
					p, err = PlanStep(run, "", o)
				case 3:
					p, err = PlanUndo(run, o)
				}
			}
		case 1:
			run := load(t, c.ma, o.Env)
			if p, err = PlanUnlock(run, "", o); err != nil {
				switch i / 3 % 3 {
				case 0:
					if run.RawStatus == "paused" {
						p, err = PlanResume(run, o)
					} else {
						p, err = PlanPause(run, o)
					}
				case 1:
					p, err = PlanStep(run, "", o)
				case 2:
					p, err = PlanUndo(run, o)
				}
			}
		case 2:
			run := load(t, c.mb, o.Env)
			if p, err = PlanRetry(run, "", o); err != nil {
				p, err = PlanUndo(run, o)
			}
		}
		if err == nil {
			for _, f := range p.Files {
				if !f.Remove {
					fmt.Fprintln(out, "will", atomicfile.Hash(f.New))
				}
			}
			out.Flush()
			err = Apply(p, ApplyOptions{})
		}
		switch {
		case err == nil:
			fmt.Fprintln(out, "applied", p.ID, p.Action)
		case Applied(err):
			fmt.Fprintln(out, "warned", p.ID, termsafe.Plain(err.Error(), 300))
		default:
			fmt.Fprintf(out, "refused %v\n", termsafe.Plain(err.Error(), 200))
		}
		if p != nil {
			p.Close()
		}
		out.Flush()
	}
}

func checklistValue(t testing.TB, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := envfile.Parse(data)
	if err != nil {
		t.Fatalf("%s does not parse: %v", path, err)
	}
	v, _ := f.Get("CB_S3_VERIFY_GREEN")
	return v
}

// crashCounts is what the harness measures; every field but the evidence must stay 0.
type crashCounts struct {
	kills, applied, refused, warned int
	torn                            int // a state file holding bytes that were never whole (neither old nor new)
	appendKills, tornLines          int // children killed in the middle of a journal append, and the torn lines they left
	reused                          int // a journal line that is neither a whole entry nor exactly a torn append's part (e.g. an entry glued to one)
	lost                            int // an action reported applied that the journal does not know, or a journaled change rolled back unrecorded
	unaudited                       int // a change on disk without its journal entry, or a journaled resumable change without its run.log line
	leftovers                       int // temp or quarantine files, pending intents, runwatch's own locks, after recovery
	lockTakeovers, recoveredNotes   int // evidence that kills landed mid-action
}

// TestCrashConsistency SIGKILLs a child applying every action (check, uncheck, step, undo, unlock, pause,
// resume, retry) at random points, -crash.kills times, and checks after every kill that each state file
// parses and holds a content it held before or one the child announced (old or new, never torn), and that
// run.log has no torn line. Then it lets runwatch recover (as the next action would) and checks, from the
// journal and the logs: every applied action is journaled, every change on disk is the journal's chain of
// changes, every resumable change has its audit line exactly once, and nothing is left over.
func TestCrashConsistency(t *testing.T) {
	t.Parallel()
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in the child")
	}
	if testing.Short() {
		t.Skip("kills a child many times")
	}
	root := t.TempDir()
	sp := makeResumable(t, root)
	ma := makeJonggrang(t, root, crashFeatureA, manifestPaused)
	mb := makeJonggrang(t, root, crashFeatureB, strings.ReplaceAll(manifestFailed, crashFeatureA, crashFeatureB))
	c := crashPaths(root)
	if sp != c.sp || ma != c.ma || mb != c.mb {
		t.Fatal("crash paths disagree with the fixtures")
	}
	files := []string{c.sp, c.cp, c.ma, c.mb}
	initial := map[string]string{}
	valid := map[string]bool{}
	for _, p := range files {
		h := atomicfile.Hash([]byte(mustRead(t, p)))
		initial[p], valid[h] = h, true
	}
	var n crashCounts
	appliedIDs := map[string]bool{}
	tornIDs, tornParts := map[string]bool{}, map[string]bool{}
	refusals := map[string]int{}
	rng := rand.New(rand.NewPCG(1, 2))
	dead := deadPID(t)
	for n.kills < *crashKills {
		// Between children, plant what people find in real run roots: a foreign stale run lock, stale and
		// unparsable agent locks. The child clears them with unlock.
		if rng.IntN(4) == 0 {
			if _, err := os.Lstat(c.lock); os.IsNotExist(err) {
				// each planted lock is new bytes, as a new lock is, so a recovery can tell it from the one removed
				mustWrite(t, c.lock, fmt.Sprintf(`{"acquired_at_utc": "2026-11-30T00:%02d:%02d Z", "host": "testhost", "pid": `+dead+`, "run_id": "20260215T014733Z", "user": "agent"}`+"\n", n.kills/60%60, n.kills%60))
			}
		}
		if rng.IntN(4) == 0 {
			mustWrite(t, filepath.Join(c.locks, "reviewer-old.lock"), fmt.Sprintf("{\n  \"agent_id\": \"reviewer-old\",\n  \"files\": [],\n  \"acquired_at\": \"2026-11-29T23:%02d:%02d.000Z\"\n}", n.kills/60%60, n.kills%60))
			mustWrite(t, filepath.Join(c.locks, "broken.lock"), fmt.Sprintf("not json %d", n.kills))
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
		// Each child starts at a random action, so the kills land in every kind of action alike.
		cmd.Env = append(os.Environ(), crashChildEnv+"="+root, crashChildEnv+"_START="+strconv.Itoa(rng.IntN(36)),
			crashChildEnv+"_TEAR="+strconv.Itoa(*crashTear))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var announced []string
		first := make(chan struct{})
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			sc := bufio.NewScanner(stdout)
			once := sync.Once{}
			for sc.Scan() {
				fields := strings.Fields(sc.Text())
				if len(fields) == 0 {
					continue
				}
				mu.Lock()
				switch fields[0] {
				case "will":
					announced = append(announced, fields[1])
				case "tear":
					n.appendKills++
					tornIDs[fields[1]] = true
					tornParts[fields[2]] = true
				case "applied", "warned":
					appliedIDs[fields[1]] = true
					if fields[0] == "applied" {
						n.applied++
					} else {
						n.warned++
					}
				case "refused":
					n.refused++
					reason := strings.Join(fields[1:], " ")
					if len(reason) > 70 {
						reason = reason[:70]
					}
					refusals[reason]++
				}
				mu.Unlock()
				if fields[0] == "applied" || fields[0] == "refused" || fields[0] == "warned" {
					once.Do(func() { close(first) })
				}
			}
		}()
		// Wait until the child is in its loop, then kill it a random moment later: mostly mid-action. A child
		// that killed itself at a journal append is done already.
		select {
		case <-first:
			time.Sleep(time.Duration(rng.IntN(6000)) * time.Microsecond)
		case <-drained:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-drained
			cmd.Wait()
			t.Fatal("child never finished an action")
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-drained
		cmd.Wait()
		n.kills++
		mu.Lock()
		for _, h := range announced {
			valid[h] = true
		}
		mu.Unlock()
		for _, p := range files {
			data := mustRead(t, p)
			if !valid[atomicfile.Hash([]byte(data))] {
				n.torn++
				t.Errorf("kill %d: %s holds content that was never whole (neither old nor new):\n%s", n.kills, p, data)
			}
		}
		for _, p := range []string{c.ma, c.mb} {
			if _, err := yamledit.Parse([]byte(mustRead(t, p))); err != nil {
				t.Fatalf("kill %d: %s does not parse: %v", n.kills, p, err)
			}
		}
		for _, p := range []string{c.sp, c.cp} {
			if _, err := envfile.Parse([]byte(mustRead(t, p))); err != nil {
				t.Fatalf("kill %d: %s does not parse: %v", n.kills, p, err)
			}
		}
		for _, line := range strings.SplitAfter(mustRead(t, c.log), "\n") {
			if line != "" && (!strings.HasSuffix(line, "\n") || !strings.HasPrefix(line, "[") && !strings.HasPrefix(line, "  ")) {
				t.Fatalf("kill %d: run.log has a torn line %q", n.kills, line)
			}
		}
		assertNoStrayState(t, root)
	}

	// What the next action (or a start) does: recover every run.
	o := Options{User: "crash", JournalPath: filepath.Join(root, "journal.jsonl"), Env: realEnv()}
	for _, p := range []string{c.sp, c.ma, c.mb} {
		notes, err := recoverRun(load(t, p, o.Env), o)
		if err != nil {
			t.Fatalf("recover %s: %v", p, err)
		}
		n.recoveredNotes += len(notes)
	}
	entries, _, err := journal.Read(o.JournalPath)
	if err != nil {
		t.Fatalf("journal: %v", err)
	}
	// Every line is a whole entry, or exactly the part of one that a torn append wrote, alone on its line.
	for i, line := range bytes.Split(bytes.TrimSuffix([]byte(mustRead(t, o.JournalPath)), []byte("\n")), []byte("\n")) {
		var e journal.Entry
		switch {
		case json.Unmarshal(line, &e) == nil && e.ID != "":
		case tornParts[atomicfile.Hash(line)]:
			n.tornLines++
		case len(line) > 0 && !bytes.Contains(line[1:], []byte(`{"id":`)):
			// Cut short, alone on its line, by one of the parent's kills landing inside an append's write:
			// SIGKILL can end a write of a line longer than a page part-way. What must never be is an entry
			// written onto the end of a torn line, which the check below catches.
			n.tornLines++
		default:
			n.reused++
			t.Errorf("journal line %d is neither a whole entry nor a torn append alone: %.200q", i+1, line)
		}
	}
	journaled := map[string]bool{}
	for _, e := range entries {
		journaled[e.ID] = true
	}
	for id := range appliedIDs {
		if !journaled[id] {
			n.lost++
			t.Errorf("action %s was reported applied but is not in the journal", id)
		}
	}
	for id := range tornIDs {
		if !journaled[id] {
			n.lost++
			t.Errorf("action %s, whose journal append was torn, is not in the journal whole after recovery", id)
		}
	}
	// Each state file's history must be the journal's chain: old hash of each entry = new hash of the one
	// before, from the initial content to what the file holds now.
	for _, p := range files {
		realP, _ := filepath.EvalSymlinks(p)
		cur := initial[p]
		var seen []string
		for _, e := range entries {
			for _, f := range e.Files {
				if f.Path != realP {
					continue
				}
				if f.OldSHA256 != cur {
					if contains(seen, f.OldSHA256) {
						n.lost++
						t.Errorf("%s: entry %s (%s) starts from an older content: a journaled change was rolled back unrecorded", p, e.ID, e.Action)
					} else {
						n.unaudited++
						t.Errorf("%s: entry %s (%s) starts from a content no entry wrote: a change without its journal entry", p, e.ID, e.Action)
					}
				}
				seen = append(seen, cur)
				cur = f.NewSHA256
			}
		}
		if now := atomicfile.Hash([]byte(mustRead(t, p))); now != cur {
			n.unaudited++
			t.Errorf("%s holds content the journal's last entry did not write", p)
		}
	}
	// Every resumable entry's audit line is in run.log exactly once, and every audit line has its entry.
	logText := mustRead(t, c.log)
	for _, e := range entries {
		if e.RunID != runName || len(e.Files) == 0 {
			continue
		}
		if k := strings.Count(logText, "action_id="+e.ID); k != 1 {
			n.unaudited++
			t.Errorf("entry %s (%s) has its audit line %d times in run.log", e.ID, e.Action, k)
		}
	}
	for _, line := range strings.Split(logText, "\n") {
		if strings.Contains(line, "stale_lock_replaced") || strings.Contains(line, "stale_lock_cleared") && strings.Contains(line, "runwatch's own lock") {
			n.lockTakeovers++
			continue
		}
		if i := strings.Index(line, "action_id="); i >= 0 {
			id := strings.Fields(line[i+len("action_id="):])[0]
			if !journaled[id] {
				n.unaudited++
				t.Errorf("run.log line without a journal entry: %s", line)
			}
		}
	}
	// Nothing is left over.
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && atomicfile.IsTemp(d.Name()) {
			n.leftovers++
			t.Errorf("left over: %s", path)
		}
		return nil
	})
	if pending, _, _ := journal.Pending(o.JournalPath, ""); len(pending) > 0 {
		n.leftovers += len(pending)
		t.Errorf("%d intents still pending after recovery", len(pending))
	}
	if held, err := os.ReadFile(c.lock); err == nil && strings.Contains(string(held), `"tool": "runwatch"`) {
		n.leftovers++
		t.Errorf("runwatch's own lock is still held after recovery: %s", held)
	}
	summary, _ := json.Marshal(map[string]int{"kills": n.kills, "applied": n.applied, "refused": n.refused, "warned": n.warned,
		"kills_at_journal_append": n.appendKills, "torn_journal_lines": n.tornLines, "unparseable_lines_reused": n.reused,
		"torn": n.torn, "lost_updates": n.lost, "unaudited": n.unaudited, "leftovers": n.leftovers,
		"lock_takeovers": n.lockTakeovers, "recovery_notes": n.recoveredNotes, "journal_entries": len(entries)})
	t.Logf("crash harness: %s", summary)
	t.Logf("refusals (expected ones: nothing to do in this state): %v", refusals)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// assertNoStrayState: the only runs found are the three real ones, and every other file under the run
// folders is a known file or one of our temp/quarantine names.
func assertNoStrayState(t *testing.T, root string) {
	t.Helper()
	locs, err := state.Discover([]string{root}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(locs) != 3 {
		t.Fatalf("Discover found %d runs, want 3: %+v", len(locs), locs)
	}
	known := map[string]bool{"state.env": true, "checklist.state.env": true, "run.log": true, "run.lock": true,
		"MANIFEST.yaml": true, "journal.jsonl": true, "reviewer-old.lock": true, "broken.lock": true}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		if filepath.Base(filepath.Dir(path)) == "pending" && (strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".tmp")) {
			return nil
		}
		if !known[name] && !atomicfile.IsTemp(name) {
			t.Errorf("unexpected file %s", path)
		}
		if atomicfile.IsTemp(name) && !strings.HasPrefix(name, ".") {
			t.Errorf("temp file %s is not hidden", path)
		}
		return nil
	})
}
