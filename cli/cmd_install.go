package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"runwatch/config"
	"runwatch/plural"
	"runwatch/remote"
	"runwatch/shellword"
)

func init() {
	register(command{
		name:    "install",
		summary: "copy this runwatch to HOST over ssh (to ~/.local/bin), so remote roots on HOST work",
		args:    "HOST",
		about: "HOST is [user@]host as ssh takes it (an alias of your ssh config works), or ssh://[user@]host[:port]. " +
			"runwatch asks HOST its system and architecture (uname -sm); when they are this binary's, it copies itself " +
			"to DIR on HOST under a temporary name, checks that it runs there (runwatch version), and renames it into " +
			"place, so a runwatch already there is replaced whole or not at all. It says when DIR is not on the PATH " +
			"that ssh commands get on HOST, and what to add. For a host of another system (macOS, FreeBSD) or architecture, " +
			"this very version is built for it first, when a Go toolchain is here and the clean git checkout this runwatch " +
			"was built from still is (GOOS and GOARCH of the host, CGO_ENABLED=0), and that build is copied with the same " +
			"checks; otherwise runwatch prints the commands that build and copy it. A runwatch on HOST that has an action in progress (a pending intent in its " +
			"journal) is not replaced.",
		examples: []example{
			{"install on build1, asking first", "runwatch install build1"},
			{"install into a folder of your choosing, without asking", "runwatch install pete@build1 --dir /opt/runwatch/bin --yes"},
		},
		define: defineInstall,
	})
}

const defaultInstallDir = "~/.local/bin"

func defineInstall(fs *flagSet) runFunc {
	dir := fs.String("dir", defaultInstallDir, "the `DIR` on HOST to install into (~/ is HOST's home)")
	yes := fs.Bool("yes", false, "do not ask for confirmation")
	var common commonFlags
	common.registerConfig(fs) // the run-reading flags (--max-depth, --stale-after …) mean nothing here
	return func(args []string, stdout, stderr io.Writer) int {
		if len(args) != 1 {
			return usageError(stderr, "install", "takes one HOST, got %d arguments", len(args))
		}
		cfg, err := common.resolve(config.Overrides{})
		if err != nil {
			return configError(stderr, "install", err)
		}
		host, err := installHost(args[0])
		if err != nil {
			return usageError(stderr, "install", "%v", err)
		}
		if *dir == "" {
			return usageError(stderr, "install", "--dir must not be empty")
		}
		return runInstall(fs.env, host, *dir, *yes, cfg, sanitizingWriter{stdout}, sanitizingWriter{stderr})
	}
}

// installHost reads HOST: [user@]host, or a root (ssh://… or host:path) whose host is meant.
func installHost(arg string) (remote.Root, error) {
	if r, isRemote, err := remote.Parse(arg); err != nil || isRemote {
		return r, err
	}
	r, _, err := remote.Parse("ssh://" + arg + "/")
	if err != nil {
		return remote.Root{}, fmt.Errorf("%q is not a host: %v", arg, err)
	}
	return r, nil
}

// platformOf maps `uname -sm` onto Go's GOOS and GOARCH; ok is false for a machine Go's names do not cover.
func platformOf(uname string) (goos, goarch string, ok bool) {
	f := strings.Fields(uname)
	if len(f) != 2 {
		return "", "", false
	}
	goos = strings.ToLower(f[0])
	if goos != "linux" && goos != "darwin" && goos != "freebsd" && goos != "openbsd" && goos != "netbsd" {
		return "", "", false
	}
	arch := map[string]string{
		"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "armv7l": "arm", "armv6l": "arm",
		"i386": "386", "i686": "386", "riscv64": "riscv64", "ppc64le": "ppc64le", "s390x": "s390x", "loongarch64": "loong64",
	}[f[1]]
	return goos, arch, arch != ""
}

// installDirWord is dir as a word of the remote shell: ~/ (or a relative DIR) is the host's home, through
// $HOME, the rest quoted.
func installDirWord(dir string) string {
	switch {
	case dir == "~":
		return `"$HOME"`
	case strings.HasPrefix(dir, "~/"):
		return `"$HOME"/` + shellword.Quote(strings.TrimPrefix(dir, "~/"))
	case strings.HasPrefix(dir, "/"):
		return shellword.Quote(dir)
	}
	return `"$HOME"/` + shellword.Quote(dir)
}

// installPending counts, into n, the intents in that host's journal (pending/, beside it): whole ones
// (*.json) and ones being written (.*.tmp). The probe and the copy both run it.
const installPending = `p="${XDG_STATE_HOME:-$HOME/.local/state}/runwatch/pending"
n=0
for f in "$p"/*.json "$p"/.*.tmp; do [ -e "$f" ] && n=$((n+1)); done
`

