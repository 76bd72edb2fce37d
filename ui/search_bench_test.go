// Benchmark of key → frame while a search reads a 1 GiB log.

package ui

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"runwatch/model"
	"runwatch/ui/app"
)

// searching is whether the footer's keys offer to cancel a search: one is in flight.
func searching(help []key.Binding) bool {
	for _, k := range help {
		if k.Help().Desc == "cancel search" {
			return true
		}
	}
	return false
}

// searchProbeModel arms the probe once the model has handled a key, and counts the keys it handled while a
// search was in flight, so the benchmark can show its keys were pressed during the search.
type searchProbeModel struct {
	Model
	probe         *frameProbe
	during, total *atomic.Int64
	measuring     *atomic.Bool // the probe is armed by keys only once the timed keys start
}

func (sm searchProbeModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	nm, cmd := sm.Model.Update(msg)
	sm.Model = nm.(Model)
	if _, ok := msg.(tea.KeyPressMsg); ok && sm.measuring.Load() {
		sm.total.Add(1)
		if searching(sm.tl.ShortHelp()) {
			sm.during.Add(1)
		}
		sm.probe.nextWrite()
	}
	return sm, cmd
}

// BenchmarkKeyToFrameDuring1GiBSearch: key → frame (goal in docs/BENCHMARKS.md) for keys pressed while a search
// runs over a 1 GiB run.log, through the real program, renderer and index. The pattern is a regexp with no
// literal part that matches nothing, the slowest search there is (the regexp engine reads every byte, for
// many seconds), so every timed key lands during the search; the spinner's ticks redraw meanwhile. k and j
// alternate so every key changes the frame. Run with -benchtime 200x.
func BenchmarkKeyToFrameDuring1GiBSearch(b *testing.B) {
	path := bigLog(b)
	run := sampleRuns()[0]
	run.Log = &model.LogRef{Path: path}
	open, wait := counted(b, OpenIndexedLog)
	m := newTestModel(b, 200, 60, []model.Run{run}, app.Options{Theme: "dark", OpenLog: open})
	for m.app.Focus != app.PaneTimeline {
		m = send(b, m, press("tab"))
	}
	if m.tl.Len() == 0 {
		b.Fatal("log not open")
	}
	// The search is what is measured, not the first count of the file's lines, which it would wait for.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	wait(ctx)
	cancel()
	probe := newProbe()
	var during, total atomic.Int64
	var measuring atomic.Bool
	p := tea.NewProgram(searchProbeModel{Model: m, probe: probe, during: &during, total: &total, measuring: &measuring}, tea.WithInput(nil),
		tea.WithOutput(probe), tea.WithWindowSize(200, 60), tea.WithColorProfile(colorprofile.ANSI256), tea.WithoutSignals())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := p.Run(); err != nil {
			b.Error(err)
		}
	}()
	defer func() { p.Quit(); <-done }()
	<-probe.writes // the first frame
	searching := probe.await("searching")
	for _, k := range []string{"/", "tab", "[", "q", "-", "z", "]", "{", "9", "}", "enter"} {
		p.Send(press(k))
	}
	select {
	case <-searching:
	case <-time.After(30 * time.Second):
		b.Fatal("the search never showed its progress")
	}
	measuring.Store(true)
	ks := []tea.KeyPressMsg{press("k"), press("j")}
	var ds []time.Duration
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
		time.Sleep(20 * time.Millisecond) // a person's key rate, and room for the spinner's own frames
		i++
	}
	b.StopTimer()
	reportPercentiles(b, ds)
	b.ReportMetric(float64(during.Load()), "keys-during-search")
	b.ReportMetric(float64(total.Load()), "keys")
}
