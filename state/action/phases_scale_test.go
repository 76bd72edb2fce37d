package action

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"runwatch/model"
	"runwatch/state/yamledit"
)

// manyPhases is a paused jonggrang manifest of n phases (each with only a name and a status, so 20,000 fit
// under the 1 MiB cap; active_phases lists them all), with phase n/2 failed: what pause, resume and retry
// plan from.
func manyPhases(n int) string {
	var b strings.Builder
	b.WriteString("feature_id: add-login-mlop4860\ndescription: many phases\nwork_type: LARGE\npipeline_mode: full\n" +
		"created_at: '2026-02-16T04:50:15.123Z'\nupdated_at: '2026-02-16T05:31:02.417Z'\nstatus: paused\n")
	fmt.Fprintf(&b, "current_phase: %d\nactive_phases:\n", n/2)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - %d\n", i)
	}
	b.WriteString("phases:\n")
	for i := 1; i <= n; i++ {
		status := "completed"
		switch {
		case i == n/2:
			status = "failed"
		case i > n/2:
			status = "pending"
		}
		fmt.Fprintf(&b, "  '%d':\n    name: p%d\n    status: %s\n", i, i, status)
	}
	b.WriteString("agents: {}\nvalidation:\n  review_passed: false\n  tests_passed: false\n  coverage_met: false\n")
	return b.String()
}

// BenchmarkPlanManyPhases plans pause, resume and retry on manifests of 1,000 and 8,000 phases (under the
// 1 MiB cap): linear planning costs about 8× as much at 8,000, quadratic 64×.
func BenchmarkPlanManyPhases(b *testing.B) {
	for _, n := range []int{1000, 8000} {
		root := b.TempDir()
		mp := makeJonggrang(b, root, "add-login-mlop4860", manyPhases(n))
		o := Options{Env: fixedEnv(), User: "bench"}
		run := load(b, mp, o.Env)
		for name, plan := range map[string]func() (*Plan, error){
			"resume": func() (*Plan, error) { return PlanResume(run, o) },
			"retry":  func() (*Plan, error) { return PlanRetry(run, "", o) },
		} {
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				for b.Loop() {
					p, err := plan()
					if err != nil {
						b.Fatal(err)
					}
					p.Close()
				}
			})
		}
	}
}

// Loading a run and planning resume and retry does work linear in its phases (n log n for the one sort):
// counted, not timed. From 1,000 to 8,000 phases the comparisons of phase keys and the mapping keys looked
// at grow about 8-10×; a plan that compares or looks up each phase against all the others grows 64×.
// Not parallel: it counts work with process-wide counters, which other tests' planning would add to.
func TestPlanningIsLinearInPhases(t *testing.T) {
	ops := func(n int) int64 {
		root := t.TempDir()
		mp := makeJonggrang(t, root, "add-login-mlop4860", manyPhases(n))
		o := opts(t, fixedEnv())
		before := model.NumericCompares() + yamledit.KeysScanned()
		run := load(t, mp, o.Env)
		for _, plan := range []func() (*Plan, error){
			func() (*Plan, error) { return PlanResume(run, o) },
			func() (*Plan, error) { return PlanRetry(run, "", o) },
			func() (*Plan, error) { return PlanRetry(run, strconv.Itoa(n/2), o) },
		} {
			p, err := plan()
			if err != nil {
				t.Fatal(err)
			}
			p.Close()
		}
		return model.NumericCompares() + yamledit.KeysScanned() - before
	}
	small, large := ops(1000), ops(8000)
	t.Logf("phase-key comparisons and mapping keys looked at: %d at 1,000 phases, %d at 8,000 (%.1f×)", small, large, float64(large)/float64(small))
	if large > 16*small {
		t.Errorf("8× the phases cost %.1f× the work (%d vs %d operations): planning is no longer linear", float64(large)/float64(small), large, small)
	}
}
