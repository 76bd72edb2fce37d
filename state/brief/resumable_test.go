package brief

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"runwatch/state/resumable"
)

const runName = "irm-id-full-backfill-20260215T014733Z"

// resumableRun writes a run folder in the style of the real writer (sorted, double-quoted keys) and returns
// the paths the cases need.
type resumableRun struct {
	t         testing.TB
	root      string // the temp dir everything lives in
	dir       string
	state     map[string]string
	checklist map[string]string
	log       []string
	repo      *gitRepo
	commits   []string
	opts      Options
}

func newResumableRun(t testing.TB) *resumableRun {
	root := t.TempDir()
	dir := filepath.Join(root, "reports", runName)
	r := &resumableRun{t: t, root: root, dir: dir,
		state: map[string]string{
			"ARTIFACT_ROOT": dir + "/artifacts", "BASE_BRANCH": "main", "CANONICAL_STATE_UPDATED": "0",
			"CURRENT_STAGE": "S2", "LAST_COMPLETED_STAGE": "S1", "LAST_RESUME_HINT": "Resume from S2",
			"LOCK_FILE": dir + "/run.lock", "PLAN_PATH": root + "/plans/backfill-plan.md",
			"REPO_ROOT": root + "/repo", "REPORT_APPENDED": "0", "RUN_ID": "20260215T014733Z", "RUN_ROOT": dir,
			"RUN_SUMMARY_UPDATED": "0", "S1_DONE": "1", "S2_DONE": "0", "S3_DONE": "0", "S4_DONE": "0",
			"STAGE_STATUS": "in_progress", "STATE_SCHEMA_VERSION": "1", "TARGET_BRANCH": "docs/backfill",
			"TASK_NAME": "irm-id-full-backfill",
		},
		checklist: map[string]string{
			"CB_S1_REFACTOR_MANIFEST_WRITTEN": "1", "CB_S1_VERIFY_GREEN": "1",
			"CB_S2_SHADOW_REPORT_WRITTEN": "0", "CB_S2_VERIFY_GREEN": "0",
			"CB_S3_SMOKE_GREEN": "0", "CB_S4_VALIDATED": "0", "CHECKLIST_SCHEMA_VERSION": "1",
		},
		log: []string{
			"[2026-02-15T01:50:43Z] run bootstrapped",
			"  run_id=20260215T014733Z",
			"[2026-02-15T01:58:34Z] S1 artifact integrity",
			"  artifact=" + dir + "/artifacts/s1/refactor-manifest.json",
			"  sha256=635dde0596fb9adbb0cca1f450d28f3e1ea6ef1b452f1de1c7f67b3dac5c204b",
			"  size_bytes=2",
			"  artifact=" + dir + "/artifacts/s1/s1-verify.log",
			"  sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
			"  size_bytes=0",
			"[2026-02-15T01:58:57Z] S1 complete",
			"  next_stage=S2",
			"[2026-02-15T01:59:03Z] stopping after MAX_STAGES=1",
			"  resume_target_stage=S2",
		},
	}
	writeFile(t, filepath.Join(dir, "artifacts/s1/refactor-manifest.json"), "{}")
	writeFile(t, filepath.Join(dir, "artifacts/s1/s1-verify.log"), "")
	return r
}

// withRepo makes REPO_ROOT a real repository with two commits; BASE_PIN_SHA is the first, and HEAD (the second)
// is LAST_COMMITTED_SHA.
func (r *resumableRun) withRepo() *resumableRun {
	r.repo = newGitRepo(r.t, r.state["REPO_ROOT"])
	r.commits = append(r.commits, r.repo.commit("README.md", "base\n"), r.repo.commit("src/ids.txt", "S1 refactor\n"))
	r.state["BASE_PIN_SHA"] = r.commits[0]
	r.state["LAST_COMMITTED_SHA"] = r.commits[1]
	r.state["LAST_COMMITTED_PHASE"] = "S1"
	return r
}

