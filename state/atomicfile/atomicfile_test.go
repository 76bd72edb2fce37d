package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func openRoot(t *testing.T, dir string) *Root {
	t.Helper()
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// real is path under its resolved directory (t.TempDir may sit below a symlink).
func real(t *testing.T, path string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, filepath.Base(path))
}

func noTemps(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if IsTemp(e.Name()) || strings.Contains(e.Name(), ".claimed-") {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

func TestReplaceKeepsModeAndContent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := real(t, filepath.Join(dir, "state.env"))
	write(t, p, "A=\"1\"\n", 0o640)
	r := openRoot(t, dir)
	_, snap, err := r.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Replace(snap, []byte("A=\"2\"\n"), NewTempName("state.env")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "A=\"2\"\n" {
		t.Fatalf("content %q", got)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want 0640", fi.Mode().Perm())
	}
	noTemps(t, dir)
}

func TestReplaceRefusesWhenChanged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		mutate func(p string)
		detail string
	}{
		{"content", func(p string) { os.WriteFile(p, []byte("A=\"9\"\n"), 0o644) }, "modified at"},
		{"size", func(p string) { os.WriteFile(p, []byte("A=\"10\"\n"), 0o644) }, "size"},
		{"removed", func(p string) { os.Remove(p) }, "removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := real(t, filepath.Join(dir, "state.env"))
			write(t, p, "A=\"1\"\n", 0o644)
			r := openRoot(t, dir)
			_, snap, _ := r.Read(p)
			tc.mutate(p)
			before, _ := os.ReadFile(p)
			_, err := r.Replace(snap, []byte("A=\"2\"\n"), NewTempName("state.env"))
			var ce *ChangedError
			if !errors.As(err, &ce) || !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), tc.detail) {
				t.Fatalf("err = %v, want ChangedError mentioning %q", err, tc.detail)
			}
			after, _ := os.ReadFile(p)
			if string(before) != string(after) {
				t.Fatalf("file was touched: %q → %q", before, after)
			}
			noTemps(t, dir)
		})
	}
}

func TestReplaceCreateOnlyWhenStillAbsent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := real(t, filepath.Join(dir, "new.lock"))
	r := openRoot(t, dir)
	_, snap, err := r.Read(p)
	if err != nil || snap.Exists {
		t.Fatalf("snap %+v err %v", snap, err)
	}
	write(t, p, "theirs", 0o644)
	if _, err := r.Replace(snap, []byte("ours"), NewTempName("new.lock")); !errors.Is(err, ErrChanged) {
		t.Fatalf("err = %v", err)
	}
	if read(t, p) != "theirs" {
		t.Fatal("overwrote a file created meanwhile")
	}
	os.Remove(p)
	if _, err := r.Replace(snap, []byte("ours"), NewTempName("new.lock")); err != nil {
		t.Fatal(err)
	}
	if read(t, p) != "ours" {
		t.Fatal("not created")
	}
	noTemps(t, dir)
}

func TestReplaceFailureRemovesTemp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := real(t, filepath.Join(dir, "MANIFEST.yaml"))
	write(t, p, "a: 1\n", 0o644)
	r := openRoot(t, dir)
	_, snap, _ := r.Read(p)
	snap.SHA256 = Hash([]byte("something else")) // a precondition that can never hold
	if _, err := r.Replace(snap, []byte("a: 2\n"), NewTempName("MANIFEST.yaml")); !errors.Is(err, ErrChanged) {
		t.Fatalf("err = %v", err)
	}
	noTemps(t, dir)
}

func TestAppendNeverReplaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := real(t, filepath.Join(dir, "run.log"))
	write(t, p, "[2026-01-01T00:00:00Z] a\n", 0o644)
	r := openRoot(t, dir)
	f, err := os.Open(p) // a writer holding the old inode keeps seeing the appended bytes
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fiBefore, _ := f.Stat()
	if err := r.Append(p, []byte("[2026-01-01T00:00:01Z] b\n"), true); err != nil {
		t.Fatal(err)
	}
	fiAfter, _ := os.Stat(p)
	if !os.SameFile(fiBefore, fiAfter) {
		t.Fatal("run.log was replaced, not appended to")
	}
	if got := read(t, p); got != "[2026-01-01T00:00:00Z] a\n[2026-01-01T00:00:01Z] b\n" {
		t.Fatalf("got %q", got)
	}
}

func TestAppendRefusesSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere.log")
	write(t, target, "", 0o644)
	p := real(t, filepath.Join(dir, "run.log"))
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if err := openRoot(t, dir).Append(p, []byte("x\n"), true); err == nil {
		t.Fatal("appended through a symlink")
	}
	if read(t, target) != "" {
		t.Fatal("wrote through the symlink")
	}
}

