package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/procinfo"
)

// testNow is the fixed clock of golden tests: audit lines and timestamps in the goldens depend on it.
var testNow = time.Date(2026, 11, 30, 1, 2, 3, 456000000, time.UTC)

func fixedEnv() model.Env {
	return model.Env{Now: testNow, Host: "testhost", StaleAfter: 30 * time.Minute, Proc: procinfo.System{}}
}

// realEnv uses the wall clock, for tests whose locks name real, living processes.
func realEnv() model.Env {
	return model.Env{Now: time.Now(), Host: "testhost", StaleAfter: 30 * time.Minute, Proc: procinfo.System{}}
}

const runName = "irm-backfill-20260215T014733Z"

// Written style of the resumable writers: sorted, double-quoted, LOCK_FILE from another machine (rebased).
const stateEnv = `ARTIFACT_ROOT="/cfg/reports/irm-backfill-20260215T014733Z/artifacts"
BASE_PIN_SHA="b55960aaeb1c8a5ebfc4af26db682ed21c45187b"
CANONICAL_STATE_UPDATED="0"
CURRENT_STAGE="S2"
LAST_COMPLETED_STAGE="S1"
LOCK_FILE="/cfg/reports/irm-backfill-20260215T014733Z/run.lock"
PLAN_PATH="/cfg/plans/plan.md"
REPORT_APPENDED="0"
RUN_ID="20260215T014733Z"
RUN_ROOT="/cfg/reports/irm-backfill-20260215T014733Z"
RUN_SUMMARY_UPDATED="0"
S1_DONE="1"
S2_CHECKLIST_DONE="0"
S2_DONE="0"
S3_DONE="0"
STATE_SCHEMA_VERSION="1"
TASK_NAME="irm-backfill"
`

const checklistEnv = `CB_S1_VERIFY_GREEN="1"
CB_S2_SHADOW_REPORT_WRITTEN="1"
CB_S2_VERIFY_GREEN="1"
CB_S3_GENERATOR_SMOKE="1"
CB_S3_VERIFY_GREEN="0"
CHECKLIST_SCHEMA_VERSION="1"
`

const runLog = `[2026-02-15T01:50:43Z] run bootstrapped
  run_id=20260215T014733Z
[2026-02-15T01:58:57Z] S1 complete
  next_stage=S2
`

// makeResumable writes a resumable run folder and returns its state.env path.
func makeResumable(t testing.TB, root string) string {
	t.Helper()
	dir := filepath.Join(root, "reports", runName)
	mustWrite(t, filepath.Join(dir, "state.env"), stateEnv)
	mustWrite(t, filepath.Join(dir, "checklist.state.env"), checklistEnv)
	mustWrite(t, filepath.Join(dir, "run.log"), runLog)
	return filepath.Join(dir, "state.env")
}

// js-yaml style: quoted phase keys in JS order ('6.5' after '7'), single-quoted timestamps.
const manifestPaused = `feature_id: add-login-mlop4860
description: Add login form
work_type: MEDIUM
created_at: '2026-02-16T04:50:15.123Z'
updated_at: '2026-02-16T05:31:02.417Z'
status: paused
current_phase: 6
active_phases:
  - 5
  - 6
  - 6.5
  - 7
phases:
  '5':
    name: complexity
    status: completed
    started_at: '2026-02-16T04:59:00.000Z'
    completed_at: '2026-02-16T05:00:00.000Z'
    agent_id: null
    output: null
    output_files: []
  '6':
    name: brainstorming
    status: running
    started_at: '2026-02-16T05:01:00.000Z'
    completed_at: null
    agent_id: null
    output: null
    output_files: []
  '7':
    name: architecting
    status: pending
    started_at: null
    completed_at: null
    agent_id: null
    output: null
    output_files: []
  '6.5':
    name: design-system
    status: pending
    started_at: null
    completed_at: null
    agent_id: null
    output: null
    output_files: []
agents: {}
validation:
  review_passed: false
  tests_passed: false
  coverage_met: false
locks: []
context_usage: 0.42
`

// The human pause as the CLI records it: failed/failed with "Awaiting human input".
var manifestAwaiting = strings.NewReplacer(
	"status: paused\n", "status: failed\n",
	"    status: running\n    started_at: '2026-02-16T05:01:00.000Z'\n    completed_at: null\n    agent_id: null\n    output: null\n",
	"    status: failed\n    started_at: '2026-02-16T05:01:00.000Z'\n    completed_at: '2026-02-16T05:02:00.000Z'\n    agent_id: null\n    output:\n      error: Awaiting human input (brainstorming)\n",
).Replace(manifestPaused)

// A failed implementation-style phase with a flow-mapping error, for retry.
var manifestFailed = strings.NewReplacer(
	"status: paused\n", "status: failed\n",
	"current_phase: 6\n", "current_phase: 7\n",
	"    status: running\n", "    status: completed\n",
	"    name: architecting\n    status: pending\n    started_at: null\n    completed_at: null\n    agent_id: null\n    output: null\n",
	"    name: architecting\n    status: failed\n    started_at: '2026-02-16T05:10:00.000Z'\n    completed_at: '2026-02-16T05:11:00.000Z'\n    agent_id: null\n    output: {error: 'lint failed: 3 errors'}\n",
).Replace(manifestPaused)

// makeJonggrang writes a project with one feature and returns the manifest path.
func makeJonggrang(t testing.TB, root, feature, manifest string) string {
	t.Helper()
	p := filepath.Join(root, "proj", ".jonggrang", ".output", "features", feature, "MANIFEST.yaml")
	mustWrite(t, p, manifest)
	if err := os.MkdirAll(filepath.Join(root, "proj", ".jonggrang", "locks"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustWrite(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// load reads a run the way the program does.
func load(t testing.TB, statePath string, env model.Env) model.Run {
	t.Helper()
	locs, err := state.Discover([]string{filepath.Dir(statePath)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range locs {
		if l.StatePath == statePath {
			return state.Load(l, env)
		}
	}
	t.Fatalf("no run at %s (found %+v)", statePath, locs)
	return model.Run{}
}

func opts(t testing.TB, env model.Env) Options {
	return Options{Env: env, User: "tester", Reason: "unit test", JournalPath: filepath.Join(t.TempDir(), "journal.jsonl")}
}
