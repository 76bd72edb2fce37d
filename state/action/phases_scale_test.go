package action

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
// from 1,000 to 8,000 phases the CPU time grows about 8-10×, where a plan that compares or looks up each
// phase against all the others grows 64×. CPU seconds, the least of two tries, are what a busy machine
// changes least. Not parallel: the process's CPU time would count other tests' work.
func TestPlanningIsLinearInPhases(t *testing.T) {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	cost := func(n int) time.Duration {
		root := t.TempDir()
		mp := makeJonggrang(t, root, "add-login-mlop4860", manyPhases(n))
		o := opts(t, fixedEnv())
		least := time.Duration(math.MaxInt64)
		for range 2 {
			runtime.GC()
			before := cpu()
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
			least = min(least, cpu()-before)
		}
		return least
	}
	small, large := cost(1000), cost(8000)
	t.Logf("CPU time to load and plan: %v at 1,000 phases, %v at 8,000 (%.1f×)", small, large, float64(large)/float64(small))
	if large > 20*small {
		t.Errorf("8× the phases cost %.1f× the CPU time (%v vs %v): planning is no longer linear", float64(large)/float64(small), large, small)
	}
}
