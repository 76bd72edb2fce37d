package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"runwatch/sim"
)

// BenchmarkReplaceToUpdate measures file change → Update in-process: an atomic replace of state.env until
// the Update carrying the re-read run arrives. Reported as p50/p99 besides ns/op.
//
//	go test -run '^$' -bench ReplaceToUpdate -benchtime 300x ./watch
func BenchmarkReplaceToUpdate(b *testing.B) {
	root := filepath.Join(b.TempDir(), "reports")
	var sps []string
	for i := range 100 {
		sps = append(sps, makeResumableRun(b, filepath.Join(root, fmt.Sprintf("run-%03d", i)), "S1"))
	}
	w, err := New(Options{Paths: []string{root}})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	stage := map[string]string{}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		sp := sps[i%len(sps)]
		i++
		next := "S2"
		if stage[sp] == "S2" {
			next = "S1"
		}
		stage[sp] = next
		tmp := filepath.Join(filepath.Dir(sp), ".state.env.tmp-bench")
		writeFile(b, tmp, resumableState(filepath.Dir(sp), next))
		t0 := time.Now()
		if err := os.Rename(tmp, sp); err != nil {
			b.Fatal(err)
		}
		for done := false; !done; {
			select {
			case u := <-w.Updates():
				for _, r := range u.Changed {
					if r.StatePath == sp && r.CurrentStage == next {
						done = true
					}
				}
			case <-time.After(waitLimit):
				b.Fatal("no update")
			}
		}
		lat = append(lat, time.Since(t0))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
}

// BenchmarkNew1000Runs measures New over 1,000 generated runs of both conventions: discovery, one read of
// every run, and the watches, i.e. the watcher's share of the dashboard's startup.
//
//	go test -run '^$' -bench New1000Runs -benchtime 5x ./watch
func BenchmarkNew1000Runs(b *testing.B) {
	dir := b.TempDir()
	sps, err := sim.GenerateRuns(dir, 1000)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		w, err := New(Options{Paths: []string{dir}})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(w.Snapshot()); n != len(sps) {
			b.Fatalf("snapshot has %d runs, generated %d", n, len(sps))
		}
		b.ReportMetric(float64(w.Health().Watches), "watches")
		b.StopTimer() // releasing thousands of inotify watches is the kernel's time, not startup's
		w.Close()
		b.StartTimer()
	}
}

// BenchmarkUnseenCheck1000Runs measures the second look at runs read before their folders were watched
// (unseenChanges) over 1,000 generated runs whose folders all are: a stat of each folder and of each entry the
// walk found, for every run (the Progressive load of a big tree, where reads outpace the walk, does it for
// most runs).
//
//	go test -run '^$' -bench UnseenCheck1000Runs -benchmem ./watch
func BenchmarkUnseenCheck1000Runs(b *testing.B) {
	dir := b.TempDir()
	if _, err := sim.GenerateRuns(dir, 1000); err != nil {
		b.Fatal(err)
	}
	w, err := New(Options{Paths: []string{dir}})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	resume := make(chan struct{}) // the loop must not change the tree while it is looked at
	w.pause <- resume
	defer close(resume)
	var runs []*trackedRun
	for _, tr := range w.runs.runs {
		runs = append(runs, tr)
	}
	later := time.Now().Add(time.Hour) // every read after every change: each look goes through everything
	b.ReportAllocs()
	for b.Loop() {
		u := newUnseenChanges(w.tree, 0)
		for _, tr := range runs {
			u.since(tr, later)
		}
	}
}

// BenchmarkProgressiveLoad measures the dashboard's first read (Options.Progressive) until every run is
// shown and the load is over: the runs of a task teach the history as they are read, which must not make
// each judgement work out the task's usual durations again over all its runs.
//
//	RUNWATCH_BENCH_DIR=DIR go test -run '^$' -bench ProgressiveLoad -benchtime 3x ./watch
//
// DIR is a tree of runs (bench/genruns); without it 2,000 are generated.
func BenchmarkProgressiveLoad(b *testing.B) {
	dir := os.Getenv("RUNWATCH_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
		if _, err := sim.GenerateRuns(dir, 2000); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		w, err := New(Options{Paths: []string{dir}, Progressive: true})
		if err != nil {
			b.Fatal(err)
		}
		shown, loading := 0, true
		for loading || shown == 0 {
			u := <-w.Updates()
			if u.Initial {
				shown += len(u.Changed)
			}
			loading = u.Health.Loading > 0
		}
		b.ReportMetric(float64(shown), "runs")
		b.StopTimer()
		w.Close()
		b.StartTimer()
	}
}