func (r *resumableRun) allDone() *resumableRun {
	for _, s := range []string{"S1", "S2", "S3", "S4"} {
		r.state[s+"_DONE"] = "1"
	}
	for k := range r.checklist {
		if strings.HasPrefix(k, "CB_") {
			r.checklist[k] = "1"
		}
	}
	r.state["CURRENT_STAGE"], r.state["LAST_COMPLETED_STAGE"] = "S4", "S4"
	delete(r.state, "LAST_RESUME_HINT")
	return r
}

func writeEnvFile(t testing.TB, path string, kv map[string]string) {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q\n", k, kv[k])
	}
	writeFile(t, path, b.String())
}

func (r *resumableRun) brief() Brief {
	r.t.Helper()
	writeEnvFile(r.t, filepath.Join(r.dir, "state.env"), r.state)
	writeEnvFile(r.t, filepath.Join(r.dir, "checklist.state.env"), r.checklist)
	writeFile(r.t, filepath.Join(r.dir, "run.log"), strings.Join(r.log, "\n")+"\n")
	env := testEnv(4242)
	run := resumable.Load(filepath.Join(r.dir, "state.env"), env)
	return BuildWith(run, env, r.opts)
}

func (r *resumableRun) lock(content string) {
	writeFile(r.t, r.state["LOCK_FILE"], content)
}

