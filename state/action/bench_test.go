package action

import (
	"path/filepath"
	"testing"

	"runwatch/model"
)

// BenchmarkPlanApply times plan + apply (fsync'd temp file, rename, directory fsync, audit line, journal) of
// each action on a small real run. Loading the run is outside the timer; resetting the fixture too.
func BenchmarkPlanApply(b *testing.B) {
	type bench struct {
		name  string
		setup func(b *testing.B, root string) string // writes the run, returns its state path
		reset func(b *testing.B, statePath string)   // before each iteration, untimed
		plan  func(run model.Run, o Options) (*Plan, error)
	}
	resumable := func(b *testing.B, root string) string { return makeResumable(b, root) }
	jonggrang := func(m string) func(b *testing.B, root string) string {
		return func(b *testing.B, root string) string { return makeJonggrang(b, root, "add-login-mlop4860", m) }
	}
	rewrite := func(content string) func(b *testing.B, p string) {
		return func(b *testing.B, p string) { mustWrite(b, p, content) }
	}
	rewriteChecklist := func(b *testing.B, p string) {
		mustWrite(b, filepath.Join(filepath.Dir(p), "checklist.state.env"), checklistEnv)
	}
	for _, bc := range []bench{
		{"resumable/step", resumable, rewrite(stateEnv), func(r model.Run, o Options) (*Plan, error) { return PlanStep(r, "", o) }},
		{"resumable/check", resumable, rewriteChecklist, func(r model.Run, o Options) (*Plan, error) {
			return PlanCheck(r, "CB_S3_VERIFY_GREEN", true, o)
		}},
		{"resumable/uncheck", resumable, rewriteChecklist, func(r model.Run, o Options) (*Plan, error) {
			return PlanCheck(r, "CB_S3_GENERATOR_SMOKE", false, o)
		}},
		{"resumable/unlock", resumable, func(b *testing.B, p string) {
			mustWrite(b, filepath.Join(filepath.Dir(p), "run.lock"), `{"acquired_at_utc": "2026-11-30T00:00:00Z", "host": "testhost", "pid": `+deadPID(b)+`, "run_id": "x", "user": "u"}`+"\n")
		}, func(r model.Run, o Options) (*Plan, error) { return PlanUnlock(r, "", o) }},
		{"jonggrang/step", jonggrang(manifestPaused), rewrite(manifestPaused), func(r model.Run, o Options) (*Plan, error) { return PlanStep(r, "", o) }},
		{"jonggrang/retry", jonggrang(manifestFailed), rewrite(manifestFailed), func(r model.Run, o Options) (*Plan, error) { return PlanRetry(r, "", o) }},
		{"jonggrang/resume", jonggrang(manifestPaused), rewrite(manifestPaused), func(r model.Run, o Options) (*Plan, error) { return PlanResume(r, o) }},
		{"jonggrang/unlock", jonggrang(manifestPaused), func(b *testing.B, p string) {
			mustWrite(b, filepath.Join(filepath.Dir(p), "..", "..", "..", "locks", "broken.lock"), "not json")
		}, func(r model.Run, o Options) (*Plan, error) { return PlanUnlock(r, "", o) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			root := b.TempDir()
			sp := bc.setup(b, root)
			o := Options{Env: fixedEnv(), User: "bench", JournalPath: filepath.Join(b.TempDir(), "journal.jsonl")}
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				bc.reset(b, sp)
				run := load(b, sp, o.Env)
				b.StartTimer()
				p, err := bc.plan(run, o)
				if err != nil {
					b.Fatal(err)
				}
				if err := Apply(p, ApplyOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("resumable/undo", func(b *testing.B) {
		root := b.TempDir()
		sp := makeResumable(b, root)
		o := Options{Env: fixedEnv(), User: "bench", JournalPath: filepath.Join(b.TempDir(), "journal.jsonl")}
		for b.Loop() {
			b.StopTimer()
			p, err := PlanCheck(load(b, sp, o.Env), "CB_S3_VERIFY_GREEN", true, o)
			if err != nil {
				b.Fatal(err)
			}
			if err := Apply(p, ApplyOptions{}); err != nil {
				b.Fatal(err)
			}
			run := load(b, sp, o.Env)
			b.StartTimer()
			p, err = PlanUndo(run, o)
			if err != nil {
				b.Fatal(err)
			}
			if err := Apply(p, ApplyOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPlan times planning alone (read, parse, edit, re-parse check, diff-ready bytes): what a dashboard
// key costs before the confirmation dialog opens.
func BenchmarkPlan(b *testing.B) {
	root := b.TempDir()
	sp := makeResumable(b, root)
	mp := makeJonggrang(b, root, "add-login-mlop4860", manifestPaused)
	o := Options{Env: fixedEnv(), User: "bench"}
	rr, jr := load(b, sp, o.Env), load(b, mp, o.Env)
	b.Run("resumable/step", func(b *testing.B) {
		for b.Loop() {
			if _, err := PlanStep(rr, "", o); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jonggrang/step", func(b *testing.B) {
		for b.Loop() {
			if _, err := PlanStep(jr, "", o); err != nil {
				b.Fatal(err)
			}
		}
	})
}