func TestResolveRefusesSymlinkOutOfRoot(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	write(t, filepath.Join(outside, "state.env"), "A=1\n", 0o644)
	os.Symlink(filepath.Join(outside, "state.env"), filepath.Join(root, "state.env"))
	os.Symlink(outside, filepath.Join(root, "sub"))
	write(t, filepath.Join(root, "real.env"), "A=1\n", 0o644)
	os.Symlink("real.env", filepath.Join(root, "inside.env"))

	for _, p := range []string{filepath.Join(root, "state.env"), filepath.Join(root, "sub", "new.lock"), filepath.Join(root, "..", "x")} {
		var ue *UnsafePathError
		if _, err := Resolve(root, p); !errors.As(err, &ue) || !strings.Contains(err.Error(), "outside the run root") {
			t.Errorf("Resolve(%s) err = %v, want outside-root refusal", p, err)
		}
	}
	real, err := Resolve(root, filepath.Join(root, "inside.env"))
	if err != nil {
		t.Fatal(err)
	}
	wantRoot, _ := filepath.EvalSymlinks(root)
	if real != filepath.Join(wantRoot, "real.env") {
		t.Fatalf("resolved to %s", real)
	}
	dangling := filepath.Join(root, "dangling.lock")
	os.Symlink(filepath.Join(outside, "nope"), dangling)
	if _, err := Resolve(root, dangling); err == nil {
		t.Fatal("accepted a dangling symlink")
	}
}

func TestCheckOwner(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := real(t, filepath.Join(dir, "state.env"))
	write(t, p, "A=1\n", 0o644)
	r := openRoot(t, dir)
	if err := r.CheckFile(p, true, false); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() != 0 {
		t.Skip("making a file owned by another user needs root")
	}
	if err := os.Chown(p, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	var ue *UnsafePathError
	if err := r.CheckFile(p, true, false); !errors.As(err, &ue) || !strings.Contains(err.Error(), "uid 4242") {
		t.Fatalf("err = %v", err)
	}
}

func TestRemoveIfUnchanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := real(t, filepath.Join(dir, "reviewer-old.lock"))
	write(t, p, `{"pid": 1}`, 0o644)
	r := openRoot(t, dir)
	claim := func() string { return NewClaimName("reviewer-old.lock") }
	_, snap, _ := r.Read(p)

	// Swapped in meanwhile: put back, not removed.
	write(t, p, `{"pid": 2}`, 0o644)
	if err := r.RemoveIfUnchanged(snap, claim(), nil); !errors.Is(err, ErrChanged) {
		t.Fatalf("err = %v", err)
	}
	if read(t, p) != `{"pid": 2}` {
		t.Fatal("the new lock was not put back")
	}
	noTemps(t, dir)

	// beforeRemove failing puts the lock back too.
	_, snap, _ = r.Read(p)
	if err := r.RemoveIfUnchanged(snap, claim(), func() error { return errors.New("log failed") }); err == nil || err.Error() != "log failed" {
		t.Fatalf("err = %v", err)
	}
	if read(t, p) != `{"pid": 2}` {
		t.Fatal("not put back after beforeRemove failed")
	}

	called := false
	if err := r.RemoveIfUnchanged(snap, claim(), func() error {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Error("the lock is still at its name while beforeRemove runs; another claimer could win too")
		}
		called = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) || !called {
		t.Fatalf("not removed (called=%v)", called)
	}
	if err := r.RemoveIfUnchanged(snap, claim(), nil); !errors.Is(err, ErrChanged) {
		t.Fatalf("second removal err = %v", err)
	}
	noTemps(t, dir)
}

