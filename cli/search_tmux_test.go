package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"runwatch/state/resumable/resumabletest"
	"runwatch/ui"
)

// TestSearch1GiBLogInTmux is issue 14's end-to-end check: the real binary in tmux, following a generated
// 1 GiB run.log at its end, searches forward for a word that is only on the first line. The search must
// show its progress (spinner, bytes) while it runs, then wrap around to the top and say so. The times to
// the first progress and to the match are logged (and recorded in docs/BENCHMARKS.md), not asserted: the
// machine is shared. The log lives in the test's temp dir and is removed at the end.
func TestSearch1GiBLogInTmux(t *testing.T) {
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
	// Every byte the program draws goes to a file too: a progress frame that is on screen for less than a
	// capture interval (a quiet machine searches 1 GiB in well under a second) is still seen.
	drawn := filepath.Join(t.TempDir(), "drawn")
	d.must("pipe-pane", "-t", "demo", "-o", "cat >> "+drawn)
	d.waitText("▶ follow")
	d.focus("Timeline")
	d.press(ui.ActFilter)
	d.typeText("zqxj")
	start := time.Now()
	d.send("enter")
	var progressAt time.Duration
	s := d.waitScreen("the match on the first line", func(s string) bool {
		if progressAt == 0 && (strings.Contains(s, "searching ") || strings.Contains(s, "counting lines first")) && strings.Contains(s, "esc cancels") {
			progressAt = time.Since(start)
		}
		return strings.Contains(s, "search hit BOTTOM, continuing at TOP")
	})
	matchAt := time.Since(start)
	// The count runs on in the background after the find: "match ?/≥0…" until it has reached the match.
	s = d.waitScreen("the match's rank in the count", func(s string) bool {
		return strings.Contains(s, "zqxj-only-here") && strings.Contains(s, "match 1/")
	})
	if progressAt == 0 {
		out, _ := os.ReadFile(drawn)
		text := ansi.Strip(string(out))
		if (strings.Contains(text, "searching ") || strings.Contains(text, "counting lines first")) && strings.Contains(text, "esc cancels") {
			progressAt = -1 // drawn, but between two captures
		}
	}
	// A find that is over before its progress is due (progressAfter, then one tick to draw it) has nothing
	// to show: on a quiet machine 1 GiB can take about that long. The promise is feedback within 300 ms.
	if progressAt == 0 && matchAt > 300*time.Millisecond {
		t.Errorf("the search ran %v and never showed its progress:\n%s", matchAt, s)
	}
	if !strings.Contains(s, "zqxj-only-here") || !strings.Contains(s, "match 1/") {
		t.Errorf("the match is not on screen with its count:\n%s", s)
	}
	t.Logf("1 GiB log: progress shown after %v, match after %v", progressAt, matchAt)
	d.send("q")
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