// The probe says, one key=value a line, where DIR is, which runwatch is there (its version lines and the
// SHA-256 of its bytes, with whichever of sha256sum, shasum or sha256 the host has), which one ssh commands
// find on the PATH, and how many intents wait in that host's journal.
const installProbe = `d=%s
echo "dir=$d"
if [ -x "$d/runwatch" ]; then
  "$d/runwatch" version </dev/null 2>/dev/null | sed 's/^/version=/'
  echo "existing=yes"
  s=
  if command -v sha256sum >/dev/null 2>&1; then s=$(sha256sum < "$d/runwatch")
  elif command -v shasum >/dev/null 2>&1; then s=$(shasum -a 256 < "$d/runwatch")
  elif command -v sha256 >/dev/null 2>&1; then s=$(sha256 -q < "$d/runwatch"); fi
  echo "sha256=${s%%%% *}"
fi
echo "onpath=$(command -v runwatch 2>/dev/null)"
` + installPending + `echo "pendingdir=$p"
echo "pending=$n"
`

// The copy: the binary, uploaded first to a random name in the session's folder (%[2]s), goes under a
// temporary name in DIR, is checked whole (its size) and runnable there, and the journal is checked for
// intents again, right before the rename that replaces the runwatch there, if any, in one step: an action
// that began while the person answered stops it (exit 5).
const installCopy = `d=%[1]s
u=%[2]s
t=
trap 'rm -f "$u"; [ -z "$t" ] || rm -f "$t"' EXIT
mkdir -p "$d" || exit 3
t=$(mktemp "$d/.runwatch.XXXXXX") || exit 3
cat "$u" > "$t" || exit 3
[ "$(wc -c < "$t" | tr -d ' ')" = %[3]d ] || { echo "the copy on the host is not whole" >&2; exit 4; }
chmod 755 "$t" || exit 3
"$t" version </dev/null > /dev/null || { echo "the copied runwatch does not run there" >&2; exit 4; }
` + installPending + `[ "$n" = 0 ] || { echo "pendingdir=$p"; echo "pending=$n"; exit 5; }
mv -f "$t" "$d/runwatch" || exit 3
t=
"$d/runwatch" version </dev/null | sed -n '1s/^/version=/p'
echo "onpath=$(command -v runwatch 2>/dev/null)"
`

func runInstall(e env, host remote.Root, dir string, yes bool, cfg config.Config, stdout, stderr io.Writer) int {
	p, done, err := prepareInstall(sshFor(e.getenv, cfg), host, dir)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch install: %v\n", err)
		return exitRefused
	}
	if done != "" {
		fmt.Fprint(stdout, done)
		return exitOK
	}
	defer p.close()
	fmt.Fprintln(stdout, p.summary)
	if !yes {
		if !e.stdinIsTerminal() {
			fmt.Fprintf(stderr, "runwatch install: refused: no terminal to confirm on; pass --yes to install on %s\n", host.Label())
			return exitRefused
		}
		fmt.Fprint(stdout, p.Question()+" [y/N] ")
		answer, _ := bufio.NewReader(e.confirmations()).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(stderr, "runwatch install: refused: not confirmed")
			return exitRefused
		}
	}
	out, err := p.apply()
	if err != nil {
		fmt.Fprintf(stderr, "runwatch install: %v\n", err)
		return exitRefused
	}
	fmt.Fprint(stdout, out)
	return exitOK
}

// installPlan is a copy of this runwatch to a host, checked and waiting for its confirmation: the dashboard
// shows it in its confirmation dialog (app.Planned), the command line asks y/N.
type installPlan struct {
	ssh     remote.SSH
	host    remote.Root
	dirWord string
	where   string
	bin     *os.File
	size    int64
	summary string // one line, for the command line
	what    string // this binary: its version, platform and size
	old     string // the runwatch there it replaces ("" when none)
	cleanup func() // removes a binary built for the host (install_build.go)
}

func (p *installPlan) close() {
	p.bin.Close()
	p.cleanup()
}

func (p *installPlan) Summary() string { return "Install this runwatch on " + p.host.Label() }
func (p *installPlan) Preview() string {
	var b strings.Builder
	fmt.Fprintf(&b, "copy      %s\n          %s\nto        %s:%s/runwatch\n", p.bin.Name(), p.what, p.host.Label(), p.where)
	if p.old != "" {
		fmt.Fprintf(&b, "replacing %s\n", p.old)
	}
	b.WriteString("\nWritten there under a temporary name, checked that it runs (runwatch version), then renamed into place.\n")
	return b.String()
}
func (p *installPlan) TypedConfirmation() string { return "" }

// Question is what the confirmation asks: what the copy writes, and where.
func (p *installPlan) Question() string {
	return "Copy this runwatch to " + p.host.Label() + ":" + p.where + "/runwatch?"
}

