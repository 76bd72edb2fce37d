package brief

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"runwatch/model"
)

// t0 is the fixed clock of every brief test.
var t0 = time.Date(2026, 2, 16, 5, 31, 2, 0, time.UTC)

func at(minutes int) *time.Time {
	t := t0.Add(time.Duration(minutes) * time.Minute)
	return &t
}

// procs is a fake process table: only the listed pids are alive.
type procs map[int]bool

func (p procs) Alive(pid int) bool              { return p[pid] }
func (p procs) StartTime(int) (time.Time, bool) { return time.Time{}, false }
func testEnv(alive ...int) model.Env {
	p := procs{}
	for _, pid := range alive {
		p[pid] = true
	}
	return model.Env{Now: t0, Host: "testhost", StaleAfter: model.DefaultStaleAfter, Proc: p}
}

// judged judges locks and derives the status the way the readers do, so cases stay consistent with the model.
func judged(run model.Run, env model.Env) model.Run {
	for i := range run.Locks {
		model.JudgeLock(&run.Locks[i], env)
	}
	model.FinalizeRun(&run)
	return run
}

// requireGolden compares the Markdown (and, when withJSON, the JSON) of b with the golden files, with the
// temp dirs of the test replaced by stable names.
func requireGolden(t *testing.T, b Brief, withJSON bool, replace ...string) {
	t.Helper()
	md := b.Markdown()
	r := strings.NewReplacer(replace...)
	golden.RequireEqual(t, []byte(r.Replace(md)))
	if withJSON {
		data, err := json.MarshalIndent(b, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		t.Run("json", func(t *testing.T) { golden.RequireEqual(t, []byte(r.Replace(string(data))+"\n")) })
	}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gitRepo makes a real repository whose commit ids are the same on every run (fixed identity and dates).
type gitRepo struct {
	t   testing.TB
	dir string
	n   int
}

func newGitRepo(t testing.TB, dir string) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	g := &gitRepo{t: t, dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	g.git("init", "-q", "-b", "main")
	return g
}

func (g *gitRepo) git(args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", g.dir}, args...)...)
	date := t0.Add(time.Duration(g.n) * time.Minute).Format(time.RFC3339)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_AUTHOR_DATE="+date,
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com", "GIT_COMMITTER_DATE="+date)
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes a file and commits it, returning the new HEAD.
func (g *gitRepo) commit(name, content string) string {
	g.t.Helper()
	g.n++
	writeFile(g.t, filepath.Join(g.dir, name), content)
	g.git("add", name)
	g.git("commit", "-q", "-m", "change "+name)
	return g.git("rev-parse", "HEAD")
}
