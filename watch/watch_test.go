package watch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
)

// reportsRoot makes <tmp>/reports with one resumable run at stage S1 and returns the root and the run.
func reportsRoot(t *testing.T) (root, runDir, statePath string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "reports")
	runDir = filepath.Join(root, "irm-20260215T014733Z")
	statePath = makeResumableRun(t, runDir, "S1")
	return root, runDir, statePath
}

func TestSnapshotHoldsEveryRunBeforeAnyUpdate(t *testing.T) {
	root, _, sp := reportsRoot(t)
	other := makeResumableRun(t, filepath.Join(root, "second-20260216T000000Z"), "S2")
	v := newView(t, Options{Paths: []string{root}})
	snap := v.w.Snapshot()
	if len(snap) != 2 || snap[0].StatePath != sp || snap[1].StatePath != other {
		t.Fatalf("snapshot = %v, want %s and %s in StatePath order", statePaths(snap), sp, other)
	}
	if snap[0].CurrentStage != "S1" || snap[1].CurrentStage != "S2" {
		t.Fatalf("stages %q %q, want S1 S2", snap[0].CurrentStage, snap[1].CurrentStage)
	}
	if h := v.w.Health(); h.Mode != "inotify" || h.Watches == 0 {
		t.Fatalf("health %+v, want inotify with watches", h)
	}
}

func TestAtomicReplaceViaRename(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	replaceAtomically(t, sp, resumableState(runDir, "S2"))
	v.until("CURRENT_STAGE S2 after temp+rename", func() bool {
		r, ok := v.run(sp)
		return ok && r.CurrentStage == "S2"
	})
	if v.removed[sp] != 0 {
		t.Fatalf("an atomic replace reported the run as removed")
	}
	// The watch on the folder survives the replace: a second one is seen too.
	replaceAtomically(t, sp, resumableState(runDir, "S3"))
	v.until("CURRENT_STAGE S3 after a second replace", func() bool {
		r, _ := v.run(sp)
		return r.CurrentStage == "S3"
	})
}

