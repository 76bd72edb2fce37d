package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/fixturetest"
)

// orderRuns is the fixture tree plus one task's history: four finished runs whose S1 took 2m, and a run of the
// task held by a live process that has been silent for 20m. Only with the history is it quiet (5 × its
// usual p90, at least 15m; 60m without); its timing's usual lengths and ETA come from the history too.
func orderRuns(t *testing.T, now time.Time) ([]model.Run, model.Env) {
	t.Helper()
	env := state.NewEnv(0)
	env.Now = now
	locs, err := state.Discover([]string{"../testdata"}, 0)
	if _, err = state.SplitUnreadable(err); err != nil {
		t.Fatal(err)
	}
	runs := fixturetest.LoadAll(locs, env)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	stage := func(key string, st model.StageStatus, start, end *time.Time) model.Stage {
		return model.Stage{Key: key, Status: st, StartedAt: start, CompletedAt: end}
	}
	for i := range 4 {
		base := -time.Duration(10+i) * time.Hour
		r := model.Run{ID: fmt.Sprintf("order-task-%d", i), Kind: model.KindResumable, StatePath: fmt.Sprintf("/order/%d/state.env", i),
			Dir: fmt.Sprintf("/order/%d", i), RawStatus: "completed", Resumable: &model.ResumableDetail{TaskName: "order-task"},
			Stages: []model.Stage{
				stage("S1", model.StageCompleted, at(base), at(base+2*time.Minute)),
				stage("S2", model.StageCompleted, at(base+2*time.Minute), at(base+time.Duration(5+i)*time.Minute)),
			}, UpdatedAt: *at(base + time.Hour)}
		model.FinalizeRun(&r)
		runs = append(runs, r)
	}
	live := model.Run{ID: "order-task-live", Kind: model.KindResumable, StatePath: "/order/live/state.env", Dir: "/order/live",
		RawStatus: "running", CurrentStage: "S1", Resumable: &model.ResumableDetail{TaskName: "order-task"},
		Stages:   []model.Stage{stage("S1", model.StageRunning, at(-25*time.Minute), nil), stage("S2", model.StagePending, nil, nil)},
		Locks:    []model.Lock{{Path: "/order/live/lock", PID: 4242, Verdict: model.VerdictLive, Reasons: []string{"pid 4242 is running"}}},
		ActiveAt: at(-20 * time.Minute), UpdatedAt: *at(-20 * time.Minute)}
	model.FinalizeRun(&live)
	if live.Status != model.StatusRunning || live.Attention.NeedsYou {
		t.Fatalf("the live run before the clock's judgement: %s %+v", live.Status, live.Attention)
	}
	return append(runs, live), env
}

