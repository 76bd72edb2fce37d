package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state/runlog"
)

// waitLimit bounds every wait. It is generous on purpose: it only decides when a test gives up, never
// whether it passes, so a slow shared machine cannot make a test flaky.
const waitLimit = 20 * time.Second

// view applies Updates the way a consumer would, so tests assert on the resulting model.
type view struct {
	t       *testing.T
	w       *Watcher
	runs    map[string]model.Run
	logs    map[string][]model.LogEntry
	resets  map[string]int // truncations and rotations seen per log
	removed map[string]int
	// statuses lists every status each run was handed out with, in order.
	statuses map[string][]model.RunStatus
	health   Health
	updates  int
}

func newView(t *testing.T, opts Options) *view {
	t.Helper()
	w, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	v := &view{t: t, w: w, runs: map[string]model.Run{}, logs: map[string][]model.LogEntry{},
		resets: map[string]int{}, removed: map[string]int{}, statuses: map[string][]model.RunStatus{}}
	for _, r := range w.Snapshot() {
		v.runs[r.StatePath] = r
	}
	return v
}

func (v *view) apply(u Update) {
	v.updates++
	for _, sp := range u.Removed {
		delete(v.runs, sp)
		v.removed[sp]++
	}
	for _, r := range u.Changed {
		v.runs[r.StatePath] = *r
		v.statuses[r.StatePath] = append(v.statuses[r.StatePath], r.Status)
	}
	for _, a := range u.Appended {
		if a.Truncated || a.Rotated {
			v.resets[a.Path]++
		}
		v.logs[a.Path] = runlog.Append(v.logs[a.Path], a.Entries)
	}
	v.health = u.Health
}

// until applies Updates until cond holds, failing with what was seen if it never does.
func (v *view) until(what string, cond func() bool) {
	v.t.Helper()
	v.untilExplained(what, cond, func() string { return "" })
}

// untilExplained is until, and on giving up also says why() the condition last failed.
func (v *view) untilExplained(what string, cond func() bool, why func() string) {
	v.t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for !cond() {
		select {
		case u, ok := <-v.w.Updates():
			if !ok {
				v.t.Fatalf("updates closed while waiting for %s", what)
			}
			v.apply(u)
		case <-deadline.C:
			v.t.Fatalf("gave up waiting for %s after %s (%s); runs now:\n%s\nhealth: %+v", what, waitLimit, why(), v.dump(), v.health)
		}
	}
}

func (v *view) run(statePath string) (model.Run, bool) {
	r, ok := v.runs[statePath]
	return r, ok
}

func (v *view) dump() string {
	var lines []string
	for sp, r := range v.runs {
		var probs []string
		for _, p := range r.Problems {
			probs = append(probs, p.Code)
		}
		lines = append(lines, fmt.Sprintf("  %s status=%s stage=%q locks=%d problems=%v", sp, r.Status, r.CurrentStage, len(r.Locks), probs))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
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

// replaceAtomically writes like the actions engine and the resumable writer: temp file beside the target,
// then rename over it.
func replaceAtomically(t testing.TB, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-4242")
	writeFile(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// resumableState is a state.env in the written style (sorted, double-quoted), as docs/FORMATS.md B.2 shows.
func resumableState(dir, stage string) string {
	s1Done := 0
	if stage != "S1" {
		s1Done = 1
	}
	return fmt.Sprintf(`CURRENT_STAGE=%q
LOCK_FILE=%q
RUN_ID="20260215T014733Z"
S1_DONE="%d"
S2_DONE="0"
S3_DONE="0"
STAGE_STATUS="in_progress"
STATE_SCHEMA_VERSION="1"
TASK_NAME="irm-id-full-backfill"
`, stage, filepath.Join(dir, "lock", "active.lock"), s1Done)
}

const resumableChecklist = `CB_S1_VERIFY_GREEN="1"
CB_S2_VERIFY_GREEN="0"
CB_S3_VERIFY_GREEN="0"
CHECKLIST_SCHEMA_VERSION="1"
`

// makeResumableRun writes a resumable run folder and returns its state.env path.
func makeResumableRun(t testing.TB, dir, stage string) string {
	t.Helper()
	writeFile(t, filepath.Join(dir, "checklist.state.env"), resumableChecklist)
	writeFile(t, filepath.Join(dir, "run.log"), "[2026-02-15T01:50:43Z] run bootstrapped\n  run_id=20260215T014733Z\n")
	sp := filepath.Join(dir, "state.env")
	writeFile(t, sp, resumableState(dir, stage))
	return sp
}

// lockPayload is a mining-tool lock held by this test process, so it is judged live.
func lockPayload() string {
	host, _ := os.Hostname()
	return fmt.Sprintf(`{"acquired_at_utc": %q, "host": %q, "pid": %d, "run_id": "20260215T014733Z", "user": "u"}`+"\n",
		time.Now().UTC().Format(time.RFC3339), host, os.Getpid())
}

// manifest is a jonggrang MANIFEST.yaml in js-yaml's style with the given current phase.
func manifest(fid string, current int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "feature_id: %s\ndescription: Add login form\nwork_type: SMALL\npipeline_mode: full\n", fid)
	b.WriteString("created_at: '2026-02-16T04:50:15.123Z'\nupdated_at: '2026-02-16T05:31:02.417Z'\nstatus: running\n")
	fmt.Fprintf(&b, "current_phase: %d\nactive_phases:\n", current)
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&b, "  - %d\n", i)
	}
	b.WriteString("phases:\n")
	for i := 1; i <= 4; i++ {
		status := "pending"
		switch {
		case i < current:
			status = "completed"
		case i == current:
			status = "running"
		}
		fmt.Fprintf(&b, "  '%d':\n    name: phase-%d\n    status: %s\n    started_at: null\n    completed_at: null\n    agent_id: null\n    output: null\n    output_files: []\n", i, i, status)
	}
	b.WriteString("agents: {}\nvalidation:\n  review_passed: false\n  tests_passed: false\n  coverage_met: false\nlocks: []\ncontext_usage: null\n")
	return b.String()
}

func hasProblem(r model.Run, code string) bool {
	for _, p := range r.Problems {
		if p.Code == code {
			return true
		}
	}
	return false
}