func TestInPlaceRewrite(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	f, err := os.OpenFile(sp, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Truncate, then write in two pieces, as a non-atomic writer does.
	content := resumableState(runDir, "S2")
	if _, err := f.WriteString(content[:10]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content[10:]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	v.until("CURRENT_STAGE S2 after an in-place rewrite", func() bool {
		r, _ := v.run(sp)
		return r.CurrentStage == "S2" && !hasProblem(r, model.CodeStateUnparsable)
	})
}

func TestEditorStyleSave(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	// vim with backupcopy=no: probe file, rename the original to a backup, write a new file, drop the backup.
	probe := filepath.Join(runDir, "4913")
	writeFile(t, probe, "")
	if err := os.Remove(probe); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(sp, sp+"~"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(runDir, ".state.env.swp"), "swap")
	writeFile(t, sp, resumableState(runDir, "S2"))
	if err := os.Remove(sp + "~"); err != nil {
		t.Fatal(err)
	}
	v.until("CURRENT_STAGE S2 after an editor save", func() bool {
		r, ok := v.run(sp)
		return ok && r.CurrentStage == "S2"
	})
}

func TestMkdirPAndWriteInOneGo(t *testing.T) {
	root, _, _ := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	// mkdir -p run/lock && write: the files land before any watch on the new folders can exist.
	runDir := filepath.Join(root, "fresh-20260301T000000Z")
	if err := os.MkdirAll(filepath.Join(runDir, "lock"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(runDir, "lock", "active.lock"), lockPayload())
	sp := makeResumableRun(t, runDir, "S2")
	v.until("the new run, with its lock", func() bool {
		r, ok := v.run(sp)
		return ok && r.CurrentStage == "S2" && len(r.Locks) == 1
	})
	// Its lock folder is watched: the lock going away is seen.
	if err := os.Remove(filepath.Join(runDir, "lock", "active.lock")); err != nil {
		t.Fatal(err)
	}
	v.until("the lock to go", func() bool {
		r, _ := v.run(sp)
		return len(r.Locks) == 0
	})
}

func TestLockCreatedAndDeleted(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	lock := filepath.Join(runDir, "lock", "active.lock")
	writeFile(t, lock, lockPayload()) // lock/ did not exist: the folder and the file appear together
	v.until("a live lock", func() bool {
		r, _ := v.run(sp)
		return len(r.Locks) == 1 && r.Locks[0].Verdict == model.VerdictLive && r.Status == model.StatusRunning
	})
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	v.until("no lock", func() bool {
		r, _ := v.run(sp)
		return len(r.Locks) == 0 && r.Status != model.StatusRunning
	})
	// Created again, then the whole lock folder removed.
	writeFile(t, lock, lockPayload())
	v.until("the lock back", func() bool {
		r, _ := v.run(sp)
		return len(r.Locks) == 1
	})
	if err := os.RemoveAll(filepath.Dir(lock)); err != nil {
		t.Fatal(err)
	}
	v.until("no lock after rm -r lock/", func() bool {
		r, _ := v.run(sp)
		return len(r.Locks) == 0
	})
}

func TestLockOutsideTheRunFolder(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "reports")
	runDir := filepath.Join(root, "fls-20260215T000000Z")
	sp := makeResumableRun(t, runDir, "S1")
	lock := filepath.Join(base, "locks", "fls.lock")
	writeFile(t, sp, strings.Replace(resumableState(runDir, "S1"), filepath.Join(runDir, "lock", "active.lock"), lock, 1))
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	v := newView(t, Options{Paths: []string{root}})
	writeFile(t, lock, lockPayload())
	v.until("the lock outside the run folder", func() bool {
		r, _ := v.run(sp)
		return len(r.Locks) == 1
	})
}

func TestLogAppendedTenThousandTimes(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	logPath := filepath.Join(runDir, "run.log")
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const n = 10000
	for i := 1; i <= n; i++ {
		if _, err := fmt.Fprintf(f, "[2026-02-15T02:00:00Z] tick n=%05d\n", i); err != nil {
			t.Fatal(err)
		}
	}
	v.until("10,000 appended entries", func() bool { return len(v.logs[logPath]) >= n })
	got := v.logs[logPath]
	if len(got) != n {
		t.Fatalf("got %d entries, want exactly %d", len(got), n)
	}
	for i, e := range got {
		if want := fmt.Sprintf("tick n=%05d", i+1); e.Message != want {
			t.Fatalf("entry %d is %q, want %q (lost, repeated or reordered)", i, e.Message, want)
		}
	}
	if _, ok := v.run(sp); !ok {
		t.Fatal("run vanished")
	}
}

func TestLogTruncated(t *testing.T) {
	root, runDir, _ := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	logPath := filepath.Join(runDir, "run.log")
	appendLine(t, logPath, "[2026-02-15T02:00:00Z] before truncation\n")
	v.until("the first append", func() bool { return len(v.logs[logPath]) == 1 })
	if err := os.Truncate(logPath, 0); err != nil {
		t.Fatal(err)
	}
	appendLine(t, logPath, "[2026-02-15T03:00:00Z] after truncation\n")
	v.until("the line after truncation, flagged", func() bool {
		l := v.logs[logPath]
		return v.resets[logPath] > 0 && len(l) > 0 && l[len(l)-1].Message == "after truncation"
	})
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRunRootDeletedAndRecreated(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	if err := os.RemoveAll(runDir); err != nil {
		t.Fatal(err)
	}
	v.until("the run removed", func() bool { _, ok := v.run(sp); return !ok && v.removed[sp] == 1 })
	makeResumableRun(t, runDir, "S3")
	v.until("the run back at S3", func() bool {
		r, ok := v.run(sp)
		return ok && r.CurrentStage == "S3"
	})
	// The recreated folder is watched again.
	replaceAtomically(t, sp, resumableState(runDir, "S2"))
	v.until("a change in the recreated folder", func() bool {
		r, _ := v.run(sp)
		return r.CurrentStage == "S2"
	})
}

func TestRunFolderRenamedAway(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	archived := runDir + ".reset-20260215T221903Z"
	if err := os.Rename(runDir, archived); err != nil {
		t.Fatal(err)
	}
	newSP := filepath.Join(archived, "state.env")
	v.until("the live run gone and the archived one listed", func() bool {
		_, live := v.run(sp)
		r, ok := v.run(newSP)
		return !live && ok && r.Archived
	})
	// The folder is watched in its new place: the kernel keeps a moved folder's watch until it says the
	// folder moved, so the watch under the new path must not be taken for the old one's.
	replaceAtomically(t, newSP, resumableState(archived, "S3"))
	v.until("a change in the renamed folder", func() bool {
		r, _ := v.run(newSP)
		return r.CurrentStage == "S3"
	})
}

func TestNewRunRootUnderWatchedPath(t *testing.T) {
	base := t.TempDir()
	v := newView(t, Options{Paths: []string{base}})
	if len(v.runs) != 0 {
		t.Fatalf("empty root has runs: %v", v.dump())
	}
	// A whole reports tree and then a jonggrang project appear under the watched path.
	sp := makeResumableRun(t, filepath.Join(base, "cfg", "reports", "new-20260301T000000Z"), "S1")
	v.until("the new resumable run", func() bool { _, ok := v.run(sp); return ok })
	feature := filepath.Join(base, "app", ".jonggrang", ".output", "features", "add-login-mlop4860")
	writeFile(t, filepath.Join(feature, "MANIFEST.yaml"), manifest("add-login-mlop4860", 2))
	msp := filepath.Join(feature, "MANIFEST.yaml")
	v.until("the new jonggrang run", func() bool {
		r, ok := v.run(msp)
		return ok && r.CurrentStage == "2"
	})
}

func TestJonggrangManifestRewrittenInPlaceAndProjectLocks(t *testing.T) {
	project := t.TempDir()
	features := filepath.Join(project, ".jonggrang", ".output", "features")
	a := filepath.Join(features, "feat-a-mlop0001", "MANIFEST.yaml")
	b := filepath.Join(features, "feat-b-mlop0002", "MANIFEST.yaml")
	writeFile(t, a, manifest("feat-a-mlop0001", 2))
	writeFile(t, b, manifest("feat-b-mlop0002", 3))
	v := newView(t, Options{Paths: []string{project}})

	// A half-written manifest (writeFileSync without temp file), completed a moment later.
	full := manifest("feat-a-mlop0001", 3)
	f, err := os.OpenFile(a, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(full[:len(full)/2]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // lets the watcher read the torn file; correctness does not depend on it
	if _, err := f.WriteString(full[len(full)/2:]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	v.until("feature a at phase 3 with no parse problem", func() bool {
		r, _ := v.run(a)
		return r.CurrentStage == "3" && !hasProblem(r, model.CodeManifestUnparsable)
	})

	// A project-level lock belongs to every feature run of the project.
	lock := filepath.Join(project, ".jonggrang", "locks", "developer-auth-001.lock")
	writeFile(t, lock, fmt.Sprintf(`{"agent_id": "developer-auth-001", "files": ["src/auth.ts"], "acquired_at": %q, "pid": %d}`,
		time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), os.Getpid()))
	v.until("both features to see the project lock", func() bool {
		ra, rb := v.runs[a], v.runs[b]
		return len(ra.Locks) == 1 && len(rb.Locks) == 1
	})
}

func TestHalfWrittenManifestIsReadAgain(t *testing.T) {
	project := t.TempDir()
	a := filepath.Join(project, ".jonggrang", ".output", "features", "feat-a-mlop0001", "MANIFEST.yaml")
	writeFile(t, a, manifest("feat-a-mlop0001", 2))
	v := newView(t, Options{Paths: []string{project}})
	// Torn, and nothing more is written: the follow-up read reports the problem rather than hiding it.
	full := manifest("feat-a-mlop0001", 3)
	writeFile(t, a, full[:len(full)/3]+"\n  '9': [unclosed\n")
	v.until("the torn manifest reported after the follow-up read", func() bool {
		r, _ := v.run(a)
		return hasProblem(r, model.CodeManifestUnparsable)
	})
	writeFile(t, a, full)
	v.until("the repaired manifest", func() bool {
		r, _ := v.run(a)
		return r.CurrentStage == "3" && !hasProblem(r, model.CodeManifestUnparsable)
	})
}

func statePaths(runs []model.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.StatePath)
	}
	return out
}

func TestLogRotated(t *testing.T) {
	root, runDir, _ := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	logPath := filepath.Join(runDir, "run.log")
	appendLine(t, logPath, "[2026-02-15T02:00:00Z] last line of the old log\n")
	v.until("the old log's line", func() bool { return len(v.logs[logPath]) == 1 })
	if err := os.Rename(logPath, logPath+".1"); err != nil {
		t.Fatal(err)
	}
	appendLine(t, logPath, "[2026-02-15T03:00:00Z] first line of the new log\n")
	v.until("the new log's line, flagged as a rotation", func() bool {
		l := v.logs[logPath]
		return v.resets[logPath] > 0 && l[len(l)-1].Message == "first line of the new log"
	})
}

func TestFeaturesFolderGivenAsThePath(t *testing.T) {
	project := t.TempDir()
	features := filepath.Join(project, ".jonggrang", ".output", "features")
	if err := os.MkdirAll(features, 0o755); err != nil {
		t.Fatal(err)
	}
	v := newView(t, Options{Paths: []string{features}})
	msp := filepath.Join(features, "late-mlop0003", "MANIFEST.yaml")
	writeFile(t, msp, manifest("late-mlop0003", 1))
	v.until("a feature created under the given features folder", func() bool {
		r, ok := v.run(msp)
		return ok && r.CurrentStage == "1"
	})
}

func TestWorktreeCopyOfARunningGroupIsFollowed(t *testing.T) {
	project := t.TempDir()
	worktree := t.TempDir()
	fid := "par-feat-mlop0004"
	rel := filepath.Join(".jonggrang", ".output", "features", fid, "MANIFEST.yaml")
	main, live := filepath.Join(project, rel), filepath.Join(worktree, rel)
	writeFile(t, main, manifest(fid, 1))
	writeFile(t, live, manifest(fid, 2))
	// A group of this feature running in the worktree, its worker being this (live) test process.
	writeFile(t, filepath.Join(project, ".jonggrang", ".ephemeral", "orchestration-run.json"),
		fmt.Sprintf(`{"status": "running", "groups": [{"feature_id": %q, "title": "par", "status": "running", "worktree_path": %q, "pid": %d}]}`,
			fid, worktree, os.Getpid()))
	v := newView(t, Options{Paths: []string{project}})
	if r, _ := v.run(main); r.CurrentStage != "2" {
		t.Fatalf("current stage %q, want 2 from the worktree's live copy", r.CurrentStage)
	}
	writeFile(t, live, manifest(fid, 3)) // the worker writes only in its worktree
	v.until("the worktree copy's change", func() bool { r, _ := v.run(main); return r.CurrentStage == "3" })
}

func TestFolderOfRunsRenamedAway(t *testing.T) {
	for _, poll := range []time.Duration{0, 20 * time.Millisecond} {
		t.Run(fmt.Sprintf("poll=%s", poll), func(t *testing.T) {
			base := t.TempDir()
			reports := filepath.Join(base, "cfg", "reports")
			a := makeResumableRun(t, filepath.Join(reports, "a-20260301T000000Z"), "S1")
			b := makeResumableRun(t, filepath.Join(reports, "b-20260301T000000Z"), "S2")
			v := newView(t, Options{Paths: []string{base}, Poll: poll})
			if len(v.runs) != 2 {
				t.Fatalf("runs at start: %s", v.dump())
			}
			// One rename event for the parent; nothing is said about the runs inside it.
			elsewhere := filepath.Join(t.TempDir(), "elsewhere")
			if err := os.Rename(filepath.Join(base, "cfg"), elsewhere); err != nil {
				t.Fatal(err)
			}
			v.until("both runs removed", func() bool { return v.removed[a] == 1 && v.removed[b] == 1 && len(v.runs) == 0 })
			// Moved back in: one create event for a whole tree that already holds runs.
			if err := os.Rename(elsewhere, filepath.Join(base, "cfg")); err != nil {
				t.Fatal(err)
			}
			v.until("both runs back", func() bool {
				ra, okA := v.run(a)
				rb, okB := v.run(b)
				return okA && okB && ra.CurrentStage == "S1" && rb.CurrentStage == "S2"
			})
			replaceAtomically(t, a, resumableState(filepath.Dir(a), "S3"))
			v.until("a change inside the moved-in tree", func() bool { r, _ := v.run(a); return r.CurrentStage == "S3" })
		})
	}
}

func TestStateFileGivenDirectly(t *testing.T) {
	_, runDir, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{sp}})
	if _, ok := v.run(sp); !ok || len(v.runs) != 1 {
		t.Fatalf("runs: %s", v.dump())
	}
	replaceAtomically(t, sp, resumableState(runDir, "S2"))
	v.until("the replace", func() bool { r, _ := v.run(sp); return r.CurrentStage == "S2" })
	if err := os.RemoveAll(runDir); err != nil {
		t.Fatal(err)
	}
	v.until("the run removed with its folder", func() bool { _, ok := v.run(sp); return !ok })
	makeResumableRun(t, runDir, "S3")
	v.until("the run back", func() bool { r, ok := v.run(sp); return ok && r.CurrentStage == "S3" })
}

func TestWatchedRootDeletedAndRecreated(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	v.until("the run removed with the root", func() bool { _, ok := v.run(sp); return !ok })
	makeResumableRun(t, runDir, "S2") // mkdir -p root/run && write
	v.until("the run back under the recreated root", func() bool { r, ok := v.run(sp); return ok && r.CurrentStage == "S2" })
	other := makeResumableRun(t, filepath.Join(root, "another-20260301T000000Z"), "S3")
	v.until("another new run in the recreated root", func() bool { _, ok := v.run(other); return ok })
}

func TestJetBrainsSafeWrite(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	// Write a temp copy, move the original aside, move the copy in, delete the original.
	writeFile(t, sp+"___jb_tmp___", resumableState(runDir, "S2"))
	if err := os.Rename(sp, sp+"___jb_old___"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(sp+"___jb_tmp___", sp); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(sp + "___jb_old___"); err != nil {
		t.Fatal(err)
	}
	v.until("CURRENT_STAGE S2 after a safe write", func() bool { r, ok := v.run(sp); return ok && r.CurrentStage == "S2" })
}

func TestStateFileGoneForAMomentKeepsTheRun(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	// A grace far longer than the gap below, so the outcome does not depend on scheduling.
	v := newView(t, Options{Paths: []string{root}, grace: time.Minute})
	if err := os.Rename(sp, sp+"~"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond) // let a batch see the file missing; the assertion does not depend on it
	writeFile(t, sp, resumableState(runDir, "S2"))
	v.until("the new content", func() bool { r, ok := v.run(sp); return ok && r.CurrentStage == "S2" })
	if v.removed[sp] != 0 {
		t.Fatal("the run was reported removed while its state file was being replaced")
	}
}

// A run folder whose state.env is deleted keeps its run.log: it is still a run, whose state is missing
// (docs/FORMATS.md C.1: folders travel without state.env), not a removed one.
func TestStateFileDeletedForGoodLeavesARunWithoutState(t *testing.T) {
	root, _, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}, grace: 20 * time.Millisecond})
	if err := os.Remove(sp); err != nil {
		t.Fatal(err)
	}
	v.until("the run turned into state-file-missing after the grace period", func() bool {
		r, ok := v.run(sp)
		if !ok {
			return false
		}
		for _, p := range r.Problems {
			if p.Code == model.CodeStateMissing {
				return true
			}
		}
		return false
	})
	if v.removed[sp] != 0 {
		t.Fatalf("run-removed was reported %d times for a folder that is still a run", v.removed[sp])
	}
}