// A writer that takes no lock renames its file in between our check and our rename: the exchange hands
// its file back, and it is exchanged straight back into place, so the writer's update stays and ours is
// reported as not written (the caller redoes its edit on the writer's bytes).
func TestReplacePutsBackWriteDuringRename(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := real(t, filepath.Join(dir, "MANIFEST.yaml"))
	write(t, p, "status: running\n", 0o644)
	r := openRoot(t, dir)
	_, snap, _ := r.Read(p)
	r.BeforeRename = func() {
		tmp := filepath.Join(dir, "agent.tmp")
		write(t, tmp, "status: completed\n", 0o644)
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}
	d, err := r.Replace(snap, []byte("status: paused\n"), NewTempName("MANIFEST.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !CanReportDisplaced {
		// The plain rename's weakness, as the docs state it: the agent's write is overwritten unseen.
		if d != nil || read(t, p) != "status: paused\n" {
			t.Fatalf("displaced = %+v, file %q: a plain rename cannot see what it replaced", d, read(t, p))
		}
		noTemps(t, dir)
		return
	}
	if d == nil || !d.PutBack || string(d.Data) != "status: completed\n" || d.SHA256 != Hash(d.Data) || d.Visible <= 0 {
		t.Fatalf("displaced = %+v, want the agent's bytes put back", d)
	}
	if got := read(t, p); got != "status: completed\n" {
		t.Fatalf("file holds %q, want the agent's bytes back", got)
	}
	noTemps(t, dir)
}

// The writer lands again while ours is in place for the exchange back: its newer file is what ends at the
// name, not the older one of its own that the first exchange handed us.
func TestPutBackKeepsTheWritersNewestFile(t *testing.T) {
	t.Parallel()
	if !CanReportDisplaced {
		t.Skip("this build renames plainly: nothing comes back to put back (CanReportDisplaced)")
	}
	dir := t.TempDir()
	p := real(t, filepath.Join(dir, "state.env"))
	write(t, p, "A=0\n", 0o644)
	r := openRoot(t, dir)
	_, snap, _ := r.Read(p)
	agent := func(v string) {
		tmp := filepath.Join(dir, "state.env.tmp")
		write(t, tmp, v, 0o644)
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}
	r.BeforeRename = func() { agent("A=1\n") }
	r.beforePutBack = func(round int) {
		if round == 0 {
			agent("A=2\n") // ours is at the name now, its first file at our temp name
		}
	}
	d, err := r.Replace(snap, []byte("A=ours\n"), NewTempName("state.env"))
	if err != nil {
		t.Fatal(err)
	}
	if d == nil || !d.PutBack {
		t.Fatalf("displaced = %+v, want put back", d)
	}
	if got := read(t, p); got != "A=2\n" {
		t.Fatalf("file holds %q, want the writer's newest", got)
	}
	noTemps(t, dir)
}

// A refused write is never visible: when the precondition fails, the target keeps its inode and bytes
// throughout (no swap-in-then-back).
func TestRefusedReplaceNeverPublishes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := real(t, filepath.Join(dir, "state.env"))
	write(t, p, "A=1\n", 0o644)
	r := openRoot(t, dir)
	_, snap, _ := r.Read(p)
	write(t, p, "A=theirs\n", 0o644) // in place: same inode
	before, _ := os.Stat(p)
	seen := ""
	r.BeforeRename = func() { seen = read(t, p) }
	if _, err := r.Replace(snap, []byte("A=ours\n"), NewTempName("state.env")); !errors.Is(err, ErrChanged) {
		t.Fatalf("err = %v", err)
	}
	after, _ := os.Stat(p)
	if seen != "" || !os.SameFile(before, after) || read(t, p) != "A=theirs\n" {
		t.Fatalf("the refused write reached the target (seen %q)", seen)
	}
}

// Leftovers are recognised by owner: a dead pid's temp goes, a live one's stays, another host's stays, a
// claimed copy whose name is free is put back.
func TestLeftoversByOwner(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := real(t, filepath.Join(dir, "state.env"))
	write(t, p, "A=1\n", 0o644)
	r := openRoot(t, dir)
	deadTemp := TempPrefix("state.env") + ownerTag + HostTag() + "-999999-aa"
	liveTemp := TempPrefix("state.env") + ownerTag + HostTag() + "-" + strconv.Itoa(os.Getpid()) + "-bb"
	otherHost := TempPrefix("state.env") + ownerTag + "00000000-999999-cc"
	claimed := ".run.lock" + claimedMark + ownerTag + HostTag() + "-999999-dd"
	for _, n := range []string{deadTemp, liveTemp, otherHost, claimed} {
		write(t, filepath.Join(dir, n), "x", 0o644)
	}
	alive := func(pid int) (bool, time.Time) { return pid == os.Getpid(), time.Time{} }
	ls, err := r.Leftovers(p)
	if err != nil || len(ls) != 4 {
		t.Fatalf("leftovers %+v err %v", ls, err)
	}
	for _, l := range ls {
		if l.DeadOwner(time.Now(), alive) {
			if _, err := r.CleanLeftover(p, l); err != nil {
				t.Fatal(err)
			}
		}
	}
	for n, want := range map[string]bool{deadTemp: false, liveTemp: true, otherHost: true, claimed: false, "run.lock": true} {
		if _, err := os.Lstat(filepath.Join(dir, n)); (err == nil) != want {
			t.Errorf("%s exists=%v, want %v", n, err == nil, want)
		}
	}
}

