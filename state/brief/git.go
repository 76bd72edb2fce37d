package brief

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runwatch/plural"
	"strconv"
	"strings"
	"time"
)

const defaultGitTimeout = 5 * time.Second

// GitReport is the result of the local git checks a resumable run's stop conditions need.
type GitReport struct {
	RepoRoot string `json:"repo_root"`
	// Note says why no check could run (git missing, repo missing), empty when they ran.
	Note   string     `json:"note,omitempty"`
	Head   string     `json:"head,omitempty"`
	Checks []GitCheck `json:"checks"`
}

// GitCheck is one check: Result is "ok", "failed" (a stop condition) or "skipped" (could not be checked).
type GitCheck struct {
	Name   string `json:"name"`
	Result string `json:"result"`
	Detail string `json:"detail"`
	// Paths are the first changed paths of a dirty worktree.
	Paths []string `json:"paths,omitempty"`
}

// Names of the git checks.
const (
	CheckWorktreeClean = "worktree-clean"
	CheckHeadIsLast    = "head-is-last-committed"
	CheckBasePin       = "base-pin-present"
)

const (
	resultOK      = "ok"
	resultFailed  = "failed"
	resultSkipped = "skipped"
)

// dirtyPathsShown caps the changed paths a brief lists.
const dirtyPathsShown = 10

var shaPattern = regexp.MustCompile(`^[0-9a-fA-F]{4,64}$`)

// gitRunner runs read-only git commands in one repository. Nothing it runs may contact a remote, write, or
// execute a program the repository configures: REPO_ROOT comes from a run file, and its .git/config is as
// untrusted as the rest. git has no switch to ignore a repository's own config, so every key through which
// config names a program is overridden with an empty value (which git takes as "none"): the fixed keys below,
// and each filter and diff driver the repository defines, found by reading the config (which runs nothing).
// The overrides travel as GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n pairs, so a driver name holding '=' cannot
// split one. Submodules are not entered (their config would define drivers of its own).
type gitRunner struct {
	program string // git, or the path Options.Git gives
	repo    string
	timeout time.Duration
	// overrides are the config keys set for every command; filters names the repository's filter drivers.
	overrides [][2]string
	filters   []string
}

// fixedOverrides disarm the keys that name programs independently of any driver.
var fixedOverrides = [][2]string{
	{"core.fsmonitor", "false"}, {"core.hooksPath", "/dev/null"}, {"diff.external", ""},
	{"credential.helper", ""}, {"core.sshCommand", ""}, {"core.askPass", ""}, {"core.pager", "cat"},
	{"core.editor", ":"}, {"gpg.program", ""}, {"core.alternateRefsCommand", ""}, {"protocol.allow", "never"},
	{"status.submoduleSummary", "false"}, {"submodule.recurse", "false"},
}

// driverKey matches the config keys of drivers that run programs: filter.<name>.{clean,smudge,process} and
// diff.<name>.{textconv,command}, merge.<name>.driver.
var driverKey = regexp.MustCompile(`^(filter|diff|merge)\.(.+)\.(clean|smudge|process|textconv|command|driver)$`)

// disarm reads the repository's config for driver keys and adds an empty override for each.
func (g *gitRunner) disarm() error {
	g.overrides = append([][2]string(nil), fixedOverrides...)
	out, err := g.run("config", "-z", "--get-regexp", `^(filter|diff|merge)\..*\.(clean|smudge|process|textconv|command|driver)$`)
	var ge *gitError
	if err != nil && !(errors.As(err, &ge) && ge.exit == 1) { // exit 1: no such key
		return err
	}
	seen := map[string]bool{}
	for _, rec := range strings.Split(out, "\x00") {
		key, _, _ := strings.Cut(rec, "\n")
		m := driverKey.FindStringSubmatch(key)
		if m == nil || seen[key] {
			continue
		}
		seen[key] = true
		g.overrides = append(g.overrides, [2]string{key, ""})
		if m[1] == "filter" && !seen["filter "+m[2]] {
			seen["filter "+m[2]] = true
			g.filters = append(g.filters, m[2])
			g.overrides = append(g.overrides, [2]string{"filter." + m[2] + ".required", "false"})
		}
	}
	return nil
}

