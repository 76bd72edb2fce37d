package jonggrang

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state/procinfo"
)

// fixtureSrc is the committed project tree of docs/FORMATS.md "Fixture A".
const fixtureSrc = "../../testdata/jonggrang"

const (
	fidLogin   = "add-login-form-mlop4860"
	fidTypo    = "fix-typo-mlop9zz1"
	fidBilling = "new-billing-mlopa001"
	fidCompact = "compact-header-mlopb002"
	fidTorn    = "torn-write-mlopbad1"
	fidBare    = "no-manifest-mlopbad2"
)

// project is a copy of the fixture tree in a temp dir, whose lock timestamps and pids a test sets relative to
// the real clock and real processes.
type project struct {
	t    testing.TB
	root string
}

// copyFixture copies testdata/jonggrang (without the generator) into t.TempDir().
func copyFixture(t *testing.T) *project {
	t.Helper()
	root := filepath.Join(t.TempDir(), "app")
	if err := copyTree(fixtureSrc, root); err != nil {
		t.Fatal(err)
	}
	return &project{t: t, root: root}
}

func copyTree(src, root string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() && d.Name() == "_gen" {
			return filepath.SkipDir
		}
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

func (p *project) feature(fid string) string {
	return filepath.Join(p.root, ".jonggrang", ".output", "features", fid)
}

func (p *project) lockPath(name string) string { return filepath.Join(LockDir(p.root), name) }

func (p *project) ephemeral(name string) string { return filepath.Join(EphemeralDir(p.root), name) }

// setLock rewrites a lock the way the convention writes it (JSON.stringify, 2 spaces, no newline). A zero
// acquired time or pid leaves the field out.
func (p *project) setLock(name, agent string, files []string, acquired time.Time, pid int) {
	p.t.Helper()
	obj := map[string]any{"agent_id": agent, "files": files}
	if !acquired.IsZero() {
		obj["acquired_at"] = acquired.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	if pid != 0 {
		obj["pid"] = pid
	}
	p.writeJSON(p.lockPath(name), obj)
}

func (p *project) writeJSON(path string, v any) {
	p.t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		p.t.Fatal(err)
	}
	p.write(path, string(data))
}

func (p *project) write(path, content string) {
	p.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func (p *project) read(path string) string {
	p.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		p.t.Fatal(err)
	}
	return string(data)
}

// editManifest replaces one exact piece of a feature's manifest text.
func (p *project) editManifest(fid, old, new string) {
	p.t.Helper()
	path := filepath.Join(p.feature(fid), ManifestName)
	text := p.read(path)
	if !strings.Contains(text, old) {
		p.t.Fatalf("%s does not contain %q", path, old)
	}
	p.write(path, strings.Replace(text, old, new, 1))
}

// setGroupPID rewrites the pid (and start time) of the orchestration snapshot's only group.
func (p *project) setGroup(pid int, started time.Time, worktree string) {
	p.t.Helper()
	path := p.ephemeral("orchestration-run.json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(p.read(path)), &doc); err != nil {
		p.t.Fatal(err)
	}
	g := doc["groups"].([]any)[0].(map[string]any)
	g["pid"] = pid
	g["started_at"] = started.UTC().Format("2006-01-02T15:04:05.000Z")
	if worktree != "" {
		g["worktree_path"] = worktree
	}
	p.writeJSON(path, doc)
}

// livePID starts a real child process that lives until the test ends.
func livePID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

// deadPID runs a child to completion and returns its pid, which nothing uses any more.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if (procinfo.System{}).Alive(cmd.Process.Pid) {
		t.Skip("the pid of a finished child was reused at once")
	}
	return cmd.Process.Pid
}

// realEnv judges with this host's real processes.
func realEnv() model.Env {
	return model.Env{Now: time.Now(), Host: "testhost", StaleAfter: model.DefaultStaleAfter, Proc: procinfo.System{}}
}

// stagesByKey and friends make assertions read like the documented values.
func stageKeys(r model.Run) []string {
	keys := make([]string, 0, len(r.Stages))
	for _, s := range r.Stages {
		keys = append(keys, s.Key)
	}
	return keys
}

func findLock(t *testing.T, r model.Run, file string) model.Lock {
	t.Helper()
	for _, l := range r.Locks {
		if filepath.Base(l.Path) == file {
			return l
		}
	}
	t.Fatalf("run %s has no lock %s; locks: %v", r.ID, file, lockNames(r))
	return model.Lock{}
}

func lockNames(r model.Run) []string {
	var names []string
	for _, l := range r.Locks {
		names = append(names, filepath.Base(l.Path))
	}
	return names
}

// problem returns the first problem with the code, failing the test when there is none.
func problem(t *testing.T, r model.Run, code string) model.Problem {
	t.Helper()
	for _, p := range r.Problems {
		if p.Code == code {
			return p
		}
	}
	t.Fatalf("run %s has no %s problem; problems: %s", r.ID, code, problemList(r))
	return model.Problem{}
}

func hasProblem(r model.Run, code string) bool {
	for _, p := range r.Problems {
		if p.Code == code {
			return true
		}
	}
	return false
}

func problemList(r model.Run) string {
	var b strings.Builder
	for _, p := range r.Problems {
		b.WriteString("\n  " + string(p.Severity) + " " + p.Code + ": " + p.Message)
	}
	return b.String()
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
