package ui

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"runwatch/model"
)

// manyRuns makes n distinct runs from the samples, spread over every status.
func manyRuns(n int) []model.Run {
	base := sampleRuns()
	runs := make([]model.Run, 0, n)
	for i := range n {
		r := base[i%len(base)]
		r.ID = fmt.Sprintf("%s-%04d", r.ID, i)
		r.StatePath = fmt.Sprintf("/bench/%04d/%s", i, filepath.Base(r.StatePath))
		r.Dir = filepath.Dir(r.StatePath)
		r.UpdatedAt = testNow.Add(-time.Duration(i) * time.Minute)
		runs = append(runs, r)
	}
	return runs
}

// BenchmarkViewThousandRuns: one frame of the wide layout holding 1,000 runs.
func BenchmarkViewThousandRuns(b *testing.B) {
	m := newTestModel(b, 140, 40, manyRuns(1000), Options{Theme: "dark"})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkBatchThousandRuns: applying a batch that changes 10 of 1,000 runs (re-sort included).
func BenchmarkBatchThousandRuns(b *testing.B) {
	runs := manyRuns(1000)
	m := newTestModel(b, 140, 40, runs, Options{Theme: "dark"})
	changed := runs[:10]
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		nm, _ := m.Update(BatchMsg{Changed: changed, At: testNow})
		m = nm.(Model)
	}
}

var (
	bigLogOnce sync.Once
	bigLogPath string
	bigLogErr  error
)

// bigLog writes a 1 GiB run.log once per process (in RUNWATCH_BENCH_DIR or the temp dir), with entries,
// continuation lines and errors like a real one.
func bigLog(b *testing.B) string {
	b.Helper()
	bigLogOnce.Do(func() {
		dir := os.Getenv("RUNWATCH_BENCH_DIR")
		if dir == "" {
			dir = os.TempDir()
		}
		bigLogPath = filepath.Join(dir, "runwatch-bench-1GiB-run.log")
		if st, err := os.Stat(bigLogPath); err == nil && st.Size() >= 1<<30 {
			return
		}
		f, err := os.Create(bigLogPath)
		if err != nil {
			bigLogErr = err
			return
		}
		defer f.Close()
		w := bufio.NewWriterSize(f, 1<<20)
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var written int64
		for i := 0; written < 1<<30; i++ {
			var n int
			ts := t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339)
			switch i % 10 {
			case 3:
				n, _ = fmt.Fprintf(w, "[%s] stage_blocked stage=S%d reason=\"checklist incomplete\"\n  CB_S%d_VERIFY=0\n", ts, i%40, i%40)
			case 7:
				n, _ = fmt.Fprintf(w, "[%s] tool_output stage=S%d lines=3\n  building package %d\n  ok\n", ts, i%40, i)
			default:
				n, _ = fmt.Fprintf(w, "[%s] stage_progress stage=S%d step=%d note=\"working on item %d of the plan\"\n", ts, i%40, i, i)
			}
			written += int64(n)
		}
		bigLogErr = w.Flush()
	})
	if bigLogErr != nil {
		b.Fatal(bigLogErr)
	}
	return bigLogPath
}

// BenchmarkOpen1GiBLog: opening a 1 GiB run.log and showing its tail (the timeline's open path).
func BenchmarkOpen1GiBLog(b *testing.B) {
	path := bigLog(b)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	var src LogSource
	for b.Loop() {
		s, err := OpenIndexedLog(path)
		if err != nil {
			b.Fatal(err)
		}
		if src != nil {
			src.Close()
		}
		src = s
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc))/(1<<20), "MiB-heap-held")
	src.Close()
}

// BenchmarkView1GiBLog: one frame with the 1 GiB log open in the timeline.
func BenchmarkView1GiBLog(b *testing.B) {
	path := bigLog(b)
	run := sampleRuns()[0]
	run.Log = &model.LogRef{Path: path}
	m := newTestModel(b, 140, 40, []model.Run{run}, Options{Theme: "dark", OpenLog: OpenIndexedLog})
	if m.tl.len() == 0 {
		b.Fatal("log not open")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = m.View()
	}
}

// frameProbe records when the program writes a frame.
type frameProbe struct {
	writes chan struct{}
}

func (p *frameProbe) Write(b []byte) (int, error) {
	select {
	case p.writes <- struct{}{}:
	default:
	}
	return len(b), nil
}

// BenchmarkKeyToFrame: a key press sent to a running program until its frame reaches the output, with 1,000
// runs loaded (the real renderer, 60 FPS frame pacing included).
func BenchmarkKeyToFrame(b *testing.B) {
	probe := &frameProbe{writes: make(chan struct{}, 1)}
	m := newTestModel(b, 140, 40, manyRuns(1000), Options{Theme: "dark"})
	p := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(probe), tea.WithWindowSize(140, 40),
		tea.WithColorProfile(colorprofile.ANSI256), tea.WithoutSignals())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := p.Run(); err != nil {
			b.Error(err)
		}
	}()
	<-probe.writes // first frame
	drain := func() {
		for {
			select {
			case <-probe.writes:
			case <-time.After(30 * time.Millisecond):
				return
			}
		}
	}
	drain()
	keys := []tea.KeyPressMsg{key("j"), key("k")}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		p.Send(keys[i%2])
		<-probe.writes
		i++
	}
	b.StopTimer()
	p.Quit()
	<-done
}