func (p *installPlan) Apply(string) (string, error) {
	defer p.close()
	out, err := p.apply()
	return strings.TrimSpace(strings.ReplaceAll(out, "\n", " ")), err
}

// prepareInstall asks host what it is and what it has, and returns the copy to make, or (done) what to say
// when there is nothing to copy, or why it is refused.
func prepareInstall(s remote.SSH, host remote.Root, dir string) (p *installPlan, done string, err error) {
	label := host.Label()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	script := func(sh string) (string, string, int, error) {
		out, errb, code, err := s.Script(ctx, host, sh)
		return string(out), string(errb), code, err
	}

	uname, errb, code, err := script("uname -sm </dev/null")
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("%s: %v", label, err)
	case code == 255:
		return nil, "", fmt.Errorf("%s", remote.Explain(host, code, []byte(errb)))
	case code != 0:
		return nil, "", fmt.Errorf("%s: uname -sm failed: %s", label, remote.Explain(host, code, []byte(errb)))
	}
	uname = strings.TrimSpace(uname)
	goos, goarch, ok := platformOf(uname)
	switch {
	case !ok:
		return nil, "", fmt.Errorf("%s is %q, a system runwatch is not built for", label, uname)
	case goos != "linux" && goos != "darwin" && goos != "freebsd":
		return nil, "", fmt.Errorf("%s is %s (%s/%s): runwatch is built for Linux, macOS and FreeBSD only (README, Platforms)", label, uname, goos, goarch)
	}

	dirWord := installDirWord(dir)
	probe, errb, code, err := script(fmt.Sprintf(installProbe, dirWord))
	if err != nil || code != 0 {
		return nil, "", fmt.Errorf("%s: %s", label, firstNonEmpty(errString(err), remote.Explain(host, code, []byte(errb))))
	}
	facts, theirs := installFacts(probe)
	where := facts["dir"]
	if err := pendingRefusal(label, facts); err != nil {
		return nil, "", err
	}
	exe, version, from, cleanup := "", ownVersion(), "", func() {}
	if goos != runtime.GOOS || goarch != runtime.GOARCH {
		bin, v, built, tmp, err := crossBuild(goos, goarch)
		if err != nil {
			return nil, "", fmt.Errorf("%s is %s (%s/%s), this runwatch is %s/%s, and it cannot build this version for it here: %v. "+
				"Build it and copy it there (in sh, bash or zsh):\n%s", label, uname, goos, goarch, runtime.GOOS, runtime.GOARCH, err, crossCommands(goos, goarch, host, dir))
		}
		cleanup = func() { os.RemoveAll(tmp) }
		defer func() {
			if p == nil {
				cleanup()
			}
		}()
		exe, version, from = bin, v, ", "+built
	}
	ours := strings.Split(strings.TrimSpace(version), "\n")
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, "", fmt.Errorf("cannot find this runwatch's own binary: %v", err)
		}
	}
	f, err := os.Open(exe)
	if err != nil {
		return nil, "", fmt.Errorf("cannot read this runwatch's own binary: %v", err)
	}
	sum := sha256.New()
	size, err := io.Copy(sum, f)
	if err != nil {
		f.Close()
		return nil, "", fmt.Errorf("cannot read this runwatch's own binary: %v", err)
	}
	// The same bytes, not the same version text: two builds of (devel) or (modified) say the same and differ.
	if facts["existing"] == "yes" && facts["sha256"] == hex.EncodeToString(sum.Sum(nil)) {
		f.Close()
		var b strings.Builder
		fmt.Fprintf(&b, "%s:%s/runwatch is this runwatch already (%s, the same bytes)\n", label, where, ours[0])
		pathAdvice(&b, host, where, facts["onpath"])
		return nil, b.String(), nil
	}
	what := fmt.Sprintf("%s, %s/%s, %.1f MB%s", ours[0], goos, goarch, float64(size)/1e6, from)
	summary := fmt.Sprintf("Copy %s (%s) to %s:%s/runwatch", exe, what, label, where)
	old := ""
	if facts["existing"] == "yes" {
		old = "a runwatch that does not say its version"
		if len(theirs) > 0 {
			old = theirs[0]
		}
		if len(theirs) > 0 && strings.Join(theirs, "\n") == strings.Join(ours, "\n") {
			old += " (another build: other bytes)"
		}
		summary += ", replacing " + old + " there"
	}
	return &installPlan{ssh: s, host: host, dirWord: dirWord, where: where, bin: f, size: size, summary: summary, what: what, old: old, cleanup: cleanup}, "", nil
}

// installFacts reads the key=value lines of the probe or the copy; the version lines, in order, apart.
func installFacts(out string) (facts map[string]string, versions []string) {
	facts = map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, "=")
		if k == "version" {
			versions = append(versions, v)
			continue
		}
		facts[k] = v
	}
	return facts, versions
}

