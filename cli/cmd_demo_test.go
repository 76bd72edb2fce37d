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
	t.Parallel()
	for _, args := range [][]string{
		{"--speed", "0"}, {"--speed", "-1"}, {"--speed", "NaN"}, {"--speed", "1e9"}, {"extra"}, {"--bogus"},
	} {
		var out, errb bytes.Buffer
		if code := dispatch(append([]string{"demo"}, args...), &out, &errb, testEnv(t)); code != exitUsage {
			t.Errorf("demo %v: exit %d, want %d (stderr %q)", args, code, exitUsage, errb.String())
		}
		if errb.Len() == 0 {
			t.Errorf("demo %v: no message on stderr", args)
		}
	}
}

func TestDemoHelp(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := dispatch([]string{"demo", "-h"}, &out, &errb, testEnv(t)); code != exitOK || errb.Len() > 0 {
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
	t.Parallel()
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := dispatch([]string{"demo", "--dir", dir}, &out, &errb, fakeDashboardTerminal(testEnv(t))); code != exitProblems {
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
	t.Parallel()
	tmp := t.TempDir()
	root, temporary, err := demoDir(tmp, "")
	if err != nil || !temporary || filepath.Dir(root) != tmp || !strings.HasPrefix(filepath.Base(root), "runwatch-demo-") {
		t.Fatalf("demoDir(\"\") = %q, %v, %v", root, temporary, err)
	}
	fresh := filepath.Join(t.TempDir(), "a", "b")
	root, temporary, err = demoDir(tmp, fresh)
	if err != nil || temporary || root != fresh {
		t.Fatalf("demoDir(new) = %q, %v, %v", root, temporary, err)
	}
	if st, err := os.Stat(fresh); err != nil || !st.IsDir() {
		t.Fatalf("new --dir not created: %v", err)
	}
}

// fakeDashboardTerminal is e past the terminal check, for what is decided before the dashboard starts.
func fakeDashboardTerminal(e env) env {
	e.terminal = func(io.Writer) bool { return true }
	return e
}