// Without a run.log or checkpoints nothing of the run is left once its state.env goes: it is removed.
func TestStateFileDeletedForGoodRemovesABareRun(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	if err := os.Remove(filepath.Join(runDir, "run.log")); err != nil {
		t.Fatal(err)
	}
	v := newView(t, Options{Paths: []string{root}, grace: 20 * time.Millisecond})
	if err := os.Remove(sp); err != nil {
		t.Fatal(err)
	}
	v.until("the run removed after the grace period", func() bool { _, ok := v.run(sp); return !ok && v.removed[sp] == 1 })
}

func TestNamedStateFilesShareAFolder(t *testing.T) {
	root := filepath.Join(t.TempDir(), "reports")
	a, b := filepath.Join(root, "recovery.state.env"), filepath.Join(root, "remediation.state.env")
	writeFile(t, a, resumableState(root, "S1"))
	writeFile(t, b, resumableState(root, "S1"))
	writeFile(t, filepath.Join(root, "recovery.log"), "[2026-02-15T01:50:43Z] run bootstrapped\n")
	v := newView(t, Options{Paths: []string{root}})
	if len(v.runs) != 2 {
		t.Fatalf("runs: %s", v.dump())
	}
	replaceAtomically(t, a, resumableState(root, "S2"))
	appendLine(t, filepath.Join(root, "recovery.log"), "[2026-02-15T02:00:00Z] next\n")
	v.until("recovery at S2 with its log line, remediation untouched", func() bool {
		ra, _ := v.run(a)
		rb, _ := v.run(b)
		return ra.CurrentStage == "S2" && rb.CurrentStage == "S1" && len(v.logs[filepath.Join(root, "recovery.log")]) == 1
	})
	c := filepath.Join(root, "third.state.env")
	writeFile(t, c, resumableState(root, "S3"))
	v.until("a third state file in the same folder", func() bool { r, ok := v.run(c); return ok && r.CurrentStage == "S3" })
}

