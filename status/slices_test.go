package status

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"runwatch/model"
)

// hostileRuns are n runs whose ids, stage names, reasons, locks and folders hold what a run file can
// spell: wide runes, emoji, combining marks, escape sequences, bytes that are not UTF-8, and lengths that
// vary, so the widest cell of a column sits in one slice and not in the others. Every length and content
// cycles with i modulo at most 17, so slicesRuns rows hold each of them several times.
func hostileRuns(n int, now time.Time) []model.Run {
	names := []string{"漢字のタスク", "e\u0301te\u0301", "🚀🚀", "\x1b]0;owned\x07title", "bad\xff\xfeutf8", "plain", "tab\there", ""}
	statuses := []model.RunStatus{model.StatusRunning, model.StatusAwaitingInput, model.StatusCompleted, model.StatusFailed}
	runs := make([]model.Run, n)
	for i := range runs {
		name := names[i%len(names)]
		id := fmt.Sprintf("run-%s-%d", name, i)
		if i == n/2 {
			id += strings.Repeat("長", 40) // the widest id, in one slice only
		}
		runs[i] = model.Run{
			ID: id, Kind: model.KindResumable, Status: statuses[i%len(statuses)],
			CurrentStage: fmt.Sprintf("S%d", i%5), Stages: []model.Stage{{Key: fmt.Sprintf("S%d", i%5), Name: name + strings.Repeat("x", i%13)}},
			UpdatedAt: now.Add(-time.Duration(i) * time.Minute), Progress: model.Progress{Done: i % 7, Total: 1 + i%11},
			Attention: model.Attention{Reason: strings.Repeat(name+" ", i%9), Command: "runwatch resume " + id},
			Problems:  []model.Problem{{Message: name}}, Dir: "/tmp/" + name + fmt.Sprint(i), Archived: i%17 == 0,
		}
	}
	return runs
}

// slicesRuns rows and slicesPer sizes: each size cuts the table into several slices (25: 25, 25 and a short
// last one of 14) with the widest id (row 32) in one of them; the time is in the rows drawn, not the number of
// slices, so the rows are few (400 rows took 19 s and 12 s under -race).
const slicesRuns = 64

var slicesPer = []int{1, 7, 25}

// The table drawn a slice at a time is byte for byte the table drawn whole, for any slice size, at any
// width (0: not a terminal) and in both layouts: every column's width is fixed from all the rows first. The
// runs are taken as read, judged, spilled, read back and drawn a slice at a time, as status draws them.
func TestStatusStreamTableInSlicesIsTheWholeTable(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	runs := hostileRuns(slicesRuns, now)
	for _, format := range []string{"table", "wide"} {
		for _, width := range []int{0, 120, 50} {
			draw := func(per int) string {
				o := NewOut(format, now, model.LivenessRules{})
				o.slice = per
				for _, r := range runs {
					o.Add(r)
				}
				var b bytes.Buffer
				if _, err := o.Print(&b, "id", model.Snapshot{}, width); err != nil {
					t.Fatal(err)
				}
				return b.String()
			}
			whole := draw(len(runs))
			if n := strings.Count(whole, "\n"); n != len(runs)+1 || !strings.HasPrefix(whole, "RUN") {
				t.Fatalf("%s width=%d: %d lines for %d runs:\n%.300s", format, width, n, len(runs), whole)
			}
			for _, per := range slicesPer {
				if got := draw(per); got != whole {
					t.Errorf("%s width=%d: in slices of %d the table differs from the whole:\n%s", format, width, per, firstDiff(whole, got))
				}
			}
		}
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range min(len(wl), len(gl)) {
		if wl[i] != gl[i] {
			return fmt.Sprintf("line %d:\nwant %q\ngot  %q", i, wl[i], gl[i])
		}
	}
	return fmt.Sprintf("want %d lines, got %d", len(wl), len(gl))
}
