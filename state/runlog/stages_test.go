package runlog

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestUndoCancelsRunwatchLines: an undo line that arrives in a later read than the action it undoes takes
// that action's stage entries back out (latest word, completions, next pairs, spans); the writer's own
// entries, and an action not undone, stay.
func TestUndoCancelsRunwatchLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	write := func(s string) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	read := func() StageEvidence {
		t.Helper()
		ev, ok := ReadStageEvidence(path)
		if !ok {
			t.Fatal("log not read")
		}
		return ev
	}
	write("[2026-02-15T01:00:00Z] stage_start stage=S1\n[2026-02-15T01:05:00Z] stage_complete stage=S1 next=S2\n" +
		"[2026-02-15T01:06:00Z] stage_start stage=S2\n[2026-02-15T01:09:00Z] stage_blocked stage=S2 failed_metrics=cov\n")
	if ev := read(); ev.Latest["S2"].Event != "stage_blocked" {
		t.Fatalf("latest on S2 = %+v", ev.Latest["S2"])
	}
	write("[2026-02-15T01:10:00Z] stage_complete stage=S2 next=S3 tool=runwatch user=me action_id=20260215-a\n")
	ev := read()
	if ev.Latest["S2"].Event != "stage_complete" || !slices.Contains(ev.Completes, "S2") {
		t.Fatalf("after step: latest %+v, completes %v", ev.Latest["S2"], ev.Completes)
	}
	write("[2026-02-15T01:11:00Z] runwatch_undo action=step undoes=20260215-a files=state.env tool=runwatch action_id=20260215-b\n")
	ev = read()
	if ev.Latest["S2"].Event != "stage_blocked" {
		t.Fatalf("after undo: latest on S2 = %+v, want stage_blocked", ev.Latest["S2"])
	}
	if slices.Contains(ev.Completes, "S2") || len(ev.Next) != 1 || ev.Next[0] != [2]string{"S1", "S2"} {
		t.Fatalf("after undo: completes %v next %v; the undone step must leave neither", ev.Completes, ev.Next)
	}
	if sp := ev.Spans["S2"]; !sp.End.IsZero() {
		t.Fatalf("after undo: S2 span %+v has an end", sp)
	}
	if sp := ev.Spans["S1"]; sp.End.Sub(sp.Start).Minutes() != 5 {
		t.Fatalf("S1 span %+v, want 5 minutes", sp)
	}
	// A fresh read of the whole file (no cache) judges the same.
	stageScans.forget(path)
	if again := read(); again.Latest["S2"].Event != "stage_blocked" || slices.Contains(again.Completes, "S2") {
		t.Fatalf("fresh read: latest %+v completes %v", again.Latest["S2"], again.Completes)
	}
}

// TestStageScanAllocatesNothingPerLine: the stage scan allocates for the stage entries it keeps, not for the
// lines around them, even lines that name a stage (check_progress stage=M1, resume_target_stage=): a log
// 16 times longer with the same stage entries costs the same allocations. (It cost one parse, several
// allocations, per such line before: status does this for every run.)
func TestStageScanAllocatesNothingPerLine(t *testing.T) {
	dir := t.TempDir()
	logOf := func(padding int) string {
		var b strings.Builder
		b.WriteString("[2026-11-08T20:57:00Z] run_bootstrap mode=kickoff-new run_id=20261108T205700Z\n")
		for i := range padding {
			fmt.Fprintf(&b, "[2026-11-08T20:58:00Z] check_progress stage=M1 item=conf_migrated files_checked=%d\n", i)
			b.WriteString("  resume_target_stage=M1 restarted=complete\n")
		}
		b.WriteString("[2026-11-08T21:02:52Z] stage-complete M0 next=M1\n" +
			"[2026-11-08T21:06:16Z] stage_start stage=M1\n")
		path := filepath.Join(dir, fmt.Sprintf("run-%d.log", padding))
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if len(b.String()) > StageTailWindow {
			t.Fatalf("log of %d bytes is past the tail window", b.Len())
		}
		return path
	}
	allocs := func(path string) float64 {
		return testing.AllocsPerRun(20, func() {
			if ev, ok := ReadStageTail(path); !ok || ev.Latest["M1"].Event != "stage_start" || ev.Latest["M0"].Event != "stage_complete" {
				t.Fatalf("evidence of %s: %+v", path, ev.Latest)
			}
		})
	}
	// A collection may empty scanBufs' pool between two reads, costing a buffer or two more on either side:
	// that slack is no cost per line, which would be hundreds here.
	const poolSlack = 2
	short, long := allocs(logOf(25)), allocs(logOf(400))
	if long > short+poolSlack {
		t.Fatalf("ReadStageTail allocates %.0f times over 25 lines that are not stage entries and %.0f over 400", short, long)
	}
}