func TestJonggrangEphemeralGateReachesEveryFeature(t *testing.T) {
	project := t.TempDir()
	features := filepath.Join(project, ".jonggrang", ".output", "features")
	a := filepath.Join(features, "feat-a-mlop0001", "MANIFEST.yaml")
	b := filepath.Join(features, "feat-b-mlop0002", "MANIFEST.yaml")
	writeFile(t, a, manifest("feat-a-mlop0001", 2))
	writeFile(t, b, manifest("feat-b-mlop0002", 3))
	v := newView(t, Options{Paths: []string{project}})
	// .ephemeral/ does not exist yet: the folder and the gate file appear together.
	writeFile(t, filepath.Join(project, ".jonggrang", ".ephemeral", "feedback-loop-state.json"),
		`{"active":true,"iteration":2,"modified_domains":["backend"],"domain_phases":{"backend":{"review":{"status":"PENDING","agent":null,"timestamp":null},"testing":{"status":"FAIL","agent":"tester","timestamp":"2026-02-16T05:25:00.000Z"}}},"dirty_bit":true,"last_outputs":[],"stuck_count":4}`)
	blocked := func(r model.Run) bool {
		return r.Jonggrang != nil && r.Jonggrang.Feedback != nil && r.Jonggrang.Feedback.Blocked
	}
	v.until("both features to show the blocked feedback gate", func() bool { return blocked(v.runs[a]) && blocked(v.runs[b]) })
}