func (g gitRunner) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	full := append([]string{"--no-optional-locks", "-C", g.repo}, args...)
	cmd := exec.CommandContext(ctx, g.program, full...)
	env := append(os.Environ(), "GIT_NO_LAZY_FETCH=1", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C",
		"GIT_EXTERNAL_DIFF=", "GIT_ASKPASS=", "SSH_ASKPASS=", "GIT_PAGER=cat", "GIT_CONFIG_PARAMETERS=")
	overrides := g.overrides
	if overrides == nil {
		overrides = fixedOverrides
	}
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(overrides)))
	for i, kv := range overrides {
		env = append(env, "GIT_CONFIG_KEY_"+strconv.Itoa(i)+"="+kv[0], "GIT_CONFIG_VALUE_"+strconv.Itoa(i)+"="+kv[1])
	}
	cmd.Env = env
	cmd.WaitDelay = time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("git %s timed out after %s", args[0], g.timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), &gitError{exit: exitCode(err), msg: msg}
	}
	return out.String(), nil
}

type gitError struct {
	exit int
	msg  string
}

func (e *gitError) Error() string { return e.msg }

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// checkGit runs the three checks against repoRoot. lastSHA and basePin may be empty (then that check is
// skipped and says so).
func checkGit(git, repoRoot, lastSHA, basePin string, timeout time.Duration, skip bool) GitReport {
	if git == "" {
		git = "git"
	}
	rep := GitReport{RepoRoot: repoRoot}
	skipAll := func(why string) GitReport {
		rep.Note = why
		for _, name := range []string{CheckWorktreeClean, CheckHeadIsLast, CheckBasePin} {
			rep.Checks = append(rep.Checks, GitCheck{Name: name, Result: resultSkipped, Detail: why})
		}
		return rep
	}
	switch {
	case skip:
		return skipAll("git checks were not run")
	case strings.TrimSpace(repoRoot) == "":
		return skipAll("REPO_ROOT is not set in the state file")
	case !filepath.IsAbs(repoRoot):
		// Relative to what is unknowable here: the writer's working directory is not recorded.
		return skipAll("REPO_ROOT " + strconv.Quote(repoRoot) + " is not an absolute path, so nothing was checked")
	}
	if _, err := exec.LookPath(git); err != nil {
		return skipAll("git is not installed here (not on PATH), so nothing was checked")
	}
	if st, err := os.Stat(repoRoot); err != nil {
		return skipAll("REPO_ROOT " + repoRoot + " does not exist on this machine, so nothing was checked")
	} else if !st.IsDir() {
		return skipAll("REPO_ROOT " + repoRoot + " is not a directory, so nothing was checked")
	}
	g := gitRunner{program: git, repo: repoRoot, timeout: timeout}
	if err := g.disarm(); err != nil {
		return skipAll("the git config of REPO_ROOT " + repoRoot + " could not be read (git: " + err.Error() + "), so nothing was checked")
	}
	if out, err := g.run("rev-parse", "--is-inside-work-tree"); err != nil || strings.TrimSpace(out) != "true" {
		why := "REPO_ROOT " + repoRoot + " is not a git work tree"
		if err != nil {
			why += " (git: " + err.Error() + ")"
		}
		return skipAll(why + ", so nothing was checked")
	}
	rep.Checks = append(rep.Checks, checkClean(g))
	head, headErr := g.run("rev-parse", "--verify", "-q", "HEAD^{commit}")
	rep.Head = strings.TrimSpace(head)
	rep.Checks = append(rep.Checks, checkHead(g, rep.Head, headErr, lastSHA))
	rep.Checks = append(rep.Checks, checkBasePin(g, basePin))
	return rep
}

