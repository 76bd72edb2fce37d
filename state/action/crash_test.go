package action

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"runwatch/state"
	"runwatch/state/atomicfile"
	"runwatch/state/envfile"
	"runwatch/state/yamledit"
)

const crashChildEnv = "RUNWATCH_ACTION_CRASH_CHILD"

// TestCrashChild is the child process of TestCrashConsistency: it applies actions to both runs under the
// root in $RUNWATCH_ACTION_CRASH_CHILD, forever, until it is killed. Before each apply it announces the
// SHA-256 of every file content it is about to write ("will <hash>"), so the parent knows every content a
// state file may legitimately hold.
func TestCrashChild(t *testing.T) {
	root := os.Getenv(crashChildEnv)
	if root == "" {
		t.Skip("helper process of TestCrashConsistency")
	}
	sp := filepath.Join(root, "reports", runName, "state.env")
	mp := filepath.Join(root, "proj", ".jonggrang", ".output", "features", "add-login-mlop4860", "MANIFEST.yaml")
	cp := filepath.Join(filepath.Dir(sp), "checklist.state.env")
	o := Options{User: "crash", JournalPath: filepath.Join(root, "journal.jsonl")}
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		o.Env = realEnv()
		var p *Plan
		var err error
		if i%2 == 0 {
			run := load(t, sp, o.Env)
			// A lock left by a killed predecessor is stale (its pid is gone): clear it as a person would.
			if p, err = PlanUnlock(run, "", o); err != nil {
				switch i / 2 % 4 {
				case 0, 2:
					p, err = PlanCheck(run, "CB_S3_VERIFY_GREEN", checklistValue(t, cp) != "1", o)
				case 1:
					p, err = PlanStep(run, o)
				case 3:
					p, err = PlanUndo(run, o)
				}
			}
		} else {
			run := load(t, mp, o.Env)
			switch i / 2 % 3 {
			case 0:
				if run.RawStatus == "paused" {
					p, err = PlanResume(run, o)
				} else {
					p, err = PlanPause(run, o)
				}
			case 1:
				p, err = PlanStep(run, o)
			case 2:
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
		if err != nil {
			fmt.Fprintf(out, "refused %v\n", oneLine(err.Error(), 200))
		} else {
			fmt.Fprintln(out, "applied", p.Action)
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

// TestCrashConsistency SIGKILLs a child applying actions (check, step, undo, unlock, pause, resume) at
// random points, 200 times, and checks after every kill that each state file parses and holds either a
// content it held before or one the child announced it was about to write (old or new, never torn), and
// that no temp file can be taken for state.
func TestCrashConsistency(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in the child")
	}
	root := t.TempDir()
	sp := makeResumable(t, root)
	mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
	cp := filepath.Join(filepath.Dir(sp), "checklist.state.env")
	valid := map[string]bool{}
	for _, p := range []string{sp, cp, mp} {
		valid[atomicfile.Hash([]byte(mustRead(t, p)))] = true
	}
	kills, afterApply, lockLeft := 0, 0, 0
	changed := map[string]int{}
	outcomes := map[string]int{}
	rng := rand.New(rand.NewPCG(1, 2))
	for kills < 200 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+root)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		announced := []string{}
		first := make(chan struct{})
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			sc := bufio.NewScanner(stdout)
			once := sync.Once{}
			for sc.Scan() {
				line := sc.Text()
				if h, ok := strings.CutPrefix(line, "will "); ok {
					mu.Lock()
					announced = append(announced, h)
					mu.Unlock()
				}
				if strings.HasPrefix(line, "applied") || strings.HasPrefix(line, "refused") {
					mu.Lock()
					outcomes[strings.Fields(line)[0]]++
					mu.Unlock()
					once.Do(func() { close(first) })
				}
			}
		}()
		// Wait until the child is in its loop, then kill it a random moment later: mostly mid-action.
		select {
		case <-first:
			afterApply++
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-drained
			cmd.Wait()
			t.Fatal("child never finished an action")
		}
		time.Sleep(time.Duration(rng.IntN(5000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		<-drained
		cmd.Wait()
		kills++
		mu.Lock()
		for _, h := range announced {
			valid[h] = true
		}
		mu.Unlock()

		for _, p := range []string{sp, cp, mp} {
			data := mustRead(t, p)
			h := atomicfile.Hash([]byte(data))
			if !valid[h] {
				t.Fatalf("kill %d: %s holds content that was never whole (neither old nor new):\n%s", kills, p, data)
			}
			changed[filepath.Base(p)+" "+h] = 1
		}
		if _, err := yamledit.Parse([]byte(mustRead(t, mp))); err != nil {
			t.Fatalf("kill %d: MANIFEST.yaml does not parse: %v", kills, err)
		}
		for _, p := range []string{sp, cp} {
			if _, err := envfile.Parse([]byte(mustRead(t, p))); err != nil {
				t.Fatalf("kill %d: %s does not parse: %v", kills, p, err)
			}
		}
		for _, line := range strings.SplitAfter(mustRead(t, filepath.Join(filepath.Dir(sp), "run.log")), "\n") {
			if line != "" && (!strings.HasSuffix(line, "\n") || !strings.HasPrefix(line, "[") && !strings.HasPrefix(line, "  ")) {
				t.Fatalf("kill %d: run.log has a torn line %q", kills, line)
			}
		}
		assertNoStrayState(t, root)
		if _, err := os.Stat(filepath.Join(filepath.Dir(sp), "run.lock")); err == nil {
			lockLeft++
		}
	}
	temps := 0
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && (atomicfile.IsTemp(d.Name()) || strings.Contains(d.Name(), ".claimed-")) {
			temps++
		}
		return nil
	})
	// Evidence the kills landed inside actions: run locks left held, temp files left mid-write, and the
	// number of distinct whole contents seen across the three files.
	t.Logf("%d kills (%d after the child finished an action; %d actions applied, %d refused in all): run lock left held %d times, %d temp/quarantine files left, %d distinct file contents seen",
		kills, afterApply, outcomes["applied"], outcomes["refused"], lockLeft, temps, len(changed))
}

// assertNoStrayState: the only runs found are the two real ones, and every other file under the run
// folders is a known file or one of our temp/quarantine names.
func assertNoStrayState(t *testing.T, root string) {
	t.Helper()
	locs, err := state.Discover([]string{root}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(locs) != 2 {
		t.Fatalf("Discover found %d runs, want 2: %+v", len(locs), locs)
	}
	known := map[string]bool{"state.env": true, "checklist.state.env": true, "run.log": true, "run.lock": true,
		"MANIFEST.yaml": true, "journal.jsonl": true}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		if !known[name] && !atomicfile.IsTemp(name) && !strings.Contains(name, ".claimed-") {
			t.Errorf("unexpected file %s", path)
		}
		if atomicfile.IsTemp(name) && !strings.HasPrefix(name, ".") {
			t.Errorf("temp file %s is not hidden", path)
		}
		return nil
	})
}
