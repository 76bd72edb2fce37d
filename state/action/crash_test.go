package action

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
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
// root in $RUNWATCH_ACTION_CRASH_CHILD, forever, printing "applied" after each, until it is killed.
func TestCrashChild(t *testing.T) {
	root := os.Getenv(crashChildEnv)
	if root == "" {
		t.Skip("helper process of TestCrashConsistency")
	}
	sp := filepath.Join(root, "reports", runName, "state.env")
	mp := filepath.Join(root, "proj", ".jonggrang", ".output", "features", "add-login-mlop4860", "MANIFEST.yaml")
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
				cb := checklistValue(t, filepath.Join(filepath.Dir(sp), "checklist.state.env"))
				p, err = PlanCheck(run, "CB_S3_VERIFY_GREEN", cb != "1", o)
			}
		} else {
			run := load(t, mp, o.Env)
			if run.RawStatus == "paused" {
				p, err = PlanResume(run, o)
			} else {
				p, err = PlanPause(run, o)
			}
		}
		if err == nil {
			err = Apply(p, ApplyOptions{})
		}
		if err != nil {
			fmt.Fprintf(out, "refused %v\n", err)
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

var manifestVolatile = regexp.MustCompile(`(?m)^(status|updated_at): .*$`)

// TestCrashConsistency SIGKILLs a child applying actions at random points, 200 times, and checks after every
// kill that each state file is whole (old or new content, never torn) and that no temp file can be taken
// for state.
func TestCrashConsistency(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in the child")
	}
	root := t.TempDir()
	sp := makeResumable(t, root)
	mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
	cp := filepath.Join(filepath.Dir(sp), "checklist.state.env")
	wantManifest := manifestVolatile.ReplaceAllString(manifestPaused, "$1: X")
	checkOK := map[string]bool{
		checklistEnv: true,
		strings.Replace(checklistEnv, `CB_S3_VERIFY_GREEN="0"`, `CB_S3_VERIFY_GREEN="1"`, 1): true,
	}
	kills, midAction, lockLeft := 0, 0, 0
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
		// Wait for the child to be in its loop, then kill it a random moment later: mostly mid-action.
		sc := bufio.NewScanner(stdout)
		ready := make(chan string, 1)
		go func() {
			for sc.Scan() {
				select {
				case ready <- sc.Text():
				default:
				}
			}
		}()
		select {
		case line := <-ready:
			if strings.HasPrefix(line, "applied") {
				midAction++
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("child never applied an action")
		}
		time.Sleep(time.Duration(rng.IntN(4000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		kills++

		if got := mustRead(t, sp); got != stateEnv {
			t.Fatalf("kill %d: state.env changed (no action here edits it):\n%s", kills, got)
		}
		if got := mustRead(t, cp); !checkOK[got] {
			t.Fatalf("kill %d: checklist.state.env is neither old nor new:\n%q", kills, got)
		}
		m := mustRead(t, mp)
		if _, err := yamledit.Parse([]byte(m)); err != nil {
			t.Fatalf("kill %d: MANIFEST.yaml does not parse: %v\n%s", kills, err, m)
		}
		if manifestVolatile.ReplaceAllString(m, "$1: X") != wantManifest || !regexp.MustCompile(`(?m)^status: (paused|running)$`).MatchString(m) {
			t.Fatalf("kill %d: MANIFEST.yaml is neither old nor new:\n%s", kills, m)
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
	// Evidence the kills landed inside actions: run locks left held, temp files left mid-write.
	t.Logf("%d kills (%d after the child applied an action): run lock left held %d times, %d temp/quarantine files left", kills, midAction, lockLeft, temps)
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
