package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDemoUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--speed", "0"}, {"--speed", "-1"}, {"--speed", "NaN"}, {"--speed", "1e9"}, {"extra"}, {"--bogus"},
	} {
		var out, errb bytes.Buffer
		if code := dispatch(append([]string{"demo"}, args...), &out, &errb); code != exitUsage {
			t.Errorf("demo %v: exit %d, want %d (stderr %q)", args, code, exitUsage, errb.String())
		}
		if errb.Len() == 0 {
			t.Errorf("demo %v: no message on stderr", args)
		}
	}
}

func TestDemoHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch([]string{"demo", "-h"}, &out, &errb); code != exitOK || errb.Len() > 0 {
		t.Fatalf("demo -h: exit %d, want 0 (stderr %q)", code, errb.String())
	}
	for _, want := range []string{"--dir DIR", "--speed X", "--keep", "paused run"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help does not mention %q:\n%s", want, out.String())
		}
	}
}

// A demo never mixes its runs into a folder that already holds something.
func TestDemoRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	fakeDashboardTerminal(t)
	var out, errb bytes.Buffer
	if code := dispatch([]string{"demo", "--dir", dir}, &out, &errb); code != exitProblems {
		t.Fatalf("exit %d, want %d", code, exitProblems)
	}
	if !strings.Contains(errb.String(), "not empty") || !strings.Contains(errb.String(), dir) {
		t.Errorf("message %q does not say which folder and why", errb.String())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the refused folder now holds %d entries", len(entries))
	}
}

func TestDemoDirChoosesFolders(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	root, temporary, err := demoDir("")
	if err != nil || !temporary || !strings.HasPrefix(filepath.Base(root), "runwatch-demo-") {
		t.Fatalf("demoDir(\"\") = %q, %v, %v", root, temporary, err)
	}
	fresh := filepath.Join(t.TempDir(), "a", "b")
	root, temporary, err = demoDir(fresh)
	if err != nil || temporary || root != fresh {
		t.Fatalf("demoDir(new) = %q, %v, %v", root, temporary, err)
	}
	if st, err := os.Stat(fresh); err != nil || !st.IsDir() {
		t.Fatalf("new --dir not created: %v", err)
	}
}

// fakeDashboardTerminal lets a test get past the terminal check, for what is decided before the dashboard
// starts.
func fakeDashboardTerminal(t *testing.T) {
	saved := hasTerminal
	hasTerminal = func(io.Writer) bool { return true }
	t.Cleanup(func() { hasTerminal = saved })
}