// TestStageScanReadsEverySpelling: the stage scan finds each spelling of a stage entry that the entry parser
// gives a stage event (docs/FORMATS.md B.5), including `S1 blocked` and `S2 done`, which name no stage word,
// and a stage id given on a continuation line; and it keeps nothing from entries that only mention stages.
func TestStageScanReadsEverySpelling(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	log := "[2026-02-15T01:00:00Z] S1 blocked reason=disk\n" +
		"[2026-02-15T01:01:00Z] S2 done\n" +
		"[2026-02-15T01:02:00Z] Stage-Complete S3 next=S4\n" +
		"[2026-02-15T01:03:00Z] stage_start\n  stage=S4\n  note=continued\n" +
		"[2026-02-15T01:04:00Z] STAGE_STARTED stage=S5\n" +
		"[2026-02-15T01:05:00Z] check_progress stage=S6 item=x\n" +
		"[2026-02-15T01:06:00Z] S7 took 3 tries\n" +
		"[2026-02-15T01:07:00Z] S8 artifact integrity\n  artifact=a.json\n" +
		"  [2026-02-15T01:08:00Z] stage_start stage=S9\n" // indented: a continuation line, not an entry
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func(string) (StageEvidence, bool){ReadStageTail, ReadStageEvidence} {
		ev, ok := read(path)
		if !ok {
			t.Fatal("log not read")
		}
		want := map[string]string{"S1": "stage_blocked", "S2": "stage_done", "S3": "stage_complete", "S4": "stage_start", "S5": "stage_started"}
		got := map[string]string{}
		for k, e := range ev.Latest {
			got[k] = e.Event
		}
		if !maps.Equal(got, want) {
			t.Fatalf("latest events %v, want %v", got, want)
		}
		if len(ev.Next) != 1 || ev.Next[0] != [2]string{"S3", "S4"} {
			t.Fatalf("next %v, want [S3 S4]", ev.Next)
		}
	}
}

// TestStageScanRemembersOnlyLongLogs: the evidence of a log within the tail window is not kept (a watcher
// over 10,000 short logs held 1,024 of them, ~3.4 MB), and reading it again after an append sees the append;
// a longer log's evidence is kept, so its re-looks read only what was appended.
func TestStageScanRemembersOnlyLongLogs(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.log")
	if err := os.WriteFile(short, []byte("[2026-02-15T01:00:00Z] stage_start stage=S1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, "long.log")
	body := "[2026-02-15T01:00:00Z] stage_start stage=L1\n" +
		strings.Repeat("[2026-02-15T01:00:01Z] progress detail="+strings.Repeat("x", 60)+"\n", StageTailWindow/80+1)
	if err := os.WriteFile(long, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{short, long} {
		if _, ok := ReadStageEvidence(path); !ok {
			t.Fatalf("%s not read", path)
		}
	}
	if _, kept := stageScans.get(short); kept {
		t.Error("the short log's evidence is kept")
	}
	if _, kept := stageScans.get(long); !kept {
		t.Error("the long log's evidence is not kept")
	}
	f, err := os.OpenFile(short, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[2026-02-15T01:05:00Z] stage_complete stage=S1 next=S2\n")
	f.Close()
	if ev, _ := ReadStageEvidence(short); ev.Latest["S1"].Event != "stage_complete" || ev.Spans["S1"].End.IsZero() {
		t.Errorf("after the append: latest %+v span %+v", ev.Latest["S1"], ev.Spans["S1"])
	}
}
