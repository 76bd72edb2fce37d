package cli

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"runwatch/remote"
	"runwatch/shellword"
)

// A host of another system or architecture gets this very version of runwatch built for it. "This very
// version" is the commit this binary's build information names (vcs.revision), built from the checkout this
// binary was built from: the folder its sources had, which Go records in the binary unless it was built with
// -trimpath, still at that commit and unchanged (git status clean, the test Go's vcs.modified makes). The
// build is `go build` with GOOS and GOARCH of the host and CGO_ENABLED=0, by the Go toolchain on this
// machine's PATH, and its own build information is checked before it is sent. When anything of that is
// missing, install says why and prints the commands instead.

// ownSourceDir is the folder this runwatch was built from: the module root above this file, as compiled in.
func ownSourceDir() (string, bool) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", false // -trimpath: only "runwatch/cli/…" was recorded
	}
	return filepath.Dir(filepath.Dir(file)), true
}

// crossSource finds the checkout to build this version from, or says why there is none.
func crossSource() (dir, rev string, err error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", "", fmt.Errorf("this runwatch carries no build information")
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	rev = settings["vcs.revision"]
	switch {
	case rev == "":
		return "", "", fmt.Errorf("this runwatch does not record the commit it was built from (built outside a git checkout, or with -buildvcs=false)")
	case settings["vcs.modified"] == "true":
		return "", rev, fmt.Errorf("this runwatch was built from a checkout with uncommitted changes, which cannot be built again")
	}
	dir, ok = ownSourceDir()
	if !ok {
		return "", rev, fmt.Errorf("this runwatch was built with -trimpath, so the folder of its checkout is not known")
	}
	if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err != nil || !bytes.HasPrefix(mod, []byte("module runwatch\n")) {
		return "", rev, fmt.Errorf("the checkout it was built from, %s, holds no runwatch now", dir)
	}
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", rev, fmt.Errorf("cannot ask git which commit %s is at: %v", dir, err)
	}
	if h := strings.TrimSpace(string(head)); h != rev {
		return "", rev, fmt.Errorf("the checkout it was built from, %s, is at %.12s now, not at this runwatch's %.12s", dir, h, rev)
	}
	status, err := exec.Command("git", "-C", dir, "status", "--porcelain").Output()
	if err != nil || len(bytes.TrimSpace(status)) > 0 {
		return "", rev, fmt.Errorf("the checkout it was built from, %s, has changes since", dir)
	}
	return dir, rev, nil
}

// crossBuild builds this version for goos/goarch into a temporary folder and returns the binary's path, its
// `runwatch version` text, where it was built from, and the folder to remove when done.
func crossBuild(goos, goarch string) (bin, version, from, tmp string, err error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", "", "", "", fmt.Errorf("there is no Go toolchain here (go is not on the PATH)")
	}
	dir, rev, err := crossSource()
	if err != nil {
		return "", "", "", "", err
	}
	tmp, err = os.MkdirTemp("", "runwatch-install-")
	if err != nil {
		return "", "", "", "", err
	}
	bin = filepath.Join(tmp, "runwatch-"+goos+"-"+goarch)
	// -buildvcs=true: the revision is what says this is this version (a GOFLAGS of -buildvcs=false would drop it).
	cmd := exec.Command(gobin, "build", "-buildvcs=true", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", "", "", "", fmt.Errorf("go build for %s/%s in %s failed: %v\n%s", goos, goarch, dir, err, strings.TrimSpace(string(out)))
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		os.RemoveAll(tmp)
		return "", "", "", "", fmt.Errorf("the build for %s/%s has no build information: %v", goos, goarch, err)
	}
	got := map[string]string{}
	for _, s := range info.Settings {
		got[s.Key] = s.Value
	}
	if got["GOOS"] != goos || got["GOARCH"] != goarch || got["vcs.revision"] != rev || got["vcs.modified"] != "false" {
		os.RemoveAll(tmp)
		return "", "", "", "", fmt.Errorf("the build in %s is not this version for %s/%s (it says %s/%s, revision %s, modified %s)",
			dir, goos, goarch, got["GOOS"], got["GOARCH"], got["vcs.revision"], got["vcs.modified"])
	}
	return bin, versionText(info, goos+"/"+goarch), fmt.Sprintf("built here from %s at %.12s", dir, rev), tmp, nil
}

// crossCommands are the commands, for sh, bash or zsh, that build this version for goos/goarch and copy it
// to host's dir by hand.
func crossCommands(goos, goarch string, host remote.Root, dir string) string {
	src, rev := "RUNWATCH-CHECKOUT", ""
	if d, ok := ownSourceDir(); ok {
		src = d
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  cd %s\n", shellword.Quote(src))
	if rev != "" {
		fmt.Fprintf(&b, "  git checkout %s\n", rev)
	}
	fmt.Fprintf(&b, "  GOOS=%s GOARCH=%s CGO_ENABLED=0 go build -o runwatch-%s-%s .\n", goos, goarch, goos, goarch)
	b.WriteString("  " + scpLine(host, "runwatch-"+goos+"-"+goarch, dir))
	return b.String()
}