// pendingRefusal refuses to replace a runwatch whose journal has intents (installPending counted them).
func pendingRefusal(label string, facts map[string]string) error {
	if n, _ := strconv.Atoi(facts["pending"]); n > 0 {
		return fmt.Errorf("%s: its runwatch has %s in progress or left half done by a crash (intents in %s): "+
			"not replacing it now; the next action on that run finishes it; then run this again", label, plural.Count(n, "action", "actions"), facts["pendingdir"])
	}
	return nil
}

// apply makes the copy and says what was installed, and whether ssh commands there will find it.
func (p *installPlan) apply() (string, error) {
	label := p.host.Label()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := p.bin.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	// The binary goes up first, on its own, under a random name: a fixed line (Upload), never a word of DIR.
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	upload := ".runwatch-install-" + hex.EncodeToString(rnd[:])
	if errb, code, err := p.ssh.Upload(ctx, p.host, upload, p.bin); err != nil || code != 0 {
		// Whatever part of it arrived is removed; if even that fails, it is a file in the home there, named.
		_, _, _, _ = p.ssh.Script(ctx, p.host, "rm -f "+upload)
		if err != nil {
			return "", fmt.Errorf("%s: %v", label, err)
		}
		return "", fmt.Errorf("%s: cannot upload the binary to ~/%s there: %s", label, upload, remote.Explain(p.host, code, errb))
	}
	outb, errbb, code, err := p.ssh.Script(ctx, p.host, fmt.Sprintf(installCopy, p.dirWord, upload, p.size))
	out, errb := string(outb), string(errbb)
	after, _ := installFacts(out)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s: %v", label, err)
	case code == 255:
		return "", fmt.Errorf("%s: %s; whether the copy was made is unknown: run this again", label, remote.Explain(p.host, code, errbb))
	case code == 3:
		return "", fmt.Errorf("cannot write to %s:%s: %s", label, p.where, firstNonEmpty(lastLine(errb), "no reason given"))
	case code == 5:
		return "", pendingRefusal(label, after)
	case code != 0:
		return "", fmt.Errorf("%s: %s", label, firstNonEmpty(lastLine(errb), fmt.Sprintf("the copy failed (exit %d)", code)))
	}
	_, versions := installFacts(out)
	version := ""
	if len(versions) > 0 {
		version = versions[0]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "installed %s:%s/runwatch: %s\n", label, p.where, version)
	pathAdvice(&b, p.host, p.where, after["onpath"])
	return b.String(), nil
}

// pathAdvice says whether the runwatch ssh commands find on host is the one in dir, and if not what to add.
// dir is what the host said: each line to paste quotes it for where it is pasted.
func pathAdvice(w io.Writer, host remote.Root, dir, onPath string) {
	if onPath == dir+"/runwatch" {
		return
	}
	found := "finds no runwatch"
	if onPath != "" {
		found = "finds " + onPath
	}
	label := host.Label()
	fmt.Fprintf(w, "note: %s is not on the PATH that ssh commands get on %s (which %s). Add it there where a "+
		"non-interactive shell reads it (for sh, bash or zsh: ~/.bashrc before any early return, or ~/.zshenv):\n  %s\n",
		dir, label, found, exportPathLine(dir))
	prog := dir + "/runwatch"
	if remote.CheckProgram(prog) == nil {
		fmt.Fprintf(w, "or name it in runwatch's config here: ssh: {runwatch: %s}\n", yamlString(prog))
	} else {
		fmt.Fprintf(w, "(runwatch's config cannot name it as ssh.runwatch: %v)\n", remote.CheckProgram(prog))
	}
}

// exportPathLine is the line that puts dir first on PATH, for sh, bash or zsh, which is where it is pasted:
// dir quoted for them (never Go's %q, whose "…" leaves $(…) and backticks to the shell).
func exportPathLine(dir string) string { return "export PATH=" + shellword.Quote(dir) + `:"$PATH"` }

// yamlString is s as a YAML double-quoted scalar, which is pasted into runwatch's config: JSON's string
// escapes are YAML's.
func yamlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// scpLine is the command, for sh, bash or zsh, that copies the local file to dir/runwatch on host: the
// destination one word quoted for them (scp then reads it as a path; ~/ is the home there).
func scpLine(host remote.Root, file, dir string) string {
	port := ""
	if host.Port != "" {
		port = "-P " + host.Port + " "
	}
	return "scp " + port + shellword.Quote(file) + " " + shellword.Quote(host.Dest()+":"+dir+"/runwatch")
}

// ownVersion is what `runwatch version` prints for this binary.
func ownVersion() string {
	var b strings.Builder
	runVersion(nil, &b, io.Discard)
	return b.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func firstNonEmpty(a ...string) string {
	for _, s := range a {
		if s != "" {
			return s
		}
	}
	return ""
}