func checkClean(g gitRunner) GitCheck {
	c := GitCheck{Name: CheckWorktreeClean}
	out, err := g.run("status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignore-submodules=all")
	if err != nil {
		c.Result, c.Detail = resultSkipped, "git status failed: "+err.Error()
		return c
	}
	fields := strings.Split(out, "\x00")
	changed := 0
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		changed++
		if len(c.Paths) < dirtyPathsShown {
			c.Paths = append(c.Paths, strings.TrimSpace(f[:2])+" "+f[3:])
		}
		if f[0] == 'R' || f[0] == 'C' {
			i++ // -z puts a rename's source path in the next field
		}
	}
	if changed == 0 {
		c.Result, c.Detail = resultOK, "the worktree is clean"
		return c
	}
	c.Result = resultFailed
	c.Detail = fmt.Sprintf("the worktree has %d uncommitted %s", changed, plural.Word(changed, "change", "changes"))
	if len(g.filters) > 0 {
		// Without its filters git compares raw bytes with filtered blobs (git-lfs pointers, say), so a
		// change it reports may be only the filter's doing: runwatch cannot tell without running them.
		c.Result = resultSkipped
		c.Detail = fmt.Sprintf("git status, run without the repository's filter drivers (%s, which runwatch never runs), reports %d %s; they may be only what the filters would undo: run `git status` in %s yourself if you trust its config",
			strings.Join(g.filters, ", "), changed, plural.Word(changed, "change", "changes"), g.repo)
	}
	return c
}

func checkHead(g gitRunner, head string, headErr error, last string) GitCheck {
	c := GitCheck{Name: CheckHeadIsLast}
	last = strings.TrimSpace(last)
	switch {
	case last == "":
		c.Result, c.Detail = resultSkipped, "LAST_COMMITTED_SHA is not set, so there is nothing to compare HEAD with"
		return c
	case headErr != nil || head == "":
		c.Result, c.Detail = resultFailed, "the repository has no HEAD commit, but LAST_COMMITTED_SHA is "+last
		return c
	case !shaPattern.MatchString(last):
		c.Result, c.Detail = resultFailed, "LAST_COMMITTED_SHA "+strconv.Quote(last)+" is not a commit id"
		return c
	case strings.HasPrefix(strings.ToLower(head), strings.ToLower(last)):
		c.Result, c.Detail = resultOK, "HEAD is LAST_COMMITTED_SHA "+short(head)
		return c
	}
	c.Result = resultFailed
	full, err := g.run("rev-parse", "--verify", "-q", last+"^{commit}")
	if err != nil {
		c.Detail = "HEAD " + short(head) + " is not LAST_COMMITTED_SHA " + short(last) + ", which is not a commit in this repository"
		return c
	}
	full = strings.TrimSpace(full)
	if _, err := g.run("merge-base", "--is-ancestor", full, head); err == nil {
		n, _ := g.run("rev-list", "--count", full+".."+head)
		count := strings.TrimSpace(n)
		c.Detail = "HEAD " + short(head) + " has moved on " + count + " " + plural.Word(atoiOr(count), "commit", "commits") +
			" past LAST_COMMITTED_SHA " + short(full)
		return c
	}
	c.Detail = "HEAD " + short(head) + " does not descend from LAST_COMMITTED_SHA " + short(full) +
		": the branch was switched, reset or rewritten"
	return c
}

func checkBasePin(g gitRunner, pin string) GitCheck {
	c := GitCheck{Name: CheckBasePin}
	pin = strings.TrimSpace(pin)
	switch {
	case pin == "":
		c.Result, c.Detail = resultSkipped, "BASE_PIN_SHA is not set"
		return c
	case !shaPattern.MatchString(pin):
		c.Result, c.Detail = resultFailed, "BASE_PIN_SHA "+strconv.Quote(pin)+" is not a commit id"
		return c
	}
	if _, err := g.run("cat-file", "-e", pin+"^{commit}"); err != nil {
		c.Result, c.Detail = resultFailed, "BASE_PIN_SHA "+short(pin)+" is not a commit in this repository (not fetched, or the history was rewritten)"
		return c
	}
	c.Result, c.Detail = resultOK, "BASE_PIN_SHA "+short(pin)+" is present"
	return c
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func atoiOr(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}
