package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The mining tool's LOCK_FILE is <run>/lock/active.lock and lock/ exists only while a lock does. runwatch's
// lock must go where that tool looks (creating lock/ as the tool does), never beside it in the run folder,
// and the folder it made is taken back after. Both spellings of LOCK_FILE a run folder carries are covered:
// as written on this machine, and as written on another machine (the folder was copied or synced here).
func TestRunLockGoesWhereTheWriterLooksWhenItsFolderIsMissing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		lockFile func(runDir string) string
	}{
		{"written here", func(runDir string) string { return filepath.Join(runDir, "lock", "active.lock") }},
		{"written on another machine", func(string) string {
			return "/home/someone/.config/opencode/reports/" + runName + "/lock/active.lock"
		}},
		{"relative", func(string) string { return "lock/active.lock" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			sp := makeResumable(t, root)
			runDir := filepath.Dir(sp)
			want := filepath.Join(runDir, "lock", "active.lock")
			st := strings.Replace(stateEnv, `LOCK_FILE="/cfg/reports/irm-backfill-20260215T014733Z/run.lock"`,
				`LOCK_FILE="`+tc.lockFile(runDir)+`"`, 1)
			mustWrite(t, sp, st)
			o := opts(t, fixedEnv())
			p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
			if err != nil {
				t.Fatal(err)
			}
			realWant, _ := filepath.EvalSymlinks(runDir)
			realWant = filepath.Join(realWant, "lock", "active.lock")
			if p.LockPath != realWant {
				t.Fatalf("lock planned at %s, want %s (where the writer looks)", p.LockPath, realWant)
			}
			if pv := p.Preview(); !strings.Contains(pv, "creating its folder") {
				t.Errorf("the preview does not say the lock's folder is created:\n%s", pv)
			}
			var heldAt []string
			p.opts.Seams.locked = func(p *Plan) {
				for _, c := range []string{want, filepath.Join(runDir, "active.lock")} {
					if _, err := os.Stat(c); err == nil {
						heldAt = append(heldAt, c)
					}
				}
			}
			if err := Apply(p, ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			if len(heldAt) != 1 || heldAt[0] != want {
				t.Fatalf("while applying, locks existed at %v; want exactly %s", heldAt, want)
			}
			if _, err := os.Stat(filepath.Join(runDir, "lock")); !os.IsNotExist(err) {
				t.Fatalf("the lock folder runwatch created is still there after the action (%v)", err)
			}
			if !strings.Contains(mustRead(t, filepath.Join(runDir, "checklist.state.env")), `CB_S3_VERIFY_GREEN="1"`) {
				t.Fatal("the tick was not written")
			}
		})
	}
}

// A folder runwatch did not create is never removed, and one the writer has put its own file in since is
// left to it.
func TestRunLockKeepsFoldersItDidNotMakeOrThatFilledUp(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sp := makeResumable(t, root)
	runDir := filepath.Dir(sp)
	mustWrite(t, sp, strings.Replace(stateEnv, "/cfg/reports/irm-backfill-20260215T014733Z/run.lock", filepath.Join(runDir, "lock", "active.lock"), 1))
	o := opts(t, fixedEnv())

	// The writer drops a file into the folder while runwatch holds the lock: the folder stays.
	p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
	if err != nil {
		t.Fatal(err)
	}
	note := filepath.Join(runDir, "lock", "writer-note")
	p.opts.Seams.locked = func(*Plan) { mustWrite(t, note, "mine\n") }
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if mustRead(t, note) != "mine\n" {
		t.Fatal("the writer's file in the lock folder was touched")
	}

	// The folder exists before the action: it is nobody's to remove.
	if err := os.Remove(note); err != nil {
		t.Fatal(err)
	}
	p, err = PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", false, o)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.Preview(), "creating its folder") {
		t.Errorf("the preview offers to create a folder that exists:\n%s", p.Preview())
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(runDir, "lock")); err != nil || !fi.IsDir() {
		t.Fatalf("a lock folder that existed before the action was removed (%v)", err)
	}
}

// A file or a link where the lock's folder should be refuses the action before anything is written, and
// nothing is created through the link.
func TestRunLockFolderThatIsNotAFolderRefuses(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"file", "symlink"} {
		t.Run(kind, func(t *testing.T) {
			root := t.TempDir()
			sp := makeResumable(t, root)
			runDir := filepath.Dir(sp)
			mustWrite(t, sp, strings.Replace(stateEnv, "/cfg/reports/irm-backfill-20260215T014733Z/run.lock", filepath.Join(runDir, "lock", "sub", "active.lock"), 1))
			o := opts(t, fixedEnv())
			p, err := PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
			if err != nil {
				t.Fatal(err)
			}
			outside := t.TempDir()
			switch kind {
			case "file":
				mustWrite(t, filepath.Join(runDir, "lock"), "not a folder\n")
			case "symlink":
				if err := os.Symlink(outside, filepath.Join(runDir, "lock")); err != nil {
					t.Fatal(err)
				}
			}
			before := mustRead(t, filepath.Join(runDir, "checklist.state.env"))
			if err := Apply(p, ApplyOptions{}); err == nil {
				t.Fatal("applied with the lock's folder replaced by a " + kind)
			}
			if mustRead(t, filepath.Join(runDir, "checklist.state.env")) != before {
				t.Fatal("the checklist changed although the lock could not be taken")
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Fatalf("created %v through the link", entries)
			}
		})
	}
}
