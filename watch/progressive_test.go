package watch

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/sim"
	"runwatch/state"
)

// With Progressive, New returns before reading any run; every run found then arrives once through Updates,
// read as state.Load reads it, and Health.Loading counts down to 0 with the last of them.
func TestProgressiveDeliversEveryRunThroughUpdates(t *testing.T) {
	dir := t.TempDir()
	if _, err := sim.GenerateRuns(dir, 24); err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover([]string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	v := newView(t, Options{Paths: []string{dir}, Progressive: true})
	if len(v.runs) != 0 {
		t.Fatalf("Snapshot holds %d runs; with Progressive they come through Updates", len(v.runs))
	}
	if h := v.w.Health(); h.Loading > len(locs) {
		t.Fatalf("Health.Loading %d, more than the %d runs found", h.Loading, len(locs))
	}
	loading := []int{}
	for v.updates == 0 || v.health.Loading > 0 {
		u := <-v.w.Updates()
		if !u.Initial {
			t.Fatalf("an Update of the first read is not marked Initial: %+v", u.Health)
		}
		v.apply(u)
		loading = append(loading, u.Health.Loading)
	}
	if !sort.IsSorted(sort.Reverse(sort.IntSlice(loading))) {
		t.Errorf("Health.Loading went %v; it only counts down", loading)
	}
	if len(v.runs) != len(locs) {
		t.Fatalf("%d runs delivered, %d found", len(v.runs), len(locs))
	}
	// After the first read (and the second look at the runs read before they were watched, still Initial),
	// a change is a change.
	target := locs[len(locs)-1].StatePath
	seenLater := false
	for {
		if err := os.WriteFile(filepath.Join(filepath.Dir(target), "touched"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(target, time.Now(), time.Now()); err != nil {
			t.Fatal(err)
		}
		var u Update
		select {
		case u = <-v.w.Updates():
		case <-time.After(waitLimit):
			t.Fatal("no Update for a touched run")
		}
		if u.Initial {
			if seenLater {
				t.Fatalf("an Initial batch came after a later one")
			}
			continue
		}
		seenLater = true
		if len(u.Changed) > 0 {
			break
		}
	}
	env := state.NewEnv(0)
	for _, loc := range locs {
		got, ok := v.runs[loc.StatePath]
		if !ok {
			t.Fatalf("%s never delivered", loc.StatePath)
		}
		want := state.Load(loc, env)
		if got.ID != want.ID || got.Status != want.Status || got.CurrentStage != want.CurrentStage {
			t.Errorf("%s: delivered %s %s %s, read %s %s %s", loc.StatePath, got.ID, got.Status, got.CurrentStage,
				want.ID, want.Status, want.CurrentStage)
		}
	}
}

// A run that changes on disk after the initial read took it and before its folder was watched still ends up
// shown as it now is.
func TestProgressiveMissesNoChangeDuringTheInitialRead(t *testing.T) {
	dir := t.TempDir()
	if _, err := sim.GenerateMix(dir, 0, 12); err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover([]string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	target := locs[0].StatePath
	data, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	const title = "TASK_NAME=renamed-while-loading"
	changed := strings.Replace(string(data), "TASK_NAME=", title+"\nOLD_TASK_NAME=", 1)
	if changed == string(data) {
		t.Fatalf("%s has no TASK_NAME", target)
	}
	// The change lands after run 0 was read and before any folder is watched: no event can report it.
	written := make(chan struct{})
	var once sync.Once
	write := func(i int) {
		if i == 0 {
			once.Do(func() {
				defer close(written)
				tmp := filepath.Join(filepath.Dir(target), ".state.env.tmp")
				if err := os.WriteFile(tmp, []byte(changed), 0o644); err != nil {
					t.Error(err)
				}
				if err := os.Rename(tmp, target); err != nil {
					t.Error(err)
				}
			})
		}
	}
	v := newView(t, Options{Paths: []string{dir}, Progressive: true, initialRead: write, beforeWatch: func() { <-written }})
	v.until("the renamed run shown", func() bool {
		r, ok := v.runs[target]
		return ok && r.Title == "renamed-while-loading" && v.health.Loading == 0
	})
	if len(v.runs) != len(locs) {
		t.Fatalf("%d runs shown, %d found", len(v.runs), len(locs))
	}
}

// Of the runs read before their folders were watched, only one whose watched folders hold something newer
// than its read is read a second time; the rest are not read again (a second copy of each cost the heap).
func TestProgressiveRereadsOnlyRunsChangedSinceTheirRead(t *testing.T) {
	dir := t.TempDir()
	if _, err := sim.GenerateMix(dir, 4, 8); err != nil {
		t.Fatal(err)
	}
	const slack = 50 * time.Millisecond
	// Everything generated is older than any read by more than the slack (file times are the kernel's).
	for generated := time.Now(); time.Since(generated) <= 2*slack; {
		time.Sleep(slack)
	}
	locs, err := state.Discover([]string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	target := ""
	for _, loc := range locs {
		if loc.Kind == model.KindResumable && target == "" {
			target = loc.StatePath
		}
	}
	data, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(data), "TASK_NAME=", "TASK_NAME=renamed-while-loading\nOLD_TASK_NAME=", 1)
	if changed == string(data) {
		t.Fatalf("%s has no TASK_NAME", target)
	}
	var mu sync.Mutex
	readCount := 0
	allRead := make(chan struct{})
	var again []string
	opts := Options{Paths: []string{dir}, Progressive: true, unseenSlack: slack,
		initialRead: func(i int) {
			if locs[i].StatePath == target {
				// In place, as an editor saves: the folder's own times stay as they were.
				if err := os.WriteFile(target, []byte(changed), 0o644); err != nil {
					t.Error(err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if readCount++; readCount == len(locs) {
				close(allRead)
			}
		},
		beforeWatch: func() { <-allRead }, // every run is read before any folder is watched
		secondRead: func(sp string) {
			mu.Lock()
			defer mu.Unlock()
			again = append(again, sp)
		},
	}
	v := newView(t, opts)
	v.until("the run changed during loading shown as it now is", func() bool {
		r, ok := v.runs[target]
		return ok && r.Title == "renamed-while-loading" && v.health.Loading == 0
	})
	mu.Lock()
	defer mu.Unlock()
	if len(again) != 1 || again[0] != target {
		t.Errorf("read again: %v; want only %s", again, target)
	}
	if len(v.runs) != len(locs) {
		t.Errorf("%d runs shown, %d found", len(v.runs), len(locs))
	}
}

// TestFirstReconcileWaitsForItsShareOfTheWalk: the reconcile scan (a listing of every folder and a stat of
// every file) waits reconcileShare times as long as the look at the tree before it took, the first one too:
// it waits for its share of the walk that set up the watches. At a fixed 30 s, the first scan was an idle
// dashboard's only work in its first minute (0.33% of a core at 1,200 runs, issue 35). The share is raised
// here so that any real walk puts the first scan past the 30 s it used to take.
func TestFirstReconcileWaitsForItsShareOfTheWalk(t *testing.T) {
	dir := t.TempDir()
	if _, err := sim.GenerateRuns(dir, 24); err != nil {
		t.Fatal(err)
	}
	const share = 1_000_000 // a walk of 30 µs or more: past 30 s
	for _, progressive := range []bool{false, true} {
		armed := make(chan time.Duration, 1)
		w, err := New(Options{Paths: []string{dir}, Progressive: progressive, reconcileShare: share,
			reconcileArmed: func(d time.Duration) {
				select {
				case armed <- d:
				default:
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for range w.Updates() {
			}
		}()
		select {
		case d := <-armed:
			w.Close()
			if d <= reconcileEvery || d != share*w.walkTook {
				t.Errorf("progressive %v: the first reconcile scan is armed for %s after a walk of %s; want %d times the walk",
					progressive, d, w.walkTook, share)
			}
		case <-time.After(time.Minute):
			w.Close()
			t.Fatalf("progressive %v: the reconcile scan was not armed within a minute", progressive)
		}
	}
}