// An agent that crashes leaves its lock file as it was: no file event will ever arrive. The run must still
// stop showing as running, within a liveness interval.
func TestLockHolderDeathIsSeenWithoutAnyFileChange(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	host, _ := os.Hostname()
	writeFile(t, filepath.Join(runDir, "lock", "active.lock"), fmt.Sprintf(
		`{"acquired_at_utc": %q, "host": %q, "pid": %d, "run_id": "20260215T014733Z", "user": "u"}`+"\n",
		time.Now().UTC().Format(time.RFC3339), host, holder.Process.Pid)) // taken after the holder started, as real holders do

	v := newView(t, Options{Paths: []string{root}, liveness: 50 * time.Millisecond})
	v.until("the live holder", func() bool {
		r, _ := v.run(sp)
		return len(r.Locks) == 1 && r.Locks[0].Verdict == model.VerdictLive && r.Status == model.StatusRunning
	})
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	v.until("the dead holder's lock judged stale", func() bool {
		r, _ := v.run(sp)
		return len(r.Locks) == 1 && r.Locks[0].Verdict == model.VerdictStale && r.Status != model.StatusRunning
	})
}

// The liveness timer runs only while some run holds a verdict time can change; a lock taken after the
// watcher started (with no such run, so no timer) must start it, or a crash of its holder is never seen.
func TestLockTakenWhileWatchingStartsTheLivenessCheck(t *testing.T) {
	root, runDir, sp := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}, liveness: 50 * time.Millisecond})
	v.until("the run without a lock", func() bool { r, ok := v.run(sp); return ok && len(r.Locks) == 0 })
	time.Sleep(150 * time.Millisecond) // three liveness intervals with nothing to judge: the timer stops

	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	host, _ := os.Hostname()
	writeFile(t, filepath.Join(runDir, "lock", "active.lock"), fmt.Sprintf(
		`{"acquired_at_utc": %q, "host": %q, "pid": %d, "run_id": "20260215T014733Z", "user": "u"}`+"\n",
		time.Now().UTC().Format(time.RFC3339), host, holder.Process.Pid))
	v.until("the live holder", func() bool {
		r, _ := v.run(sp)
		return len(r.Locks) == 1 && r.Locks[0].Verdict == model.VerdictLive
	})
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	v.until("the dead holder's lock judged stale", func() bool {
		r, _ := v.run(sp)
		return len(r.Locks) == 1 && r.Locks[0].Verdict == model.VerdictStale
	})
}