// status judges each run by the clock and the history once every run is read: whatever order the runs are
// read in (they are read in parallel), the document is the same byte for byte, and it is the one a judgement
// with the whole history in hand writes (the dashboard's, once it has read everything). A quiet verdict
// that rests on the history shows even when the quiet run is read first.
func TestStatusJudgesEachRunWithTheWholeHistoryInAnyReadOrder(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	runs, env := orderRuns(t, now)
	head := Snapshot([]model.Run{}, env)

	want := wholeJudgement(t, runs, env, head)

	stream := func(format, by string, order []int) string {
		out := NewOut(format, env.Now, env.Liveness)
		for _, i := range order {
			r := runs[i]
			r.Stages = append([]model.Stage(nil), runs[i].Stages...)
			out.Add(r)
		}
		var b bytes.Buffer
		if _, err := out.Print(&b, by, head, 0); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	forward := make([]int, len(runs))
	for i := range forward {
		forward[i] = i
	}
	backward := make([]int, len(runs))
	for i := range backward {
		backward[i] = len(runs) - 1 - i
	}
	orders := [][]int{forward, backward}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3 {
		o := append([]int(nil), forward...)
		rng.Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
		orders = append(orders, o)
	}

	for _, format := range []string{"json", "jsonl", "wide"} {
		first := stream(format, "attention", orders[0])
		for _, o := range orders[1:] {
			if got := stream(format, "attention", o); got != first {
				t.Errorf("-o %s: read in order %v the output differs from read in order %v", format, o, orders[0])
			}
		}
		if format == "wide" && !strings.Contains(first, "pid 4242 is alive but stage S1 has been silent for 20m; it usually takes 2m (4 runs)") {
			t.Errorf("-o wide lacks the quiet run's reason:\n%s", first)
		}
	}
	// By state file, as the document of the whole judgement is ordered: the same bytes.
	for _, o := range orders {
		if got := stream("json", "path", o); got != want.String() {
			i := 0
			for i < min(len(got), want.Len()) && got[i] == want.String()[i] {
				i++
			}
			t.Fatalf("read in order %v, the document differs from the judgement with the whole history at byte %d:\ngot  %q\nwant %q",
				o, i, got[max(0, i-120):min(len(got), i+120)], want.String()[max(0, i-120):min(want.Len(), i+120)])
		}
	}

	// The quiet run, read before any run of its task: quiet, by its history, and ranked with those that need you.
	var doc struct {
		Runs []struct {
			ID        string          `json:"id"`
			Attention model.Attention `json:"attention"`
			Timing    map[string]any  `json:"timing"`
		} `json:"runs"`
	}
	last := append([]int{len(runs) - 1}, forward[:len(runs)-1]...)
	if err := json.Unmarshal([]byte(stream("json", "attention", last)), &doc); err != nil {
		t.Fatal(err)
	}
	for i, r := range doc.Runs {
		if r.ID != "order-task-live" {
			continue
		}
		if !r.Attention.NeedsYou || r.Attention.Code != model.AttentionQuiet {
			t.Errorf("the live run read first: attention %+v, want quiet by its task's 4 past runs", r.Attention)
		}
		if r.Timing["eta_seconds"] == nil || r.Timing["runs"] != float64(4) {
			t.Errorf("the live run's timing %v, want an ETA by 4 past runs", r.Timing)
		}
		if i > 0 && doc.Runs[i-1].Attention.Rank > r.Attention.Rank {
			t.Errorf("the quiet run is out of the attention order after %s", doc.Runs[i-1].ID)
		}
		return
	}
	t.Fatal("the live run is not in the document")
}

// The write pass encodes runs on every core a block at a time: over several blocks, with more runs than
// workers and a last block part full, the document is still the whole judgement's, run for run in order,
// and -o jsonl lists the same runs in the same order.
func TestStatusWritesRunsInOrderAcrossEncodeBlocks(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	fixture, env := orderRuns(t, now)
	head := Snapshot([]model.Run{}, env)
	var runs []model.Run
	for copyNo := 0; len(runs) < 3*encodeBlock*4+7; copyNo++ {
		for _, r := range fixture {
			r.ID = fmt.Sprintf("%s-%03d", r.ID, copyNo)
			r.Dir = fmt.Sprintf("%s/%03d", r.Dir, copyNo)
			r.StatePath = fmt.Sprintf("%s/%03d/state.env", r.Dir, copyNo)
			r.Stages = append([]model.Stage(nil), r.Stages...)
			model.FinalizeRun(&r) // what the id decides (the command it suggests) follows the new id
			runs = append(runs, r)
		}
	}
	want := wholeJudgement(t, runs, env, head)
	stream := func(format string) string {
		out := NewOut(format, env.Now, env.Liveness)
		for i := len(runs) - 1; i >= 0; i-- {
			r := runs[i]
			r.Stages = append([]model.Stage(nil), runs[i].Stages...)
			out.Add(r)
		}
		var b bytes.Buffer
		if _, err := out.Print(&b, "path", head, 0); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if got := stream("json"); got != want.String() {
		t.Fatalf("over %d runs the document differs from the whole judgement's (%d bytes, want %d)", len(runs), len(got), want.Len())
	}
	var doc struct {
		Runs []struct {
			ID string `json:"id"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(want.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(stream("jsonl"), "\n"), "\n")
	if len(lines) != len(doc.Runs) {
		t.Fatalf("-o jsonl wrote %d lines for %d runs", len(lines), len(doc.Runs))
	}
	for i, line := range lines {
		var r struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.ID != doc.Runs[i].ID {
			t.Fatalf("-o jsonl line %d is run %q (%v), the document's is %q", i+1, r.ID, err, doc.Runs[i].ID)
		}
	}
}

// wholeJudgement is the document of runs judged with the whole history in hand, not streamed: what status
// must write whatever order it reads them in.
func wholeJudgement(t *testing.T, runs []model.Run, env model.Env, head model.Snapshot) *bytes.Buffer {
	t.Helper()
	whole := make([]model.Run, len(runs))
	h := model.NewHistory()
	for i := range runs {
		whole[i] = runs[i]
		whole[i].Stages = append([]model.Stage(nil), runs[i].Stages...)
		h.Observe(&whole[i])
	}
	for i := range whole {
		model.JudgeTime(&whole[i], env.Now, env.Liveness, h)
		model.TimingAt(&whole[i], env.Now)
	}
	snap := Snapshot(whole, env)
	snap.Hosts = head.Hosts
	var want bytes.Buffer
	if err := WriteSnapshotJSON(&want, snap); err != nil {
		t.Fatal(err)
	}
	return &want
}
