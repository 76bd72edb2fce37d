//go:build linux

package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"runwatch/state/resumable/resumabletest"
)

// openWatch hears every open under root (a folder listed, a file read): inotify reports IN_OPEN on the
// opened folder or file, in the watch of the folder that holds it, and a stat opens nothing. Events are
// queued by the open itself, so once the call under test returns, drain has them all.
type openWatch struct {
	fd  int
	wds map[int]string
}

func watchOpens(t *testing.T, root string) *openWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	w := &openWatch{fd: fd, wds: map[int]string{}}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		wd, err := unix.InotifyAddWatch(fd, p, unix.IN_OPEN)
		if err != nil {
			return err
		}
		w.wds[wd] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w.drain(t) // the walk above listed every folder
	return w
}

// drain returns the paths opened since the last drain.
func (w *openWatch) drain(t *testing.T) []string {
	t.Helper()
	var out []string
	buf := make([]byte, 1<<16)
	for {
		n, err := unix.Read(w.fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				t.Fatal("inotify queue overflowed: opens were lost")
			}
			if dir, ok := w.wds[int(ev.Wd)]; ok {
				out = append(out, filepath.Join(dir, name))
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// completionTree is the fixture reports folder plus what completion must tell apart without reading it:
// a run folder whose state did not travel (only a run.log), a folder of runs below reports, and a jonggrang
// project with two features; and the environment whose config makes the tree the one root.
func completionTree(t *testing.T) (root string, e env) {
	t.Helper()
	root = resumabletest.Copy(t)
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("reports/lost-state-20260216T020000Z/run.log", "[2026-02-16T02:00:00Z] run started\n")
	write("reports/older/iso26262-archive-20260101T000000Z/state.env", "RUN_ID=20260101T000000Z\nSTATUS=completed\n")
	for _, f := range []string{"iso26262-feature", "other-feature"} {
		write("proj/.jonggrang/.output/features/"+f+"/MANIFEST.yaml", "feature_id: "+f+"\nphases: []\n")
	}
	home := t.TempDir()
	cfgFile := filepath.Join(home, "runwatch", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfgFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgFile, []byte("roots: ["+root+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, testEnv(t, "XDG_CONFIG_HOME", home)
}

// openedIn is the opened paths that lie in one of the folders.
func openedIn(opened []string, folders ...string) []string {
	var out []string
	for _, p := range opened {
		for _, f := range folders {
			if p == f || strings.HasPrefix(p, f+string(filepath.Separator)) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

func isRunFile(p string) bool {
	base := filepath.Base(p)
	return strings.HasSuffix(base, ".env") || base == "MANIFEST.yaml" || strings.HasSuffix(base, ".log") || strings.HasSuffix(base, ".lock")
}

// Completing a run id reads no run's files and lists no run folder but those of the typed prefix: in a
// tree of 100,000 runs, listing every run folder on each TAB took seconds (issue 26). (A folder without
// state.env, like lost-state, may be a folder of runs: it is listed, and its run.log is not read.)
func TestCompletingARunIDReadsNoRunAndListsOnlyFoldersOfThatName(t *testing.T) {
	root, e := completionTree(t)
	reports := filepath.Join(root, "reports")
	w := watchOpens(t, root)

	got := candidates(t, e, "unlock", "iso")
	opened := w.drain(t)
	if want := []string{resumabletest.Mining, "iso26262-archive-20260101T000000Z", "iso26262-feature"}; !has(got, want...) {
		t.Errorf("unlock iso<TAB>: got %q, want %q among them", got, want)
	}
	for _, p := range opened {
		if isRunFile(p) {
			t.Errorf("completing a run id opened %s", p)
		}
	}
	others := []string{filepath.Join(reports, resumabletest.IRM), filepath.Join(reports, resumabletest.Sphinx),
		filepath.Join(reports, resumabletest.Broken), filepath.Join(reports, resumabletest.Export),
		filepath.Join(root, "proj/.jonggrang/.output/features/other-feature")}
	if bad := openedIn(opened, others...); len(bad) > 0 {
		t.Errorf("completing iso… listed or read folders of runs of other names: %q", bad)
	}

	// What follows RUN is read from that run alone.
	got = candidates(t, e, "unlock", resumabletest.Mining, "")
	opened = w.drain(t)
	if !has(got, "active.lock") {
		t.Errorf("unlock %s <TAB>: got %q, want active.lock", resumabletest.Mining, got)
	}
	if bad := openedIn(opened, others...); len(bad) > 0 {
		t.Errorf("completing what follows %s read other runs: %q", resumabletest.Mining, bad)
	}
	if len(openedIn(opened, filepath.Join(reports, resumabletest.Mining))) == 0 {
		t.Errorf("the run named was not read (the watch hears nothing?): %q", opened)
	}
}

// The second TAB in an unchanged tree opens nothing under the roots, not even a folder to list it: the walk
// cache vouches for each listing by the folder's stat, and a stat opens nothing (issue 26: 100,000 runs).
func TestSecondTABInAnUnchangedTreeListsNoFolder(t *testing.T) {
	root, e := completionTree(t)
	// An hour back: a listing of a folder changed within the last moments is taken again (racily clean).
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	w := watchOpens(t, root)

	first := candidates(t, e, "unlock", "iso")
	if opened := w.drain(t); len(opened) == 0 {
		t.Fatal("the first TAB opened nothing under the root: the watch hears nothing?")
	}
	second := candidates(t, e, "unlock", "iso")
	if opened := w.drain(t); len(opened) > 0 {
		t.Errorf("the second TAB in an unchanged tree opened %q", opened)
	}
	if strings.Join(second, "\n") != strings.Join(first, "\n") || !has(second, resumabletest.Mining, "iso26262-feature") {
		t.Errorf("second TAB: %q, first: %q", second, first)
	}

	// A new run of the prefix is offered at the next TAB: its folder of runs changed, and is listed again.
	if err := os.MkdirAll(filepath.Join(root, "reports", "iso-new-run"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "reports", "iso-new-run", "state.env"), []byte("STATUS=running\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := candidates(t, e, "unlock", "iso"); !has(got, "iso-new-run") {
		t.Errorf("a run made since the last TAB is not offered: %q", got)
	}
}

// Completion answers the same with a walk cache it must not use: a cache folder others may write (refused,
// and nothing written there) or one that cannot be made.
func TestCompletionAnswersTheSameWithoutAUsableCache(t *testing.T) {
	_, e := completionTree(t)
	want := candidates(t, e, "unlock", "iso")
	if !has(want, resumabletest.Mining, "iso26262-archive-20260101T000000Z", "iso26262-feature") {
		t.Fatalf("unlock iso<TAB>: %q", want)
	}
	open := t.TempDir()
	if err := os.Mkdir(filepath.Join(open, "runwatch"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(open, "runwatch"), 0o777); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for what, cache := range map[string]string{"a cache folder of mode 0777": open, "a cache folder that cannot be made": file} {
		for range 2 {
			if got := candidates(t, e.with("XDG_CACHE_HOME", cache), "unlock", "iso"); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s: %q, want %q", what, got, want)
			}
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(open, "runwatch")); len(entries) > 0 {
		t.Errorf("a cache was written in a folder of mode 0777: %v", entries)
	}
}

// status with a path it cannot take (missing, a file that is no run's) says so before it reads any run of the
// others: streaming reads each run as it is found, and over 10,000 runs `status ROOT notes.txt` read them all
// for 10 s before its usage error.
func TestStatusWithAPathItCannotTakeReadsNoRun(t *testing.T) {
	root := resumabletest.Copy(t)
	w := watchOpens(t, root)
	notARun := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notARun, []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{filepath.Join(t.TempDir(), "no-such-root"), notARun} {
		code, out, errOut := run(t, "status", root, bad)
		if code != exitUsage || !strings.Contains(errOut, bad) || out != "" {
			t.Errorf("status ROOT %s: exit %d, stdout %q, stderr %q; want exit %d naming it", bad, code, out, errOut, exitUsage)
		}
		if opened := w.drain(t); len(opened) > 0 {
			t.Errorf("status read %q before saying it cannot take %s", opened, bad)
		}
	}
	if code, out, _ := run(t, "status", root); code == exitUsage || !strings.Contains(out, resumabletest.Mining) {
		t.Errorf("status ROOT: exit %d, %q (the watch hears nothing?)", code, out)
	}
	if opened := w.drain(t); len(opened) == 0 {
		t.Error("status ROOT opened nothing under the root: the watch hears nothing")
	}
}