// TestPlanOutsideTheRunFolder: a run whose stage order only its plan settles (PLAN_PATH, in the repository,
// under no root) is read again when the plan is edited, as its lock outside the run folder is; with inotify
// and with stat polling.
func TestPlanOutsideTheRunFolder(t *testing.T) {
	for _, poll := range []time.Duration{0, 20 * time.Millisecond} {
		t.Run(fmt.Sprintf("poll=%s", poll), func(t *testing.T) { planOutsideTheRunFolder(t, poll) })
	}
}

func planOutsideTheRunFolder(t *testing.T, poll time.Duration) {
	base := t.TempDir()
	root := filepath.Join(base, "reports")
	runDir := filepath.Join(root, "iso26262-mining-20260306T090000Z")
	plan := filepath.Join(base, "repo", "plans", "p.md")
	writeFile(t, plan, "# Plan\n\n- Run stages in order (`ingest -> extract -> normalize -> anchor -> publish -> verify -> finalize`)\n")
	writeFile(t, filepath.Join(runDir, "checklist.state.env"), "CB_ANCHOR_LINKS_WRITTEN=\"1\"\n")
	writeFile(t, filepath.Join(runDir, "run.log"), "[2026-03-06T09:00:00Z] run_bootstrap mode=kickoff-new\n")
	sp := filepath.Join(runDir, "state.env")
	writeFile(t, sp, fmt.Sprintf(`CURRENT_STAGE="anchor"
PLAN_PATH=%q
RUN_ID="20260306T090000Z"
S_ANCHOR_DONE="0"
S_EXTRACT_DONE="1"
S_FINALIZE_DONE="0"
S_INGEST_DONE="1"
S_NORMALIZE_DONE="1"
S_PUBLISH_DONE="0"
S_VERIFY_DONE="0"
TASK_NAME="iso26262-mining"
`, plan))
	order := func(r model.Run) string {
		var keys []string
		for _, s := range r.Stages {
			keys = append(keys, s.Key)
		}
		return strings.Join(keys, ", ")
	}
	v := newView(t, Options{Paths: []string{root}, Poll: poll})
	v.until("the order from the plan", func() bool {
		r, ok := v.run(sp)
		return ok && r.Resumable != nil && r.Resumable.StageOrderSource == "plan" &&
			order(r) == "ingest, extract, normalize, anchor, publish, verify, finalize"
	})
	replaceAtomically(t, plan, "# Plan\n\n- Run stages in order (`ingest -> extract -> normalize -> anchor -> verify -> publish -> finalize`)\n")
	v.until("the order of the edited plan", func() bool {
		r, _ := v.run(sp)
		return order(r) == "ingest, extract, normalize, anchor, verify, publish, finalize"
	})
}

