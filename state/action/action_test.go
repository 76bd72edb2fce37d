package action

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"runwatch/model"
)

// applied renders what an applied plan left on disk: each file's resulting bytes (or its removal) and the
// log line appended. Paths are relative to root so goldens do not depend on the temp dir.
func applied(t *testing.T, root string, p *Plan, logBefore string) string {
	t.Helper()
	realRoot, _ := filepath.EvalSymlinks(root)
	rel := func(p string) string {
		r, err := filepath.Rel(realRoot, p)
		if err != nil {
			return p
		}
		return r
	}
	var b strings.Builder
	b.WriteString("# " + string(p.Action) + ": " + p.Summary + "\n")
	for _, f := range p.Files {
		if f.Remove {
			if _, err := os.Lstat(f.Path); !os.IsNotExist(err) {
				t.Errorf("%s was not removed", f.Path)
			}
			b.WriteString("== " + rel(f.Path) + " (removed) ==\n")
			continue
		}
		b.WriteString("== " + rel(f.Path) + " ==\n" + mustRead(t, f.Path))
	}
	if p.LogPath != "" {
		after := mustRead(t, p.LogPath)
		if !strings.HasPrefix(after, logBefore) {
			t.Errorf("run.log was not appended to: before %q after %q", logBefore, after)
		}
		b.WriteString("== " + rel(p.LogPath) + " (appended) ==\n" + strings.TrimPrefix(after, logBefore))
	}
	return actionIDs.ReplaceAllString(b.String(), "action_id=ID")
}

// actionIDs matches the action ids in audit lines, which carry a random part.
var actionIDs = regexp.MustCompile(`action_id=\S+`)

func readLog(p *Plan) string {
	if p.LogPath == "" {
		return ""
	}
	b, _ := os.ReadFile(p.LogPath)
	return string(b)
}

