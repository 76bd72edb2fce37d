package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/keys"
)

// TestSearch1GiBLogInTmux is issue 14's end-to-end check: the real binary in tmux, following a generated
// 1 GiB run.log at its end, searches forward for a word that is only on the first line. The search must
// show its progress (spinner, bytes) while it runs, then wrap around to the top and say so. The times to
// the first progress and to the match are logged (and recorded in docs/BENCHMARKS.md), not asserted: the
// machine is shared. The log lives in the test's temp dir and is removed at the end.
func TestSearch1GiBLogInTmux(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes a 1 GiB log")
	}
	d := newTmuxDemo(t) // skips without tmux
	root := resumabletest.Copy(t)
	runDir := filepath.Join(root, "reports", "iso26262-mining-20260215T143525Z")
	logPath := filepath.Join(runDir, "run.log")
	writeBigLog(t, logPath, 1<<30)
	t.Cleanup(func() { os.Remove(logPath) })

	bin := buildRunwatch(t)
	d.must("new-session", "-d", "-x", "160", "-y", "45", "-s", "demo", bin+" --read-only "+runDir)
	// Every byte the program draws goes to a file too, and a watcher notes when the file grows: the
	// progress frame of a search that takes well under a second on a quiet machine is on screen for less
	// than a capture interval, and the search's own time is read from the drawn stream (the frame after
	// enter, the frame with the match), not from captures taken 100 ms apart.
	drawn := filepath.Join(t.TempDir(), "drawn")
	if err := os.WriteFile(drawn, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d.must("pipe-pane", "-t", "demo", "-o", "cat >> "+drawn)
	stream := watchGrowth(t, drawn)
	d.waitText("▶ follow")
	d.focus("Timeline")
	d.press(keys.ActFilter)
	d.typeText("zqxj")
	d.waitText("zqxj")
	before := stream.size()
	d.send("enter")
	d.waitScreen("the match on the first line", func(s string) bool {
		return strings.Contains(s, "search hit BOTTOM, continuing at TOP")
	})
	// The count runs on in the background after the find: "match ?/≥0…" until it has reached the match.
	s := d.waitScreen("the match's rank in the count", func(s string) bool {
		return strings.Contains(s, "zqxj-only-here") && strings.Contains(s, "match 1/")
	})
	out, err := os.ReadFile(drawn)
	if err != nil {
		t.Fatal(err)
	}
	after := out[before:]
	matchOff := strings.Index(string(after), "search hit BOTTOM")
	if matchOff < 0 {
		t.Fatalf("the match's note was never drawn:\n%q", ansi.Strip(string(after)))
	}
	enterAt, _ := stream.reached(before + 1)
	matchAt, _ := stream.reached(before + int64(matchOff) + 1)
	searched := matchAt.Sub(enterAt)
	text := ansi.Strip(string(after[:matchOff]))
	progressShown := (strings.Contains(text, "searching ") || strings.Contains(text, "counting lines first")) && strings.Contains(text, "esc cancels")
	// A find that is over before its progress is due (progressAfter, then one tick to draw it) has nothing
	// to show: on a quiet machine 1 GiB can take about that long. The promise is feedback within 300 ms.
	if !progressShown && searched > 300*time.Millisecond {
		t.Errorf("the search ran %v (from its first frame to the match's) and never showed its progress:\n%s", searched, s)
	}
	if !strings.Contains(s, "zqxj-only-here") || !strings.Contains(s, "match 1/") {
		t.Errorf("the match is not on screen with its count:\n%s", s)
	}
	if progressShown {
		at := strings.Index(string(after), "esc cancels")
		progressAt, _ := stream.reached(before + int64(at) + 1)
		t.Logf("1 GiB log: progress drawn %v after the search's first frame, match after %v", progressAt.Sub(enterAt), searched)
	} else {
		t.Logf("1 GiB log: match after %v, before progress was due", searched)
	}

	// A search that takes seconds whatever the machine (a regexp with no literal part, read line by line,
	// matching nothing) shows its spinner and progress, and esc cancels it; the cursor stays on the match.
	d.press(keys.ActFilter)
	d.must("send-keys", "-t", "demo", "C-u")
	d.send("tab")
	d.typeText("[q-z]{9}")
	d.waitText("[q-z]{9}")
	before = stream.size()
	d.send("enter")
	d.waitScreen("the slow search's progress", func(s string) bool {
		return strings.Contains(s, "searching ") && strings.Contains(s, "esc cancels")
	})
	out, err = os.ReadFile(drawn)
	if err != nil {
		t.Fatal(err)
	}
	enterAt, _ = stream.reached(before + 1)
	if at := strings.Index(string(out[before:]), "esc cancels"); at >= 0 {
		progressAt, _ := stream.reached(before + int64(at) + 1)
		t.Logf("1 GiB log, slow regexp: progress drawn %v after the search's first frame", progressAt.Sub(enterAt))
	}
	d.send("esc")
	s = d.waitText("search cancelled")
	if !strings.Contains(s, "zqxj-only-here") || strings.Contains(s, "esc cancels") {
		t.Errorf("after esc the search should be gone and the cursor still on the first line:\n%s", s)
	}
	d.send("q")
}

// growth records when a file reached each size.
type growth struct {
	mu    sync.Mutex
	sizes []int64
	times []time.Time
}

// watchGrowth polls path's size every millisecond until the test ends.
func watchGrowth(t *testing.T, path string) *growth {
	g := &growth{}
	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			st, err := os.Stat(path)
			if err != nil {
				continue
			}
			g.mu.Lock()
			if n := len(g.sizes); n == 0 || st.Size() > g.sizes[n-1] {
				g.sizes, g.times = append(g.sizes, st.Size()), append(g.times, time.Now())
			}
			g.mu.Unlock()
		}
	}()
	return g
}

func (g *growth) size() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.sizes) == 0 {
		return 0
	}
	return g.sizes[len(g.sizes)-1]
}

// reached is when the file first held n bytes, as the poll saw it.
func (g *growth) reached(n int64) (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, s := range g.sizes {
		if s >= n {
			return g.times[i], true
		}
	}
	return time.Time{}, false
}

// writeBigLog writes a log of about size bytes: a first line holding the only zqxj-only-here, then
// entries with continuation lines.
func writeBigLog(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "[2026-02-15T14:35:25Z] run_bootstrap zqxj-only-here")
	var chunk strings.Builder
	for i := 0; chunk.Len() < 1<<20; i++ {
		fmt.Fprintf(&chunk, "[2026-02-15T14:%02d:%02dZ] stage_start stage=S%d run_id=20260215T143525Z host=oss-work\n", i/60%60, i%60, i%40)
		if i%5 == 0 {
			fmt.Fprintf(&chunk, "  artifact=/cfg/reports/irm/artifacts/s1/out-%d.json\n  sha256=%064x\n", i, i*7919)
		}
	}
	c := chunk.String()
	for n := int64(0); n < size; n += int64(len(c)) {
		if _, err := w.WriteString(c); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Fprintln(w, "[2026-02-16T00:00:00Z] last line")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
