// Benchmarks of the dashboard: frame time with 1,000 runs and a 1 GiB log, batches, key → frame, file
// change → frame, a log storm, startup.

package ui

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"runwatch/model"
	"runwatch/sim"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/app"
	"runwatch/watch"
)

// manyRuns makes n distinct runs from the samples, spread over every status.
func manyRuns(n int) []model.Run {
	base := sampleRuns()
	runList := make([]model.Run, 0, n)
	for i := range n {
		r := base[i%len(base)]
		r.ID = fmt.Sprintf("%s-%04d", r.ID, i)
		r.StatePath = fmt.Sprintf("/bench/%04d/%s", i, filepath.Base(r.StatePath))
		r.Dir = filepath.Dir(r.StatePath)
		r.UpdatedAt = testNow.Add(-time.Duration(i) * time.Minute)
		runList = append(runList, r)
	}
	return runList
}

// BenchmarkViewThousandRuns: one frame of the wide layout holding 1,000 runs.
func BenchmarkViewThousandRuns(b *testing.B) {
	m := newTestModel(b, 140, 40, manyRuns(1000), app.Options{Theme: "dark"})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkBatchThousandRuns: applying a batch that changes 10 of 1,000 runs (re-sort included).
func BenchmarkBatchThousandRuns(b *testing.B) {
	runList := manyRuns(1000)
	m := newTestModel(b, 140, 40, runList, app.Options{Theme: "dark"})
	changed := model.RunPointers(runList[:10])
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		nm, _ := m.Update(app.BatchMsg{Changed: changed, At: testNow})
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
	var src app.LogSource
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
	m := newTestModel(b, 140, 40, []model.Run{run}, app.Options{Theme: "dark", OpenLog: OpenIndexedLog})
	if m.tl.Len() == 0 {
		b.Fatal("log not open")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = m.View()
	}
}

// frameProbe records when the program writes, and when the output first contains an awaited string.
type frameProbe struct {
	writes chan struct{}

	mu    sync.Mutex
	want  string
	seen  []byte
	found chan struct{}
	armed bool
}

func (p *frameProbe) Write(b []byte) (int, error) {
	select {
	case p.writes <- struct{}{}:
	default:
	}
	p.mu.Lock()
	if p.armed {
		p.armed = false
		close(p.found)
	}
	if p.want != "" {
		p.seen = append(p.seen, b...)
		if bytes.Contains(p.seen, []byte(p.want)) {
			p.want, p.seen = "", nil
			close(p.found)
		}
	}
	p.mu.Unlock()
	return len(b), nil
}

// await arms the probe for s and returns a channel closed when s has been written.
func (p *frameProbe) await(s string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.want, p.seen, p.found = s, nil, make(chan struct{})
	return p.found
}

func newProbe() *frameProbe { return &frameProbe{writes: make(chan struct{}, 1)} }

// reportPercentiles adds p50 and p99 of ds (in ms) to the benchmark's output.
func reportPercentiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(ds[len(ds)/2]), "p50-ms")
	b.ReportMetric(ms(ds[min(len(ds)-1, len(ds)*99/100)]), "p99-ms")
}

// BenchmarkKeyToFrame: a key press sent to a running program until its frame reaches the output, with 1,000
// runs loaded (the real renderer, 60 FPS frame pacing included).
func BenchmarkKeyToFrame(b *testing.B) {
	probe := newProbe()
	m := newTestModel(b, 140, 40, manyRuns(1000), app.Options{Theme: "dark"})
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
	for {
		select {
		case <-probe.writes:
			continue
		case <-time.After(30 * time.Millisecond):
		}
		break
	}
	ks := []tea.KeyPressMsg{press("j"), press("k")}
	var ds []time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		p.Send(ks[i%2])
		<-probe.writes
		ds = append(ds, time.Since(t0))
		i++
	}
	b.StopTimer()
	reportPercentiles(b, ds)
}

// markerModel tells the probe when the model first holds a timeline line with the awaited marker; the next
// write after that is the frame that shows it. (Matching the marker in the output itself is unreliable:
// cell-diff rendering writes only the cells that changed.)
type markerModel struct {
	Model
	probe  *frameProbe
	marker *atomicString
}

type atomicString struct {
	mu sync.Mutex
	s  string
}

func (a *atomicString) swap(s string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	old := a.s
	a.s = s
	return old
}

func (mm markerModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	nm, cmd := mm.Model.Update(msg)
	mm.Model = nm.(Model)
	if want := mm.marker.swap(""); want != "" {
		// The timeline follows the log's end: the appended line is the one under its cursor once read.
		if cur, _ := mm.tl.CursorLine(); strings.Contains(cur, want) {
			mm.probe.nextWrite()
		} else {
			mm.marker.swap(want)
		}
	}
	return mm, cmd
}

// nextWrite arms the probe to signal on the next write.
func (p *frameProbe) nextWrite() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = true
}

// BenchmarkFileChangeToFrame: a line appended to the selected run's run.log on disk until the frame showing
// it reaches the output, through the real watcher, the index and the renderer.
func BenchmarkFileChangeToFrame(b *testing.B) {
	probe := newProbe()
	marker := &atomicString{}
	_, logPath := startLive(b, probe, func(m Model) tea.Model { return markerModel{Model: m, probe: probe, marker: marker} })
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var ds []time.Duration
	i := 0
	for b.Loop() {
		txt := fmt.Sprintf("bench%07d", i)
		probe.mu.Lock()
		probe.found = make(chan struct{})
		seen := probe.found
		probe.mu.Unlock()
		marker.swap(txt)
		t0 := time.Now()
		if _, err := fmt.Fprintf(f, "[2026-02-16T06:00:00Z] stage_progress stage=verify note=%s\n", txt); err != nil {
			b.Fatal(err)
		}
		select {
		case <-seen:
		case <-time.After(10 * time.Second):
			b.Fatalf("line %s never reached the screen", txt)
		}
		ds = append(ds, time.Since(t0))
		i++
	}
	b.StopTimer()
	reportPercentiles(b, ds)
}