// Every open is non-blocking and refuses what is not a regular file: a FIFO where a state file or run.log
// should be never hangs a reader or an append.
func TestFIFONeverBlocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := real(t, filepath.Join(dir, "state.env"))
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	r := openRoot(t, dir)
	done := make(chan error, 3)
	go func() { _, _, err := r.Read(p); done <- err }()
	go func() { done <- r.Append(p, []byte("x\n"), true) }()
	go func() { done <- r.CheckFile(p, true, true) }()
	for range 3 {
		var nr *NotRegularError
		if err := <-done; !errors.As(err, &nr) || !strings.Contains(err.Error(), "named pipe") {
			t.Fatalf("err = %v, want a not-regular refusal naming the FIFO", err)
		}
	}
}

// Appending to a log with a second hard link would write to the other name too: refused.
func TestAppendRefusesHardLinkedLog(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "victim.log")
	write(t, victim, "", 0o644)
	p := real(t, filepath.Join(dir, "run.log"))
	if err := os.Link(victim, p); err != nil {
		t.Fatal(err)
	}
	r := openRoot(t, dir)
	if err := r.Append(p, []byte("x\n"), true); err == nil || !strings.Contains(err.Error(), "2 hard links") {
		t.Fatalf("err = %v", err)
	}
	if err := r.CheckFile(p, true, true); err == nil {
		t.Fatal("CheckFile accepted a linked log")
	}
	if read(t, victim) != "" {
		t.Fatal("wrote to the other name")
	}
}

// A folder swapped for a symlink after the root was opened cannot redirect a read or a write, with
// openat2 and with the component walk alike.
func TestSwappedFolderCannotRedirect(t *testing.T) {
	t.Parallel()
	for _, walk := range []bool{false, true} {
		t.Run(map[bool]string{false: "openat2", true: "walk"}[walk], func(t *testing.T) {
			t.Parallel()
			dir, outside := t.TempDir(), t.TempDir()
			sub := real(t, filepath.Join(dir, "lock"))
			os.Mkdir(sub, 0o755)
			p := filepath.Join(sub, "active.lock")
			write(t, filepath.Join(outside, "active.lock"), "outside", 0o644)
			r := openRoot(t, dir)
			r.walkOnly = walk
			os.Remove(sub)
			if err := os.Symlink(outside, sub); err != nil {
				t.Fatal(err)
			}
			var ue *UnsafePathError
			if _, _, err := r.Read(p); !errors.As(err, &ue) {
				t.Fatalf("read err = %v", err)
			}
			if err := r.CreateExclusive(p, []byte("ours"), NewTempName("active.lock")); !errors.As(err, &ue) {
				t.Fatalf("create err = %v", err)
			}
			if err := r.Append(filepath.Join(sub, "x.log"), []byte("x"), true); !errors.As(err, &ue) {
				t.Fatalf("append err = %v", err)
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) != 1 || read(t, filepath.Join(outside, "active.lock")) != "outside" {
				t.Fatalf("something was written outside: %v", entries)
			}
		})
	}
}

// The root itself renamed away and replaced by a symlink: writes still go to the directory that was opened.
func TestRootHeldOpen(t *testing.T) {
	t.Parallel()
	parent, outside := t.TempDir(), t.TempDir()
	dir := filepath.Join(parent, "run")
	os.Mkdir(dir, 0o755)
	p := real(t, filepath.Join(dir, "state.env"))
	write(t, p, "A=1\n", 0o644)
	r := openRoot(t, dir)
	_, snap, _ := r.Read(p)
	moved := filepath.Join(parent, "moved")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(outside, "state.env"), "A=1\n", 0o644)
	os.Symlink(outside, dir)
	if _, err := r.Replace(snap, []byte("A=2\n"), NewTempName("state.env")); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(outside, "state.env")) != "A=1\n" || read(t, filepath.Join(moved, "state.env")) != "A=2\n" {
		t.Fatal("the write followed the swapped root")
	}
}

// A lock made by CreateExclusive is whole from the instant its name exists.
func TestCreateExclusiveIsWholeAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := real(t, filepath.Join(dir, "run.lock"))
	r := openRoot(t, dir)
	payload := []byte(`{"pid": 1, "run_id": "x"}` + "\n")
	stop := make(chan struct{})
	bad := make(chan string, 1)
	go func() {
		for {
			select {
			case <-stop:
				close(bad)
				return
			default:
			}
			if b, err := os.ReadFile(p); err == nil && string(b) != string(payload) {
				bad <- string(b)
				return
			}
		}
	}()
	for range 300 {
		if err := r.CreateExclusive(p, payload, NewTempName("run.lock")); err != nil {
			t.Fatal(err)
		}
		if err := r.CreateExclusive(p, payload, NewTempName("run.lock")); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("second create err = %v", err)
		}
		os.Remove(p)
	}
	close(stop)
	if b, ok := <-bad; ok {
		t.Fatalf("a reader saw the lock with %q", b)
	}
	noTemps(t, dir)
}
