package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	dir := t.TempDir()
	p := filepath.Join(dir, "state.env")
	write(t, p, "A=\"1\"\n", 0o640)
	_, snap, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := Replace(snap, []byte("A=\"2\"\n")); err != nil {
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
			p := filepath.Join(dir, "state.env")
			write(t, p, "A=\"1\"\n", 0o644)
			_, snap, _ := Read(p)
			tc.mutate(p)
			before, _ := os.ReadFile(p)
			err := Replace(snap, []byte("A=\"2\"\n"))
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
	dir := t.TempDir()
	p := filepath.Join(dir, "new.lock")
	_, snap, err := Read(p)
	if err != nil || snap.Exists {
		t.Fatalf("snap %+v err %v", snap, err)
	}
	write(t, p, "theirs", 0o644)
	if err := Replace(snap, []byte("ours")); !errors.Is(err, ErrChanged) {
		t.Fatalf("err = %v", err)
	}
	if read(t, p) != "theirs" {
		t.Fatal("overwrote a file created meanwhile")
	}
	os.Remove(p)
	if err := Replace(snap, []byte("ours")); err != nil {
		t.Fatal(err)
	}
	if read(t, p) != "ours" {
		t.Fatal("not created")
	}
	noTemps(t, dir)
}

func TestReplaceFailureRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "MANIFEST.yaml")
	write(t, p, "a: 1\n", 0o644)
	_, snap, _ := Read(p)
	snap.SHA256 = Hash([]byte("something else")) // a precondition that can never hold
	if err := Replace(snap, []byte("a: 2\n")); !errors.Is(err, ErrChanged) {
		t.Fatalf("err = %v", err)
	}
	noTemps(t, dir)
}

func TestAppendNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.log")
	write(t, p, "[2026-01-01T00:00:00Z] a\n", 0o644)
	f, err := os.Open(p) // a writer holding the old inode keeps seeing the appended bytes
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fiBefore, _ := f.Stat()
	if err := Append(p, []byte("[2026-01-01T00:00:01Z] b\n")); err != nil {
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
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere.log")
	write(t, target, "", 0o644)
	p := filepath.Join(dir, "run.log")
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if err := Append(p, []byte("x\n")); err == nil {
		t.Fatal("appended through a symlink")
	}
	if read(t, target) != "" {
		t.Fatal("wrote through the symlink")
	}
}

func TestResolveRefusesSymlinkOutOfRoot(t *testing.T) {
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
	p := filepath.Join(t.TempDir(), "state.env")
	write(t, p, "A=1\n", 0o644)
	if err := CheckOwner(p); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() != 0 {
		t.Skip("making a file owned by another user needs root")
	}
	if err := os.Chown(p, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	var ue *UnsafePathError
	if err := CheckOwner(p); !errors.As(err, &ue) || !strings.Contains(err.Error(), "uid 4242") {
		t.Fatalf("err = %v", err)
	}
}

func TestRemoveIfUnchanged(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "reviewer-old.lock")
	write(t, p, `{"pid": 1}`, 0o644)
	_, snap, _ := Read(p)

	// Swapped in meanwhile: put back, not removed.
	write(t, p, `{"pid": 2}`, 0o644)
	if err := RemoveIfUnchanged(snap, nil); !errors.Is(err, ErrChanged) {
		t.Fatalf("err = %v", err)
	}
	if read(t, p) != `{"pid": 2}` {
		t.Fatal("the new lock was not put back")
	}
	noTemps(t, dir)

	// beforeRemove failing puts the lock back too.
	_, snap, _ = Read(p)
	if err := RemoveIfUnchanged(snap, func() error { return errors.New("log failed") }); err == nil || err.Error() != "log failed" {
		t.Fatalf("err = %v", err)
	}
	if read(t, p) != `{"pid": 2}` {
		t.Fatal("not put back after beforeRemove failed")
	}

	called := false
	if err := RemoveIfUnchanged(snap, func() error {
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
	if err := RemoveIfUnchanged(snap, nil); !errors.Is(err, ErrChanged) {
		t.Fatalf("second removal err = %v", err)
	}
	noTemps(t, dir)
}

// A writer that takes no lock renames its file in between our check and our rename: the exchange catches
// it, their bytes stay, and the conflict is reported.
func TestReplaceCatchesWriteDuringRename(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "MANIFEST.yaml")
	write(t, p, "status: running\n", 0o644)
	_, snap, _ := Read(p)
	testHookBeforeRename = func() {
		tmp := filepath.Join(dir, "agent.tmp")
		write(t, tmp, "status: completed\n", 0o644)
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { testHookBeforeRename = nil }()
	err := Replace(snap, []byte("status: paused\n"))
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "during our write") {
		t.Fatalf("err = %v", err)
	}
	if got := read(t, p); got != "status: completed\n" {
		t.Fatalf("the agent's update was lost: %q", got)
	}
	noTemps(t, dir)
}

func TestReplaceRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.env")
	write(t, p, "A=1\n", 0o644)
	old := filepath.Join(dir, TempPrefix("state.env")+"killed")
	fresh := filepath.Join(dir, TempPrefix("state.env")+"inflight")
	write(t, old, "A=", 0o600)
	write(t, fresh, "A=", 0o600)
	long := time.Now().Add(-time.Hour)
	os.Chtimes(old, long, long)
	_, snap, _ := Read(p)
	if err := Replace(snap, []byte("A=2\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Error("an hour-old temp file was kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a fresh temp file (another writer's, in flight) was removed")
	}
}