func planAndApply(t *testing.T, root string, plan func() (*Plan, error), typed string) string {
	t.Helper()
	p, err := plan()
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if p.Preview() == "" {
		t.Fatal("empty preview")
	}
	before := readLog(p)
	if err := Apply(p, ApplyOptions{Typed: typed}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if _, err := os.Lstat(p.LockPath); p.LockPath != "" && !os.IsNotExist(err) {
		t.Fatalf("run lock %s left behind", p.LockPath)
	}
	return applied(t, root, p, before)
}

func TestGolden(t *testing.T) {
	t.Parallel()
	t.Run("resumable_step", func(t *testing.T) {
		root := t.TempDir()
		sp := makeResumable(t, root)
		o := opts(t, fixedEnv())
		golden.RequireEqual(t, planAndApply(t, root, func() (*Plan, error) { return PlanStep(load(t, sp, o.Env), "", o) }, ""))
	})
	t.Run("resumable_check", func(t *testing.T) {
		root := t.TempDir()
		sp := makeResumable(t, root)
		o := opts(t, fixedEnv())
		golden.RequireEqual(t, planAndApply(t, root, func() (*Plan, error) { return PlanCheck(load(t, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o) }, ""))
	})
	t.Run("resumable_uncheck", func(t *testing.T) {
		root := t.TempDir()
		sp := makeResumable(t, root)
		o := opts(t, fixedEnv())
		golden.RequireEqual(t, planAndApply(t, root, func() (*Plan, error) { return PlanCheck(load(t, sp, o.Env), "cb_s3_generator_smoke", false, o) }, ""))
	})
	t.Run("resumable_unlock_stale", func(t *testing.T) {
		root := t.TempDir()
		sp := makeResumable(t, root)
		mustWrite(t, filepath.Join(filepath.Dir(sp), "run.lock"),
			`{"acquired_at_utc": "2026-11-30T00:00:00Z", "host": "testhost", "pid": `+deadPID(t)+`, "run_id": "20260215T014733Z", "user": "u"}`+"\n")
		o := opts(t, fixedEnv())
		out := planAndApply(t, root, func() (*Plan, error) { return PlanUnlock(load(t, sp, o.Env), "", o) }, "")
		golden.RequireEqual(t, strings.ReplaceAll(out, deadPID(t), "DEADPID"))
	})
	t.Run("jonggrang_step", func(t *testing.T) {
		root := t.TempDir()
		mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
		o := opts(t, fixedEnv())
		golden.RequireEqual(t, planAndApply(t, root, func() (*Plan, error) { return PlanStep(load(t, mp, o.Env), "", o) }, ""))
	})
	t.Run("jonggrang_step_awaiting_input", func(t *testing.T) {
		root := t.TempDir()
		mp := makeJonggrang(t, root, "add-login-mlop4860", manifestAwaiting)
		o := opts(t, fixedEnv())
		golden.RequireEqual(t, planAndApply(t, root, func() (*Plan, error) { return PlanStep(load(t, mp, o.Env), "", o) }, ""))
	})
	t.Run("jonggrang_step_last", func(t *testing.T) {
		root := t.TempDir()
		m := strings.Replace(manifestPaused, "current_phase: 6\n", "current_phase: 7\n", 1)
		mp := makeJonggrang(t, root, "add-login-mlop4860", m)
		o := opts(t, fixedEnv())
		golden.RequireEqual(t, planAndApply(t, root, func() (*Plan, error) { return PlanStep(load(t, mp, o.Env), "", o) }, ""))
	})
	t.Run("jonggrang_retry", func(t *testing.T) {
		root := t.TempDir()
		mp := makeJonggrang(t, root, "add-login-mlop4860", manifestFailed)
		o := opts(t, fixedEnv())
		golden.RequireEqual(t, planAndApply(t, root, func() (*Plan, error) { return PlanRetry(load(t, mp, o.Env), "", o) }, ""))
	})
	t.Run("jonggrang_pause", func(t *testing.T) {
		root := t.TempDir()
		m := strings.Replace(manifestPaused, "status: paused\n", "status: running\n", 1)
		mp := makeJonggrang(t, root, "add-login-mlop4860", m)
		o := opts(t, fixedEnv())
		golden.RequireEqual(t, planAndApply(t, root, func() (*Plan, error) { return PlanPause(load(t, mp, o.Env), o) }, ""))
	})
	t.Run("jonggrang_resume", func(t *testing.T) {
		root := t.TempDir()
		mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
		o := opts(t, fixedEnv())
		golden.RequireEqual(t, planAndApply(t, root, func() (*Plan, error) { return PlanResume(load(t, mp, o.Env), o) }, ""))
	})
	t.Run("jonggrang_unlock_stale", func(t *testing.T) {
		root := t.TempDir()
		mp := makeJonggrang(t, root, "add-login-mlop4860", manifestPaused)
		locks := filepath.Join(root, "proj", ".jonggrang", "locks")
		mustWrite(t, filepath.Join(locks, "reviewer-old.lock"), "{\n  \"agent_id\": \"reviewer-old\",\n  \"files\": [],\n  \"acquired_at\": \"2026-11-29T23:00:00.000Z\"\n}")
		mustWrite(t, filepath.Join(locks, "broken.lock"), "not json")
		mustWrite(t, filepath.Join(locks, "fresh.lock"), "{\n  \"agent_id\": \"fresh\",\n  \"files\": [],\n  \"acquired_at\": \"2026-11-30T01:00:00.000Z\"\n}")
		o := opts(t, fixedEnv())
		golden.RequireEqual(t, planAndApply(t, root, func() (*Plan, error) { return PlanUnlock(load(t, mp, o.Env), "", o) }, ""))
		if _, err := os.Stat(filepath.Join(locks, "fresh.lock")); err != nil {
			t.Fatal("a lock that is not stale was removed")
		}
	})
}

// deadPID is a pid that was just used and is now gone.
func deadPID(t testing.TB) string {
	t.Helper()
	if deadPIDValue == "" {
		cmd := exec.Command("true")
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		deadPIDValue = strconv.Itoa(cmd.Process.Pid)
	}
	return deadPIDValue
}

var deadPIDValue string

// Named stages (S_<NAME>_DONE, CURRENT_STAGE holds the lowercase name): run.log's stage_start lines order the
// stages up to verify, but finalize was never started, so nothing on disk says it follows verify. Step refuses
// to guess, saying how to settle it; the config's stage_order settles it (the golden), and so does --to.
func TestStepNamedStages(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "reports", "iso26262-mining-20260215T143525Z")
	mustWrite(t, filepath.Join(dir, "state.env"), `CURRENT_STAGE="verify"
LOCK_FILE="lock/active.lock"
RUN_ID="20260215T143525Z"
S_ANCHOR_DONE="1"
S_EXTRACT_DONE="1"
S_FINALIZE_DONE="0"
S_INGEST_DONE="1"
S_NORMALIZE_DONE="1"
S_PUBLISH_DONE="1"
S_VERIFY_DONE="0"
`)
	mustWrite(t, filepath.Join(dir, "checklist.state.env"), "CB_VERIFY_HASHES_MATCH=\"1\"\nCB_FINALIZE_REPORT=\"0\"\n")
	var log strings.Builder
	for _, s := range []string{"ingest", "extract", "normalize", "anchor", "publish", "verify"} {
		log.WriteString("[2026-02-15T14:40:00Z] stage_start stage=" + s + "\n")
	}
	mustWrite(t, filepath.Join(dir, "run.log"), log.String())
	os.MkdirAll(filepath.Join(dir, "lock"), 0o755)
	o := opts(t, fixedEnv())
	sp := filepath.Join(dir, "state.env")
	before := mustRead(t, sp)
	p, err := PlanStep(load(t, sp, o.Env), "", o)
	refused(t, p, err, "the stage after verify is not known", "stage_order", "--to STAGE", "finalize")
	if mustRead(t, sp) != before {
		t.Fatal("a refused step changed state.env")
	}
	p, err = PlanStep(load(t, sp, o.Env), "ingest", o)
	refused(t, p, err, "--to ingest", "already marked done")

	p, err = PlanStep(load(t, sp, o.Env), "FINALIZE", o)
	if err != nil || !strings.Contains(string(p.Files[0].New), `CURRENT_STAGE="finalize"`) {
		t.Fatalf("--to: %v", err)
	}

	o.Env.StageOrders = []model.StageOrderRule{{Pattern: "iso26262-mining-*",
		Stages: []string{"ingest", "extract", "normalize", "anchor", "publish", "verify", "finalize"}}}
	golden.RequireEqual(t, planAndApply(t, root, func() (*Plan, error) { return PlanStep(load(t, sp, o.Env), "", o) }, ""))
}

// TestKVQuotesWhatTermsafeHides: a value with a rune termsafe hides, or invalid UTF-8, is quoted and
// escaped, so a reader of run.log sees \u200b where a raw value would hide inside the word.
func TestKVQuotesWhatTermsafeHides(t *testing.T) {
	t.Parallel()
	for value, want := range map[string]string{
		"plain":       `k=plain`,
		"a\u200bb":    `k="a\u200bb"`,
		"a\u202eb":    `k="a\u202eb"`,
		"a\u009b31mb": `k="a\u009b31mb"`,
		"a\xffb":      `k="a\xffb"`,
		"a\nb":        `k="a\nb"`,
		"":            `k=""`,
	} {
		if got := kv("k", value); got != want {
			t.Errorf("kv(%q) = %s, want %s", value, got, want)
		}
	}
}