// keyProbeModel arms the probe once the model has handled a key: the next write is that key's frame, even
// while a log storm keeps frames coming.
type keyProbeModel struct {
	Model
	probe *frameProbe
}

func (km keyProbeModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	nm, cmd := km.Model.Update(msg)
	km.Model = nm.(Model)
	if _, ok := msg.(tea.KeyPressMsg); ok {
		km.probe.nextWrite()
	}
	return km, cmd
}

// BenchmarkKeyToFrameDuringLogStorm: key → frame while 100,000 lines/s are appended to the run.log the
// timeline follows (its goal is in docs/BENCHMARKS.md). Run with -benchtime 300x (about 10 s).
func BenchmarkKeyToFrameDuringLogStorm(b *testing.B) {
	probe := newProbe()
	p, logPath := startLive(b, probe, func(m Model) tea.Model { return keyProbeModel{Model: m, probe: probe} })
	stormDone := make(chan int)
	go func() {
		n, err := sim.AppendLog(logPath, 100000, 12*time.Second)
		if err != nil {
			b.Error(err)
		}
		stormDone <- n
	}()
	time.Sleep(500 * time.Millisecond) // let the storm reach its rate
	ks := []tea.KeyPressMsg{press("t"), press("t")}
	var ds []time.Duration
	var peak uint64
	i := 0
	for b.Loop() {
		probe.mu.Lock()
		probe.found = make(chan struct{})
		seen := probe.found
		probe.mu.Unlock()
		t0 := time.Now()
		p.Send(ks[i%2])
		select {
		case <-seen:
		case <-time.After(5 * time.Second):
			b.Fatal("no frame for a key within 5 s")
		}
		ds = append(ds, time.Since(t0))
		if i%20 == 0 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		time.Sleep(20 * time.Millisecond)
		i++
	}
	b.StopTimer()
	reportPercentiles(b, ds)
	b.ReportMetric(float64(peak)/(1<<20), "MiB-heap-peak")
	lines := <-stormDone
	b.ReportMetric(float64(lines), "lines-appended")
}

// BenchmarkStartupFirstFrame1000Runs: from watch.New over 1,000 generated run roots of both conventions to
// the first frame listing them (its goal is in docs/BENCHMARKS.md). Run with -benchtime 3x: generating the runs
// takes seconds and is not timed.
func BenchmarkStartupFirstFrame1000Runs(b *testing.B) {
	dir := b.TempDir()
	if _, err := sim.GenerateRuns(dir, 1000); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		probe := newProbe()
		shown := probe.await("1000 runs")
		t0 := time.Now()
		w, err := watch.New(watch.Options{Paths: []string{dir}})
		if err != nil {
			b.Fatal(err)
		}
		p := tea.NewProgram(New(app.Options{Theme: "dark", OpenLog: OpenIndexedLog}), tea.WithInput(nil),
			tea.WithOutput(probe), tea.WithWindowSize(140, 40), tea.WithColorProfile(colorprofile.ANSI256), tea.WithoutSignals())
		done := make(chan struct{})
		go func() {
			defer close(done)
			p.Run()
		}()
		go Relay(p, w)
		select {
		case <-shown:
		case <-time.After(30 * time.Second):
			b.Fatal("the runs never showed")
		}
		b.ReportMetric(float64(time.Since(t0))/float64(time.Millisecond), "ms-to-first-frame")
		p.Quit()
		<-done
		w.Close()
	}
}

// BenchmarkSnapshotThousandRuns: the dashboard's share of startup: the first Update with 1,000 runs and the
// first frame.
func BenchmarkSnapshotThousandRuns(b *testing.B) {
	runList := manyRuns(1000)
	now := func() time.Time { return testNow }
	for b.Loop() {
		m := New(app.Options{Theme: "dark", Now: now})
		nm, _ := m.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
		nm, _ = nm.Update(app.SnapshotMsg{Runs: runList, At: testNow})
		_ = nm.View()
	}
}

// startLive runs the program (the model wrapped by wrap) over a private copy of the fixtures with the real
// watcher, waits until the selected run's run.log is on screen and returns the program and that log. The
// program and watcher stop when the benchmark ends.
func startLive(b *testing.B, probe *frameProbe, wrap func(Model) tea.Model) (*tea.Program, string) {
	b.Helper()
	root := resumabletest.Copy(b)
	w, err := watch.New(watch.Options{Paths: []string{root}})
	if err != nil {
		b.Fatal(err)
	}
	p := tea.NewProgram(wrap(New(app.Options{Theme: "dark", OpenLog: OpenIndexedLog})), tea.WithInput(nil),
		tea.WithOutput(probe), tea.WithWindowSize(140, 40), tea.WithColorProfile(colorprofile.ANSI256), tea.WithoutSignals())
	ready := probe.await("stage=verify")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := p.Run(); err != nil {
			b.Error(err)
		}
	}()
	b.Cleanup(func() {
		p.Quit()
		<-done
		w.Close()
	})
	go Relay(p, w)
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		b.Fatal("the selected run's log never showed")
	}
	return p, filepath.Join(resumabletest.Run(root, resumabletest.Mining), "run.log")
}