// Under a run's artifacts/ only the folders the reader opens are watched (issue 35): its evidence can be
// thousands of folders. A checkpoint written, or a ledger in a commits/ made later, is still seen, and a
// folder of runs that is itself named artifacts is watched whole.
func TestOnlyTheArtifactFoldersTheReaderOpensAreWatched(t *testing.T) {
	t.Parallel()
	root, runDir, sp := reportsRoot(t)
	writeFile(t, filepath.Join(runDir, "artifacts", "m0", "deep", "verify.log"), "ok\n")
	if err := os.MkdirAll(filepath.Join(runDir, "artifacts", "checkpoints"), 0o755); err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(t.TempDir(), "artifacts")
	other := makeResumableRun(t, filepath.Join(named, "second-20260216T000000Z"), "S2")
	v := newView(t, Options{Paths: []string{root, named}})
	// reports/, the run, its artifacts/ and checkpoints/; the folder named artifacts and the run in it.
	if h := v.w.Health(); h.Watches != 6 {
		t.Fatalf("%d watches, want 6: m0/ and m0/deep/ are not watched", h.Watches)
	}
	writeFile(t, filepath.Join(runDir, "artifacts", "checkpoints", "S1.done.json"),
		`{"stage": "S1", "status": "done", "timestamp_utc": "2026-02-15T02:00:00Z"}`)
	v.until("S1's checkpoint", func() bool {
		r, ok := v.run(sp)
		return ok && len(r.Stages) > 0 && r.Stages[0].Checkpoint != nil
	})
	writeFile(t, filepath.Join(runDir, "artifacts", "commits", "commit-ledger.json"),
		`{"entries": [{"stage_checkpoint": "C01-S1", "commit_sha": "abc1234", "subject": "S1"}]}`)
	v.until("the ledger in a new commits/", func() bool {
		r, ok := v.run(sp)
		return ok && r.Resumable != nil && len(r.Resumable.Ledger) == 1
	})
	replaceAtomically(t, other, resumableState(filepath.Dir(other), "S3"))
	v.until("the run in the folder named artifacts at S3", func() bool {
		r, ok := v.run(other)
		return ok && r.CurrentStage == "S3"
	})
}

// An idle run's log holds no follower: it is made when the log first changes (issue 35).
func TestALogIsFollowedOnlyOnceItChanges(t *testing.T) {
	root, runDir, _ := reportsRoot(t)
	v := newView(t, Options{Paths: []string{root}})
	logPath := filepath.Join(runDir, "run.log")
	followed := func() bool {
		resume := make(chan struct{}) // the loop must not touch its logs while they are looked at
		v.w.pause <- resume
		defer close(resume)
		lt, ok := v.w.logs[logPath]
		if !ok {
			t.Fatalf("%s is not followed", logPath)
		}
		return lt.f != nil
	}
	if followed() {
		t.Fatal("a log no change has touched has a follower")
	}
	appendLine(t, logPath, "[2026-02-15T02:00:00Z] first\n")
	v.until("the append", func() bool { return len(v.logs[logPath]) == 1 })
	if !followed() {
		t.Fatal("a log read has no follower")
	}
}