func TestResumableBriefs(t *testing.T) {
	t.Parallel()
	cases := map[string]func(r *resumableRun){
		// Paused between stages with a clean repository: resume S2 from its start. A ticked stage-start
		// marker records only that S2 began.
		"window-a": func(r *resumableRun) {
			r.withRepo()
			r.checklist["CB_S2_STAGE_START"] = "1"
		},
		// S2 committed and ticked one item, but was not verified or marked done.
		"window-b": func(r *resumableRun) {
			r.withRepo()
			r.checklist["CB_S2_SHADOW_REPORT_WRITTEN"] = "1"
			r.state["LAST_COMMITTED_PHASE"] = "S2"
		},
		"window-b-before-push": func(r *resumableRun) {
			r.withRepo().allDone()
			r.state["PUSH_ATTEMPTED"], r.state["PUSH_CONFIRMED"] = "0", "0"
		},
		"window-c": func(r *resumableRun) {
			r.withRepo().allDone()
			r.state["PUSH_ATTEMPTED"], r.state["PUSH_CONFIRMED"] = "1", "0"
		},
		// Push confirmed and only REPORT_APPENDED is missing (the plans' window E: finish that flag only).
		"window-d": func(r *resumableRun) {
			r.withRepo().allDone()
			r.state["PUSH_ATTEMPTED"], r.state["PUSH_CONFIRMED"] = "1", "1"
			r.state["CANONICAL_STATE_UPDATED"], r.state["RUN_SUMMARY_UPDATED"] = "1", "1"
		},
		"window-d-no-push": func(r *resumableRun) { r.withRepo().allDone() },
		"complete": func(r *resumableRun) {
			r.withRepo().allDone()
			r.state["PUSH_ATTEMPTED"], r.state["PUSH_CONFIRMED"] = "1", "1"
			for _, f := range []string{"CANONICAL_STATE_UPDATED", "REPORT_APPENDED", "RUN_SUMMARY_UPDATED"} {
				r.state[f] = "1"
			}
		},
		// S2 is marked done but its checklist says it is not: S2 is where the run restarts.
		"checklist-contradicts-done": func(r *resumableRun) {
			r.withRepo()
			r.state["S2_DONE"], r.state["CURRENT_STAGE"] = "1", "S3"
			r.state["RESUME_TARGET_STAGE"], r.state["LAST_RESUME_HINT"] = "S3", "Resume from S3"
			r.checklist["CB_S2_SHADOW_REPORT_WRITTEN"] = "1"
		},
		"repo-dirty": func(r *resumableRun) {
			r.withRepo()
			writeFile(r.t, filepath.Join(r.state["REPO_ROOT"], "src/ids.txt"), "half-done S2 edit\n")
			writeFile(r.t, filepath.Join(r.state["REPO_ROOT"], "notes.txt"), "scratch\n")
		},
		"repo-moved-on": func(r *resumableRun) {
			r.withRepo()
			r.repo.commit("src/other.txt", "someone else\n")
			r.repo.commit("src/more.txt", "and more\n")
		},
		"repo-rewritten": func(r *resumableRun) {
			r.withRepo()
			r.repo.git("reset", "-q", "--hard", r.commits[0])
			r.repo.commit("src/ids.txt", "rewritten\n")
		},
		"base-pin-missing": func(r *resumableRun) {
			r.withRepo()
			r.state["BASE_PIN_SHA"] = "b55960aaeb1c8a5ebfc4af26db682ed21c45187b"
		},
		"repo-missing": func(r *resumableRun) {
			r.state["LAST_COMMITTED_SHA"] = "b55960aaeb1c8a5ebfc4af26db682ed21c45187b"
		},
		"git-not-installed": func(r *resumableRun) {
			r.withRepo()
			r.opts.Git = filepath.Join(r.t.TempDir(), "git") // no such program
		},
		// The run folder was copied here from RUN_ROOT elsewhere; one recorded artifact is gone, and the
		// config requires one more for S1 (done: blocking) and one for S2 (current: still to produce).
		"missing-artifacts": func(r *resumableRun) {
			r.withRepo()
			old := "/cfg/reports/" + runName
			r.state["RUN_ROOT"] = old
			for i, l := range r.log {
				r.log[i] = strings.ReplaceAll(l, r.dir, old)
			}
			if err := os.Remove(filepath.Join(r.dir, "artifacts/s1/s1-verify.log")); err != nil {
				r.t.Fatal(err)
			}
			r.opts.RequiredArtifacts = map[string][]string{
				"S1": {"artifacts/s1/refactor-manifest.json", "artifacts/s1/ids-before.json"},
				"S2": {"artifacts/s2/paragraph-id-check-shadow.json"},
				"S4": {"artifacts/s4/id-mapping.json"},
			}
		},
		"lock-stale": func(r *resumableRun) {
			r.withRepo()
			r.lock(`{"acquired_at_utc": "2026-02-16T03:00:00Z", "host": "testhost", "pid": 999999, "run_id": "20260215T014733Z", "user": "u"}` + "\n")
		},
		"lock-live": func(r *resumableRun) {
			r.withRepo()
			r.lock(`{"acquired_at_utc": "2026-02-16T05:20:00Z", "host": "testhost", "pid": 4242, "run_id": "20260215T014733Z", "user": "u"}` + "\n")
		},
		"lock-other-host": func(r *resumableRun) {
			r.withRepo()
			r.lock("acquired_at_utc=\"2026-02-16T05:20:00Z\"\nhost=\"other-host\"\npid=\"123\"\nrun_id=\"20260215T014733Z\"\nuser=\"u\"\n")
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newResumableRun(t)
			setup(r)
			b := r.brief()
			requireGolden(t, b, name == "window-b", r.root, "$TMP")
		})
	}
}

// BenchmarkBuildResumable measures one resumable brief with its git checks against a real repository and
// its run.log scan: what a key press or `runwatch brief` costs.
func BenchmarkBuildResumable(b *testing.B) {
	r := newResumableRun(b).withRepo()
	writeEnvFile(b, filepath.Join(r.dir, "state.env"), r.state)
	writeEnvFile(b, filepath.Join(r.dir, "checklist.state.env"), r.checklist)
	writeFile(b, filepath.Join(r.dir, "run.log"), strings.Join(r.log, "\n")+"\n")
	env := testEnv()
	run := resumable.Load(filepath.Join(r.dir, "state.env"), env)
	for b.Loop() {
		if md := Build(run, env).Markdown(); md == "" {
			b.Fatal("empty brief")
		}
	}
}
