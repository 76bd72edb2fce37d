package brief

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGitChecksSayWhyTheyDidNotRun(t *testing.T) {
	cases := map[string]string{
		"":                  "REPO_ROOT is not set",
		"src/repo":          "not an absolute path",
		"/no/such/repo/dir": "does not exist on this machine",
		t.TempDir():         "is not a git work tree",
	}
	for repo, want := range cases {
		rep := checkGit("", repo, "abc1234", "abc1234", time.Second, false)
		if !strings.Contains(rep.Note, want) || len(rep.Checks) != 3 {
			t.Errorf("REPO_ROOT %q: note %q, want it to contain %q, with 3 skipped checks", repo, rep.Note, want)
		}
		for _, c := range rep.Checks {
			if c.Result != resultSkipped {
				t.Errorf("REPO_ROOT %q: check %s is %s, want skipped", repo, c.Name, c.Result)
			}
		}
	}
}

func TestGitChecksRejectOptionLikeValues(t *testing.T) {
	g := newGitRepo(t, t.TempDir())
	head := g.commit("a.txt", "a\n")
	rep := checkGit("", g.dir, "--output=/tmp/x", "-h", time.Second, false)
	for _, c := range rep.Checks[1:] {
		if c.Result != resultFailed || !strings.Contains(c.Detail, "is not a commit id") {
			t.Errorf("%s: %s %q", c.Name, c.Result, c.Detail)
		}
	}
	short := checkGit("", g.dir, head[:8], head[:8], time.Second, false)
	for _, c := range short.Checks {
		if c.Result != resultOK {
			t.Errorf("abbreviated ids: %s is %s (%s)", c.Name, c.Result, c.Detail)
		}
	}
}

// A repository's own config must never make the brief run a program: clean, smudge and process filters,
// fsmonitor, hooks, textconv, external diff, merge drivers, credential helpers. Each is set to a command that
// leaves a mark; plain `git status` proves the repository is armed, then the checks must leave no mark.
func TestGitChecksRunNoRepositoryProgram(t *testing.T) {
	dir := t.TempDir()
	g := newGitRepo(t, filepath.Join(dir, "repo"))
	marks := filepath.Join(dir, "marks")
	os.MkdirAll(marks, 0o755)
	mark := func(name string) string { return "touch " + filepath.Join(marks, name) }
	writeFile(t, filepath.Join(g.dir, ".gitattributes"), "*.txt filter=evil diff=evil merge=evil\n*.md filter=ev=il\n")
	g.git("config", "filter.evil.clean", mark("clean")+"; cat")
	g.git("config", "filter.evil.smudge", mark("smudge")+"; cat")
	g.commit("a.txt", "a\n")
	head := g.commit("b.md", "b\n")
	g.git("config", "filter.ev=il.clean", mark("clean-eq")+"; cat")
	g.git("config", "filter.evil.required", "true")
	g.git("config", "diff.evil.textconv", mark("textconv"))
	g.git("config", "diff.external", mark("extdiff"))
	g.git("config", "merge.evil.driver", mark("merge"))
	g.git("config", "credential.helper", "!"+mark("credential"))
	g.git("config", "core.hooksPath", filepath.Join(dir, "hooks"))
	os.MkdirAll(filepath.Join(dir, "hooks"), 0o755)
	writeFile(t, filepath.Join(dir, "hooks", "post-index-change"), "#!/bin/sh\n"+mark("hook")+"\n")
	os.Chmod(filepath.Join(dir, "hooks", "post-index-change"), 0o755)
	g.git("config", "core.fsmonitor", filepath.Join(dir, "fsmonitor.sh"))
	writeFile(t, filepath.Join(dir, "fsmonitor.sh"), "#!/bin/sh\n"+mark("fsmonitor")+"\n")
	os.Chmod(filepath.Join(dir, "fsmonitor.sh"), 0o755)
	// Same size, new mtime: git must re-hash the files, through their clean filters unless disarmed.
	later := time.Now().Add(time.Hour)
	for _, f := range []string{"a.txt", "b.md"} {
		os.Chtimes(filepath.Join(g.dir, f), later, later)
	}
	armed := exec.Command("git", "-C", g.dir, "status", "--porcelain")
	armed.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	armed.Run()
	if entries, _ := os.ReadDir(marks); len(entries) == 0 {
		t.Fatal("the hostile repository is not armed: plain git status ran none of its programs")
	}
	os.RemoveAll(marks)
	os.MkdirAll(marks, 0o755)
	for _, f := range []string{"a.txt", "b.md"} {
		later = later.Add(time.Minute)
		os.Chtimes(filepath.Join(g.dir, f), later, later)
	}
	rep := checkGit("", g.dir, head, head, 5*time.Second, false)
	if entries, _ := os.ReadDir(marks); len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("the git checks ran repository-configured programs: %v", names)
	}
	if len(rep.Checks) != 3 || rep.Checks[1].Result != resultOK || rep.Checks[2].Result != resultOK {
		t.Fatalf("checks %+v", rep.Checks)
	}
	if c := rep.Checks[0]; c.Result == resultFailed {
		t.Fatalf("worktree check %s: %s (a filtered repository cannot be judged dirty without its filters)", c.Result, c.Detail)
	}
}
