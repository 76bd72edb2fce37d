package cli

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"runwatch/config"
	"runwatch/remote"
	"runwatch/state/resumable/resumabletest"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("planting a file as another user needs root")
	}
}

// withoutRuntimeDir is e where runwatch falls back to the temp dir for its control folder, as on a machine
// without a login session's XDG_RUNTIME_DIR, with the temp dir one the test owns (short, for the sockets).
func withoutRuntimeDir(t *testing.T, e env) (string, env) {
	t.Helper()
	tmp, err := os.MkdirTemp("", "rwt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	return tmp, e.with("XDG_RUNTIME_DIR", "", "TMPDIR", tmp)
}

// Issue 22.1: a control folder another user made under the temp dir (where runwatch falls back to without
// XDG_RUNTIME_DIR) is refused with its owner named, and no command goes out through it.
func TestAControlFolderPlantedByAnotherUserIsRefused(t *testing.T) {
	needRoot(t)
	_, e := sshFleet(t, "alpha")
	tmp, e := withoutRuntimeDir(t, e)
	root := t.TempDir()
	resumabletest.MinimalRun(t, root, "irm-cf-20261201T080000Z")
	dir := filepath.Join(tmp, "runwatch-0")
	if got := remote.DefaultControlDir(e.getenv); got != dir {
		t.Fatalf("control folder %q, the test plants %q", got, dir)
	}
	for _, plant := range []struct {
		name string
		uid  int
		mode os.FileMode
		want string
	}{
		{"another user's", nobody, 0o700, "owned by uid 65534"},
		{"open to others", 0, 0o777, "open to others"},
	} {
		t.Run(plant.name, func(t *testing.T) {
			os.RemoveAll(dir)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(dir, plant.uid, plant.uid); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, plant.mode); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			code := dispatch([]string{"status", "--json", "ssh://alpha" + root}, &out, &errOut, e)
			if code == exitOK || !strings.Contains(errOut.String(), dir) || !strings.Contains(errOut.String(), plant.want) {
				t.Fatalf("exit %d, stderr %q: want a refusal naming %s (%s)", code, errOut.String(), dir, plant.want)
			}
			if strings.Contains(out.String(), "irm-cf-") {
				t.Errorf("the run was listed through the planted folder:\n%s", out.String())
			}
		})
	}
	// Once the folder is gone, runwatch makes its own (0700) and works.
	os.RemoveAll(dir)
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"status", "--json", "ssh://alpha" + root}, &out, &errOut, e); code != exitOK || !strings.Contains(out.String(), "irm-cf-") {
		t.Fatalf("with the folder its own: exit %d\n%s", code, errOut.String())
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the folder runwatch made: %v %v", fi.Mode(), err)
	}
}

// Issue 22.1: a socket at a host's control path that another user made is refused, named, and never
// connected to (it would receive the command and our stdio).
func TestAControlSocketPlantedByAnotherUserIsNeverUsed(t *testing.T) {
	needRoot(t)
	_, e := sshFleet(t, "alpha")
	root := t.TempDir()
	dir := resumabletest.MinimalRun(t, root, "irm-cs-20261201T080000Z")
	s := sshFor(e.getenv, config.Config{})
	if err := os.MkdirAll(s.ControlDir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := s.ControlPath(remote.Root{Host: "alpha", Path: root})
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Chown(sock, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	for _, args := range [][]string{
		{"status", "--json", "ssh://alpha" + root},
		{"step", "ssh://alpha" + dir, "--yes"},
	} {
		var out, errOut bytes.Buffer
		code := dispatch(args, &out, &errOut, e)
		if code == exitOK || !strings.Contains(errOut.String(), sock) || !strings.Contains(errOut.String(), "owned by uid 65534") {
			t.Errorf("%v: exit %d, stderr %q: want a refusal naming %s", args, code, errOut.String(), sock)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the planted socket was connected to %d times", n)
	}
	if st, _ := os.ReadFile(filepath.Join(dir, "state.env")); strings.Contains(string(st), `S1_DONE="1"`) {
		t.Fatal("the step was applied through a refused socket")
	}
}
