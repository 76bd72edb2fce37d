package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "runwatch", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "9d56de9c0ffee"}, {Key: "vcs.time", Value: "2026-12-01T08:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		}}
	want := "runwatch v1.2.3\nrevision  9d56de9c0ffee (modified)\ntime      2026-12-01T08:00:00Z\ngo        go1.26.8 linux/amd64\n"
	if got := versionText(info, "linux/amd64"); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// A build without VCS information (go install from the proxy, -buildvcs=false) says only what it knows.
	info.Main.Version, info.Settings = "", nil
	if got := versionText(info, "linux/amd64"); got != "runwatch (devel)\ngo        go1.26.8 linux/amd64\n" {
		t.Errorf("without vcs:\n%s", got)
	}
	_, a, _ := run(t, "version")
	_, b, _ := run(t, "--version")
	if a != b || !strings.Contains(a, runtime.Version()) {
		t.Errorf("version %q and --version %q", a, b)
	}
}

// The real binary, built from this checkout with VCS stamping, names its revision.
func TestVersionOfABuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	head, err := exec.Command(git, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	if st, err := os.Stat("../.git"); err != nil || !st.IsDir() {
		// Observed with go1.26.8: in a `git worktree` checkout (.git is a file) go build stamps no vcs.*
		// settings, even with -buildvcs=true. A clone, as CI uses, has them.
		t.Skip("not a plain git clone (a worktree?): go build stamps no VCS information here")
	}
	bin := filepath.Join(t.TempDir(), "runwatch")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^runwatch \S+\nrevision  ` + strings.TrimSpace(string(head)) + `( \(modified\))?\ntime      \d{4}-\d\d-\d\dT[0-9:]+Z\ngo        go1\.\S+ \S+/\S+\n$`)
	if !want.Match(out) {
		t.Errorf("runwatch --version:\n%s", out)
	}
}
