package brief

import (
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
		rep := checkGit(repo, "abc1234", "abc1234", time.Second, false)
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
	rep := checkGit(g.dir, "--output=/tmp/x", "-h", time.Second, false)
	for _, c := range rep.Checks[1:] {
		if c.Result != resultFailed || !strings.Contains(c.Detail, "is not a commit id") {
			t.Errorf("%s: %s %q", c.Name, c.Result, c.Detail)
		}
	}
	short := checkGit(g.dir, head[:8], head[:8], time.Second, false)
	for _, c := range short.Checks {
		if c.Result != resultOK {
			t.Errorf("abbreviated ids: %s is %s (%s)", c.Name, c.Result, c.Detail)
		}
	}
}
