package fixturetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TaskRun writes a resumable run of task with stages S1–S3 under root: done stages take the given
// lengths (from start, one after the other); a stage with no length is where the run stands, started at
// start and not done.
func TaskRun(t testing.TB, root, name, task string, start time.Time, lengths ...time.Duration) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var env, log strings.Builder
	current := "S3"
	at := start
	for i, key := range []string{"S1", "S2", "S3"} {
		done := "0"
		switch {
		case i < len(lengths):
			done = "1"
			fmt.Fprintf(&log, "[%s] stage_start stage=%s\n", at.UTC().Format(time.RFC3339), key)
			at = at.Add(lengths[i])
			fmt.Fprintf(&log, "[%s] stage_complete stage=%s\n", at.UTC().Format(time.RFC3339), key)
		case i == len(lengths):
			current = key
			fmt.Fprintf(&log, "[%s] stage_start stage=%s\n", at.UTC().Format(time.RFC3339), key)
		}
		fmt.Fprintf(&env, "%s_DONE=%q\n", key, done)
	}
	fmt.Fprintf(&env, "CURRENT_STAGE=%q\nRUN_ID=%q\nTASK_NAME=%q\n", current, name, task)
	for file, content := range map[string]string{"state.env": env.String(), "run.log": log.String()} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Feature writes a jonggrang feature of work type under root's project: phase 13 took took13 from start,
// phase 14 runs from then on, or took took14 when it is not zero (the feature completed).
func Feature(t testing.TB, root, id, workType string, start time.Time, took13, took14 time.Duration) string {
	t.Helper()
	dir := filepath.Join(root, "proj", ".jonggrang", ".output", "features", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ts := func(t time.Time) string { return "'" + t.UTC().Format("2006-01-02T15:04:05.000Z") + "'" }
	status, end14, st14 := "running", "null", "running"
	if took14 > 0 {
		status, end14, st14 = "completed", ts(start.Add(took13+took14)), "completed"
	}
	manifest := fmt.Sprintf(`feature_id: %s
description: Feature %s
work_type: %s
created_at: %s
updated_at: %s
status: %s
current_phase: 14
phases:
  '13':
    name: review
    status: completed
    started_at: %s
    completed_at: %s
  '14':
    name: testing
    status: %s
    started_at: %s
    completed_at: %s
agents: {}
validation:
  review_passed: false
  tests_passed: false
  coverage_met: false
locks: []
`, id, id, workType, ts(start), ts(start), status, ts(start), ts(start.Add(took13)), st14, ts(start.Add(took13)), end14)
	if err := os.WriteFile(filepath.Join(dir, "MANIFEST.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
