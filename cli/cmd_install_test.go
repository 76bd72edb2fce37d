package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/remote"
	"runwatch/remote/sshtest"
	"runwatch/state/resumable/resumabletest"

	"go.yaml.in/yaml/v3"
	"runwatch/shellword"
	"runwatch/ui/keys"
)

// installer runs the real runwatch binary (install copies the binary it runs as) against a fleet whose
// remote PATH starts with hostBin.
type installer struct {
	t     *testing.T
	bin   string
	fleet *sshtest.Fleet
	env   []string
}

func newInstaller(t *testing.T, hostBin string) *installer {
	t.Helper()
	return newInstallerOf(t, hostBin, buildRunwatch(t))
}

func newInstallerOf(t *testing.T, hostBin, bin string) *installer {
	t.Helper()
	return newInstallerWith(t, hostBin, bin, sshtest.Options{}, "alpha")
}

func newInstallerWith(t *testing.T, hostBin, bin string, opts sshtest.Options, aliases ...string) *installer {
	t.Helper()
	fleet := sshtest.NewWith(t, hostBin, opts, aliases...)
	return &installer{t: t, bin: bin, fleet: fleet, env: append(os.Environ(),
		"RUNWATCH_SSH_COMMAND="+strings.Join(fleet.SSHCommand(), " "), "XDG_RUNTIME_DIR="+filepath.Join(fleet.Dir, "rt"),
		"XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())}
}

func (in *installer) run(args ...string) (int, string, string) {
	in.t.Helper()
	c := exec.Command(in.bin, args...)
	c.Env = in.env
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		in.t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func sameBytes(t *testing.T, a, b string) bool {
	t.Helper()
	x, err1 := os.ReadFile(a)
	y, err2 := os.ReadFile(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// Issue 25.2: a host whose PATH has no runwatch: status names `runwatch install alpha`; install copies this
// binary to ~/.local/bin there (saying that folder is not on the PATH ssh commands get, and what to add),
// or to a folder that is; then status over it works.
func TestInstallOnAHostWithoutRunwatch(t *testing.T) {
	t.Parallel()
	hostBin := t.TempDir()
	in := newInstaller(t, hostBin)
	root := t.TempDir()
	resumabletest.MinimalRun(t, root, "irm-inst-20261201T080000Z")

	if code, _, errOut := in.run("status", "ssh://alpha"+root); code == 0 || !strings.Contains(errOut, "runwatch is not installed there (runwatch install alpha)") {
		t.Fatalf("status before install: exit %d, %q", code, errOut)
	}
	if code, _, errOut := in.run("install", "alpha"); code != exitRefused || !strings.Contains(errOut, "--yes") {
		t.Fatalf("install without a terminal or --yes: exit %d, %q", code, errOut)
	}
	home := filepath.Join(in.fleet.Dir, "alpha-home")
	code, out, errOut := in.run("install", "alpha", "--yes")
	if code != 0 || !strings.Contains(out, "installed alpha:"+home+"/.local/bin/runwatch") ||
		!strings.Contains(out, home+"/.local/bin is not on the PATH that ssh commands get on alpha (which finds no runwatch)") ||
		!strings.Contains(out, "export PATH="+shellword.Quote(home+"/.local/bin")+`:"$PATH"`) {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	if !sameBytes(t, in.bin, filepath.Join(home, ".local", "bin", "runwatch")) {
		t.Fatal("the installed runwatch is not this binary")
	}

	code, out, errOut = in.run("install", "alpha", "--yes", "--dir", hostBin)
	if code != 0 || !strings.Contains(out, "installed alpha:"+hostBin+"/runwatch") || strings.Contains(out, "not on the PATH") {
		t.Fatalf("install into a folder on the PATH: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := in.run("status", "ssh://alpha"+root); code != 0 || !strings.Contains(out, "irm-inst-20261201T080000Z") {
		t.Fatalf("status after install: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := in.run("install", "alpha", "--dir", hostBin); code != 0 || !strings.Contains(out, "is this runwatch already") {
		t.Fatalf("install again: exit %d\n%s", code, out)
	}
}

// Issue 34: without a Go toolchain here, a host of another architecture is refused with the exact commands
// that build this version for it and copy it there.
func TestInstallWithoutToolchainPrintsTheCommands(t *testing.T) {
	t.Parallel()
	hostBin := t.TempDir()
	writeScript(t, filepath.Join(hostBin, "uname"), "#!/bin/sh\necho Linux aarch64\n")
	in := newInstaller(t, hostBin)
	in.env = append(in.env, "PATH="+pathWith(t, "ssh"))
	code, out, errOut := in.run("install", "alpha", "--yes")
	if code != exitRefused || !strings.Contains(errOut, "there is no Go toolchain here") ||
		!strings.Contains(errOut, "GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -o runwatch-linux-arm64 .\n  scp runwatch-linux-arm64 'alpha:~/.local/bin/runwatch'") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(in.fleet.Dir, "alpha-home", ".local", "bin", "runwatch")); err == nil {
		t.Fatal("copied to a host of another architecture")
	}
}

// Issue 34: a host whose uname says Darwin arm64 gets this very version built for darwin/arm64 (from the clean
// checkout this runwatch was built from) and sent there, where the same checks as for any copy run on it. The
// host is this Linux machine with a fake uname, so the copy's run check must refuse it (a Mach-O binary does
// not run here), leaving nothing in place; a spy chmod on the host's PATH keeps the bytes that arrived, and
// `go version -m` says they are darwin/arm64 of the same revision.
func TestInstallBuildsForADarwinHost(t *testing.T) {
	t.Parallel()
	src, rev := cleanCheckout(t)
	bin := filepath.Join(t.TempDir(), "runwatch")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".") // records the revision, whatever GOFLAGS says
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	hostBin, arrived := t.TempDir(), filepath.Join(t.TempDir(), "arrived")
	chmod, err := exec.LookPath("chmod")
	if err != nil {
		t.Skip("no chmod")
	}
	writeScript(t, filepath.Join(hostBin, "uname"), "#!/bin/sh\necho Darwin arm64\n")
	writeScript(t, filepath.Join(hostBin, "chmod"), fmt.Sprintf("#!/bin/sh\nfor a; do last=$a; done\ncp \"$last\" %s\nexec %s \"$@\"\n", arrived, chmod))
	in := newInstallerOf(t, hostBin, bin)
	code, out, errOut := in.run("install", "alpha", "--yes")
	if code != exitRefused || !strings.Contains(errOut, "the copied runwatch does not run there") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	vm, err := exec.Command("go", "version", "-m", arrived).CombinedOutput()
	if err != nil || !strings.Contains(string(vm), "GOOS=darwin") || !strings.Contains(string(vm), "GOARCH=arm64") ||
		!strings.Contains(string(vm), "CGO_ENABLED=0") || !strings.Contains(string(vm), "vcs.revision="+rev) || !strings.Contains(string(vm), "vcs.modified=false") {
		t.Fatalf("what arrived on the host: %v\n%s", err, vm)
	}
	if _, err := os.Stat(filepath.Join(in.fleet.Dir, "alpha-home", ".local", "bin", "runwatch")); err == nil {
		t.Fatal("a runwatch that does not run there was put in place")
	}
}

func writeScript(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

// pathWith is a PATH holding only the named tools.
func pathWith(t *testing.T, tools ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range tools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("no %s", tool)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// cleanCheckout copies this checkout's files as they are now (tracked and untracked, not ignored) into a new
// git repository with one commit, so a runwatch built there records a clean revision, as one built from a
// fresh clone does, whatever state the working tree is in.
func cleanCheckout(t *testing.T) (dir, rev string) {
	t.Helper()
	if testing.Short() {
		t.Skip("copies and builds the checkout: not under -short")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	list, err := exec.Command("git", "-C", "..", "ls-files", "-co", "--exclude-standard", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	dir = t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			continue // deleted in the working tree
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "snapshot"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return dir, strings.TrimSpace(string(head))
}

// Issue 25.2: a target folder that cannot be written is a clear error naming it.
func TestInstallIntoAReadOnlyFolder(t *testing.T) {
	t.Parallel()
	ro := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro", "tmpfs", ro).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a read-only folder: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", ro).Run() })
	in := newInstaller(t, t.TempDir())
	code, out, errOut := in.run("install", "alpha", "--yes", "--dir", ro)
	if code != exitRefused || !strings.Contains(errOut, "cannot write to alpha:"+ro+": ") || !strings.Contains(errOut, "Read-only file system") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

// Issue 25.3: an older runwatch there is replaced (whole, by a rename), but never while its journal has an
// intent pending.
func TestInstallReplacesAnOlderRunwatch(t *testing.T) {
	t.Parallel()
	hostBin := t.TempDir()
	old := filepath.Join(hostBin, "runwatch")
	oldScript := []byte("#!/bin/sh\necho 'runwatch v0.1.0'\n")
	if err := os.WriteFile(old, oldScript, 0o755); err != nil {
		t.Fatal(err)
	}
	in := newInstaller(t, hostBin)
	pending := filepath.Join(in.fleet.StateHome("alpha"), "runwatch", "pending")
	if err := os.MkdirAll(pending, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pending, "a1.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := in.run("install", "alpha", "--yes", "--dir", hostBin)
	if code != exitRefused || !strings.Contains(errOut, "1 action in progress") || !strings.Contains(errOut, pending) {
		t.Fatalf("with an intent pending: exit %d\n%s%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(old); !bytes.Equal(b, oldScript) {
		t.Fatal("replaced while an intent was pending")
	}
	if err := os.Remove(filepath.Join(pending, "a1.json")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = in.run("install", "alpha", "--yes", "--dir", hostBin)
	if code != 0 || !strings.Contains(out, "replacing runwatch v0.1.0 there") || !sameBytes(t, in.bin, old) {
		t.Fatalf("replacing: exit %d\n%s%s", code, out, errOut)
	}
	if left, _ := filepath.Glob(filepath.Join(hostBin, ".runwatch.*")); len(left) > 0 {
		t.Errorf("temporary copies left: %v", left)
	}
}

// Issue 25.2: a host that cannot be reached is named with ssh's reason.
func TestInstallOnAnUnreachableHost(t *testing.T) {
	t.Parallel()
	in := newInstaller(t, t.TempDir())
	in.fleet.Kill("alpha")
	code, out, errOut := in.run("install", "alpha", "--yes")
	if code != exitRefused || !strings.Contains(errOut, "alpha cannot be reached: ") || !strings.Contains(errOut, "Connection refused") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

// Issue 25.2: the dashboard offers install on the line of a host without runwatch, confirms with what is
// copied where, and the host goes live once it is there.
func TestDashboardInstallsOnAHostWithoutRunwatch(t *testing.T) {
	t.Parallel()
	bin := buildRunwatch(t)
	fleet := sshtest.New(t, t.TempDir(), "alpha")
	root := t.TempDir()
	resumabletest.MinimalRun(t, root, "irm-dash-inst-20261201T080000Z")
	home := filepath.Join(fleet.Dir, "alpha-home")
	installed := filepath.Join(home, ".local", "bin", "runwatch")

	d := newTmuxDemo(t)
	d.env = append(d.env, "RUNWATCH_SSH_COMMAND="+strings.Join(fleet.SSHCommand(), " "),
		"XDG_RUNTIME_DIR="+filepath.Join(fleet.Dir, "rt"))
	// ~/.local/bin is not on the test host's PATH: the config names the program there, as a person would
	// after reading install's note.
	var confDir string
	for _, e := range d.env {
		if v, ok := strings.CutPrefix(e, "XDG_CONFIG_HOME="); ok {
			confDir = filepath.Join(v, "runwatch")
		}
	}
	if err := os.MkdirAll(confDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(confDir, "config.yaml"), []byte("ssh:\n  runwatch: "+installed+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exitFile := d.start(t, fmt.Sprintf("%s ssh://alpha%s", bin, root))
	d.waitText("I install")
	d.press(keys.ActInstall)
	s := d.waitText("[y/N]")
	if flat := strings.Join(strings.Fields(strings.NewReplacer("┃", " ", "│", " ").Replace(s)), ""); !strings.Contains(flat, "toalpha:"+home+"/.local/bin/runwatch") || !strings.Contains(flat, "copy"+bin) ||
		!strings.Contains(flat, "Copythisrunwatchtoalpha:"+home+"/.local/bin/runwatch?[y/N]") {
		t.Errorf("the confirmation does not say where the copy goes:\n%s", s)
	}
	d.send("y")
	d.waitText("installed alpha:")
	if !sameBytes(t, bin, installed) {
		t.Fatal("the dashboard did not install this binary")
	}
	d.waitScreen("alpha live with its run", func(s string) bool {
		return strings.Contains(s, "irm-dash-inst-20261201T080000Z") && strings.Contains(s, "● alpha")
	})
	d.press(keys.ActQuit)
	if code := d.waitExit(exitFile); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// Issue 22: `--dir` is a word of the remote shell (installDirWord quotes it with remote.ShellQuote). A folder
// whose name holds command substitution, backticks, a `;`, quotes and a glob is created and written there
// literally, on both spellings (absolute and under ~/), and nothing in it runs.
func TestInstallDirWithHostileNameRunsNothing(t *testing.T) {
	t.Parallel()
	in := newInstaller(t, t.TempDir())
	home := filepath.Join(in.fleet.Dir, "alpha-home")
	hostile := "b $(touch PWN1) `touch PWN2`; touch PWN3 'q\"*?[x]"
	abs := filepath.Join(t.TempDir(), hostile)
	for _, tc := range []struct{ dir, want string }{
		{abs, abs},
		{"~/" + hostile, filepath.Join(home, hostile)},
	} {
		code, out, errOut := in.run("install", "alpha", "--yes", "--dir", tc.dir)
		if code != 0 || !strings.Contains(out, "installed alpha:"+tc.want+"/runwatch") {
			t.Fatalf("install --dir %q: exit %d\n%s%s", tc.dir, code, out, errOut)
		}
		if !sameBytes(t, in.bin, filepath.Join(tc.want, "runwatch")) {
			t.Fatalf("install --dir %q: the binary is not at %s", tc.dir, tc.want)
		}
	}
	for _, where := range []string{home, in.fleet.Dir, filepath.Dir(abs), "."} {
		for _, pwn := range []string{"PWN1", "PWN2", "PWN3"} {
			if _, err := os.Stat(filepath.Join(where, pwn)); err == nil {
				t.Fatalf("%s/%s exists: a word of --dir ran on the host", where, pwn)
			}
		}
	}
}

// Issue 37.1: install's scripts reach the host before runwatch is there, so they too must pass a login
// shell that is not sh: it reads only `sh -s` and `cat > .runwatch-install-…`. Under dash, bash, zsh, fish
// and tcsh, a --dir with a hostile name gets the binary, nothing runs, and no upload is left in the home.
func TestInstallUnderEveryLoginShell(t *testing.T) {
	t.Parallel()
	shells := loginShells(t)
	var aliases []string
	for a := range shells {
		aliases = append(aliases, a)
	}
	in := newInstallerWith(t, t.TempDir(), buildRunwatch(t), sshtest.Options{Shells: shells}, aliases...)
	for _, alias := range aliases {
		dir := filepath.Join(t.TempDir(), fishHostile+" $(touch PWN1) `touch PWN2`; touch PWN3")
		code, out, errOut := in.run("install", alias, "--yes", "--dir", dir)
		if code != 0 || !strings.Contains(out, "installed "+alias+":"+dir+"/runwatch") {
			t.Errorf("%s: install --dir %q: exit %d\n%s%s", alias, dir, code, out, errOut)
			continue
		}
		if !sameBytes(t, in.bin, filepath.Join(dir, "runwatch")) {
			t.Errorf("%s: the binary is not at %s", alias, dir)
		}
		home := in.fleet.Home(alias)
		if left, _ := filepath.Glob(filepath.Join(home, ".runwatch-install-*")); len(left) > 0 {
			t.Errorf("%s: uploads left in the home: %v", alias, left)
		}
		for _, where := range []string{home, in.fleet.Dir, "/tmp"} {
			if pwn, _ := filepath.Glob(filepath.Join(where, "PWN*")); len(pwn) > 0 {
				t.Errorf("%s: %v exist: a word of --dir ran on the host", alias, pwn)
			}
		}
	}
}

// Issue 37.7: "already there" is decided by the bytes. Another build that prints the same version (a
// (devel) or (modified) build) is replaced; the same bytes are not copied again.
func TestInstallReplacesAnotherBuildOfTheSameVersion(t *testing.T) {
	t.Parallel()
	hostBin := t.TempDir()
	in := newInstaller(t, hostBin)
	b, err := os.ReadFile(in.bin)
	if err != nil {
		t.Fatal(err)
	}
	there := filepath.Join(hostBin, "runwatch")
	// A byte more at the end of the ELF file: it runs, and says the same version, and is not this binary.
	if err := os.WriteFile(there, append(b, '\n'), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := in.run("install", "alpha", "--yes", "--dir", hostBin)
	if code != 0 || !strings.Contains(out, "(another build: other bytes) there") || !sameBytes(t, in.bin, there) {
		t.Fatalf("another build of the same version: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = in.run("install", "alpha", "--yes", "--dir", hostBin)
	if code != 0 || !strings.Contains(out, "is this runwatch already") || !strings.Contains(out, "the same bytes") {
		t.Fatalf("the same bytes: exit %d\n%s%s", code, out, errOut)
	}
}

// Issue 37.8: an action that begins on the host after install asked (while the person answers) still stops
// the replacement: the copy script counts the intents again right before its rename. Here the intent
// appears during the copy itself (the host's chmod, which only the copy runs, writes it).
func TestInstallRechecksPendingActionsAtTheCopy(t *testing.T) {
	t.Parallel()
	hostBin := t.TempDir()
	old := filepath.Join(hostBin, "runwatch")
	oldScript := []byte("#!/bin/sh\necho 'runwatch v0.1.0'\n")
	if err := os.WriteFile(old, oldScript, 0o755); err != nil {
		t.Fatal(err)
	}
	chmod := "#!/bin/sh\np=\"$XDG_STATE_HOME/runwatch/pending\"\nmkdir -p \"$p\" && echo '{}' > \"$p/a1.json\"\nexec /bin/chmod \"$@\"\n"
	if err := os.WriteFile(filepath.Join(hostBin, "chmod"), []byte(chmod), 0o755); err != nil {
		t.Fatal(err)
	}
	in := newInstaller(t, hostBin)
	code, out, errOut := in.run("install", "alpha", "--yes", "--dir", hostBin)
	pending := filepath.Join(in.fleet.StateHome("alpha"), "runwatch", "pending")
	if code != exitRefused || !strings.Contains(errOut, "1 action in progress") || !strings.Contains(errOut, pending) {
		t.Fatalf("an intent that appeared after the probe: exit %d\n%s%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(old); string(b) != string(oldScript) {
		t.Fatal("replaced while an intent was pending")
	}
	if left, _ := filepath.Glob(filepath.Join(hostBin, ".runwatch.*")); len(left) > 0 {
		t.Errorf("temporary copies left: %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(in.fleet.Home("alpha"), ".runwatch-install-*")); len(left) > 0 {
		t.Errorf("uploads left: %v", left)
	}
}

// Issue 37.13: what install prints to paste is quoted for where it is pasted. The folder is the host's
// answer: the export line, run by sh, puts exactly that folder on PATH and runs nothing (Go's %q, before,
// left $(…) and backticks to the shell); the scp line is the words meant; the config line is offered only
// for a folder ssh.runwatch accepts, as YAML.
func TestInstallAdviceIsQuotedForWhereItIsPasted(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	dir := "/srv/b $(touch PWN1) `touch PWN2`; touch PWN3 'q\"*?[x] \\ $HOME"
	var b strings.Builder
	pathAdvice(&b, remote.Root{Host: "build1"}, dir, "")
	var export string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "export PATH=") {
			export = strings.TrimSpace(l)
		}
	}
	if export == "" || !strings.Contains(b.String(), "for sh, bash or zsh") {
		t.Fatalf("no export line for sh, bash or zsh in:\n%s", b.String())
	}
	words := func(line string) []string {
		t.Helper()
		c := exec.Command("sh", "-c", line+"\nprintf '%s\\n' \"$PATH\"")
		c.Dir = cwd
		c.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + cwd}
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("sh -c %q: %v\n%s", line, err, out)
		}
		return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	}
	if got := words(export); len(got) != 1 || got[0] != dir+":/usr/bin:/bin" {
		t.Errorf("the pasted line set PATH to %q, want the folder first", got)
	}
	if strings.Contains(b.String(), "ssh: {runwatch:") || !strings.Contains(b.String(), "config cannot name it") {
		t.Errorf("a config line offered for a folder ssh.runwatch refuses:\n%s", b.String())
	}
	scp := scpLine(remote.Root{Host: "build1", Port: "2222"}, "runwatch-linux-arm64", dir)
	if got := words("set -- " + scp + "\nPATH=$(printf '%s|' \"$@\")"); len(got) != 1 ||
		got[0] != "scp|-P|2222|runwatch-linux-arm64|build1:"+dir+"/runwatch|" {
		t.Errorf("the scp line %q is the words %q", scp, got)
	}
	for _, pwn := range []string{"PWN1", "PWN2", "PWN3"} {
		if _, err := os.Stat(filepath.Join(cwd, pwn)); err == nil {
			t.Errorf("pasting a line ran %s", pwn)
		}
	}

	b.Reset()
	pathAdvice(&b, remote.Root{Host: "build1"}, "/opt/rw-1.2/bin", "")
	var cfg struct {
		SSH struct{ Runwatch string } `yaml:"ssh"`
	}
	_, line, _ := strings.Cut(b.String(), "config here: ")
	line, _, _ = strings.Cut(line, "\n")
	if err := yaml.Unmarshal([]byte(line), &cfg); err != nil || cfg.SSH.Runwatch != "/opt/rw-1.2/bin/runwatch" {
		t.Errorf("the config line %q reads as %+v, %v", line, cfg, err)
	}
}
