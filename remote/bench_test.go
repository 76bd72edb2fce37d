package remote

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"runwatch/remote/sshtest"
	"runwatch/watch"
)

// BenchmarkChangeToUpdate measures a state.env replace on disk to the batch that carries it, through a
// local watcher and through a remote root over ssh on 127.0.0.1, in the same run: the difference is what
// ssh and the second runwatch add (its goal is in docs/BENCHMARKS.md).
//
//	go test ./remote -run '^$' -bench ChangeToUpdate -benchtime 200x
func BenchmarkChangeToUpdate(b *testing.B) {
	fleet := sshtest.New(b, binDir, "alpha")
	root := b.TempDir()
	dir := filepath.Join(root, "irm-bench-20261201T080000Z")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	stateFile := filepath.Join(dir, "state.env")
	write := func(stage string) {
		tmp := stateFile + ".tmp"
		body := "CURRENT_STAGE=\"" + stage + "\"\nRUN_ID=\"irm-bench-20261201T080000Z\"\nS1_DONE=\"0\"\nS2_DONE=\"0\"\n"
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, stateFile); err != nil {
			b.Fatal(err)
		}
	}
	write("S1")
	if err := os.WriteFile(filepath.Join(dir, "checklist.state.env"), []byte("CHECKLIST_SCHEMA_VERSION=\"1\"\n"), 0o644); err != nil {
		b.Fatal(err)
	}

	lw, err := watch.New(watch.Options{Paths: []string{root}})
	if err != nil {
		b.Fatal(err)
	}
	defer lw.Close()
	rw := Watch(SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}, []Root{{Host: "alpha", Path: root}}, Options{})
	defer rw.Close()
	for live := false; !live; {
		select {
		case u := <-rw.Updates():
			for _, h := range u.Hosts {
				live = h.State == StateLive
			}
		case <-time.After(60 * time.Second):
			b.Fatal("alpha never went live")
		}
	}

	var local, remote []time.Duration
	stage := "S1"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if stage == "S1" {
			stage = "S2"
		} else {
			stage = "S1"
		}
		t0 := time.Now()
		write(stage)
		gotLocal, gotRemote := false, false
		deadline := time.After(30 * time.Second)
		for !gotLocal || !gotRemote {
			select {
			case u := <-lw.Updates():
				for _, r := range u.Changed {
					if r.CurrentStage == stage && !gotLocal {
						gotLocal = true
						local = append(local, time.Since(t0))
					}
				}
			case u := <-rw.Updates():
				for _, r := range u.Changed {
					if r.CurrentStage == stage && !gotRemote {
						gotRemote = true
						remote = append(remote, time.Since(t0))
					}
				}
			case <-deadline:
				b.Fatalf("change %d never arrived (local %v, remote %v)", i, gotLocal, gotRemote)
			}
		}
		// Let both watchers settle so one change is measured at a time.
		time.Sleep(20 * time.Millisecond)
	}
	b.StopTimer()
	q := func(d []time.Duration, p float64) float64 {
		s := append([]time.Duration(nil), d...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(local, 0.5), "local-p50-ms")
	b.ReportMetric(q(local, 0.99), "local-p99-ms")
	b.ReportMetric(q(remote, 0.5), "remote-p50-ms")
	b.ReportMetric(q(remote, 0.99), "remote-p99-ms")
	if strings.Contains(os.Getenv("RUNWATCH_BENCH_VERBOSE"), "1") {
		b.Logf("local %v\nremote %v", local, remote)
	}
}
