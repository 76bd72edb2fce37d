package sim

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// generatedEpoch anchors generated runs' timestamps so GenerateRuns writes the same bytes every time (apart
// from the dead pid, which the kernel chooses).
var generatedEpoch = time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)

// spacedRuns is how many generated runs start 7 minutes apart; the rest start a second apart. At 7 minutes
// each, run 6,171 on started after 2026-12-01, and a 10,000-run workspace (16,667 run indexes) reached into
// January 2027: thousands of runs and locks dated ahead of the clock, which real runs never are, judged in
// every benchmark by the rarely taken path for such dates. A second apart, the 200,000th run index starts
// on 2026-11-27, and the runs before spacedRuns keep their times and names.
const spacedRuns = 5000

// generatedAt is when run i's clock starts.
func generatedAt(i int) time.Time {
	return generatedEpoch.Add(time.Duration(min(i, spacedRuns))*7*time.Minute + time.Duration(max(0, i-spacedRuns))*time.Second)
}

// GenerateRuns writes n run roots under dir for tests and benchmarks: half jonggrang features (25 to a
// project under dir/projects/), half resumable run folders under dir/reports/, in a spread of states
// (completed, mid-run with a crashed writer's stale locks, awaiting input, failed, paused, blocked at a gate).
// It returns the state file paths, sorted. The files are written by the same writer code as the demo.
func GenerateRuns(dir string, n int) ([]string, error) {
	if n < 0 {
		return nil, fmt.Errorf("GenerateRuns: n must be >= 0, got %d", n)
	}
	return GenerateMix(dir, (n+1)/2, n/2)
}

// GenerateMix is GenerateRuns with the number of each convention chosen: jonggrang features (25 to a
// project) and resumable run folders, each with the same states and bytes as in GenerateRuns.
func GenerateMix(dir string, jonggrang, resumable int) ([]string, error) {
	return GenerateShaped(dir, jonggrang, resumable, Shape{})
}

// Shape is how big each generated run is, beyond what GenerateMix writes (the zero Shape): for benchmarks of
// workloads the stock plans do not reach (issue 26).
type Shape struct {
	// Stages is the number of stages of every resumable run: its plan's own (4, 5 or 7) continued with
	// stages of the same kind (S5, S6…; M5…; ingest_8…) whose items repeat the plan's. 0 or fewer than the
	// plan's: the plan's own.
	Stages int
	// Phases is the number of phases of every jonggrang manifest: the work type's own (13 to 19) with
	// filler phases 16.011, 16.021… between test-quality and completion. 0 or fewer than the work
	// type's: the work type's own.
	Phases int
	// LogLines pads every resumable run.log to at least this many lines with progress notes after its first
	// entry, in the log's own format, so what the log says (its stages, its last words) is unchanged; the
	// file keeps its modification time. 0: as written (21 to 117 lines).
	LogLines int
}

// GenerateShaped is GenerateMix with every run of the given shape.
func GenerateShaped(dir string, jonggrang, resumable int, shape Shape) ([]string, error) {
	if jonggrang < 0 || resumable < 0 {
		return nil, fmt.Errorf("GenerateMix: counts must be >= 0, got %d jonggrang and %d resumable", jonggrang, resumable)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	dead, err := DeadPID()
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	w := &Workspace{Dir: abs, Reports: filepath.Join(abs, "reports"), opts: Options{Seed: DefaultSeed}, host: host, user: currentUser(), DeadPID: dead, shape: shape}
	for _, d := range []string{w.Reports, filepath.Join(abs, "plans"), filepath.Join(abs, "repos"), filepath.Join(abs, "projects")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	paths := make([]string, 0, jonggrang+resumable)
	// Run i of GenerateRuns is jonggrang feature i/2 when i is even, resumable run i/2 when odd; its clock
	// starts 7 minutes after run i-1's (a second after, from run spacedRuns on: generatedAt).
	for i := 0; i < 2*max(jonggrang, resumable); i++ {
		k := i / 2
		if (i%2 == 0 && k >= jonggrang) || (i%2 == 1 && k >= resumable) {
			continue
		}
		at := generatedAt(i)
		var path string
		if i%2 == 0 {
			path, err = w.generateJonggrang(k, at)
		} else {
			path, err = w.generateResumable(k, at)
		}
		if err != nil {
			return nil, fmt.Errorf("GenerateRuns %s: run %d: %w", abs, i, err)
		}
		paths = append(paths, path)
	}
	sort.Strings(paths)
	if shape.LogLines > 0 {
		if err := padLogs(abs, shape.LogLines); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

var generatedFeatures = []feature{loginFeature, typoFeature, billingFeature, laterFeatures[0], laterFeatures[1], rateLimitFeature}

func (w *Workspace) generateJonggrang(k int, at time.Time) (string, error) {
	base := generatedFeatures[k%len(generatedFeatures)]
	feat := base
	feat.Description = fmt.Sprintf("%s %d", base.Description, k)
	a := &jonggrangActor{
		project: filepath.Join(w.Dir, "projects", fmt.Sprintf("project-%03d", k/25)), feat: feat,
		rng: w.rng(uint64(1000 + k)), pid: w.DeadPID, batch: true, phases: w.shape.Phases,
	}
	switch k % 5 {
	case 1: // awaiting a person at brainstorming (only work types that brainstorm have phase 6)
		if feat.WorkType == "MEDIUM" || feat.WorkType == "LARGE" {
			a.stopAt, a.stopReason = "6", AwaitingInputReason
		}
	case 3:
		a.stopAt, a.stopReason = "8", "Compaction gate blocked phase 8 (context at 86%)"
	}
	var err error
	if k%5 == 2 || k%5 == 4 {
		// The writer died part-way: whatever agent was working keeps its lock, naming a dead pid.
		_, err = replaySteps(a, at, historyScale, 12+a.rng.IntN(40))
	} else {
		_, err = replay(a, at, historyScale)
	}
	if err != nil {
		return "", err
	}
	return a.manifestPath(), a.flush()
}

func (w *Workspace) generateResumable(k int, at time.Time) (string, error) {
	type shape struct {
		stages []stageDef
		style  logStyle
		lock   string
		box    bool
	}
	shapes := []shape{
		{irmStages, styleIRM, "run.lock", false},
		{sphinxStages, styleSphinx, "run.lock", true},
		{miningStages, styleMining, filepath.Join("lock", "active.lock"), false},
	}
	sh := shapes[k%len(shapes)]
	sh.stages = moreStages(sh.stages, w.shape.Stages)
	a, err := w.resumable(fmt.Sprintf("generated-task-%04d", k), sh.stages, sh.style, sh.lock, sh.box, uint64(5000+k), w.DeadPID)
	if err != nil {
		return "", err
	}
	a.batch = &batchFiles{env: map[string]map[string]string{}}
	switch k % 4 {
	case 1:
		stage := sh.stages[len(sh.stages)/2]
		a.blockAt, a.blockItem = stage.ID, stage.Items[len(stage.Items)-1]
	case 2:
		a.dieIn = sh.stages[len(sh.stages)-2].ID
	}
	if k%4 == 3 {
		// Paused between stages after a few invocations.
		_, err = replaySteps(a, at, historyScale, 10+a.rng.IntN(25))
	} else {
		_, err = replay(a, at, historyScale)
	}
	if err != nil {
		return "", err
	}
	return a.statePath(), a.flush()
}

// moreStages is base continued to n stages of the same kind: a numbered id goes on counting (S4 → S5, M4 →
// M5), a named one takes the stage's number (ingest → ingest_8); the items repeat base's.
func moreStages(base []stageDef, n int) []stageDef {
	if n <= len(base) {
		return base
	}
	out := append(make([]stageDef, 0, n), base...)
	last := base[len(base)-1].ID
	prefix, num := strings.TrimRight(last, "0123456789"), -1
	if digits := last[len(prefix):]; digits != "" && prefix != "" {
		fmt.Sscan(digits, &num)
	}
	for i := len(base); i < n; i++ {
		d := base[i%len(base)]
		id := fmt.Sprintf("%s_%d", d.ID, i+1) // S_<NAME>_DONE names take no dash
		if num >= 0 {
			id = fmt.Sprintf("%s%d", prefix, num+i-len(base)+1)
		}
		out = append(out, stageDef{ID: id, Items: d.Items})
	}
	return out
}

// replaySteps is replay for at most n steps.
func replaySteps(a actor, start time.Time, scale float64, n int) (time.Time, error) {
	at := start
	for i := 0; i < n; i++ {
		pause, done, err := a.step(at)
		if err != nil || done {
			return at, err
		}
		at = at.Add(time.Duration(float64(pause) * scale))
	}
	return at, nil
}

// settle sets the modification time of every file under dir to at, so a run built from history looks as old
// on disk as its timestamps say (readers fall back to mtimes for "updated").
func settle(dir string, at time.Time) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			return os.Chtimes(path, at, at)
		}
		return nil
	})
}

// logVocabulary is a cycle of run.log entries in the real tools' styles, with continuation lines and errors,
// for logs that need to be large or fast rather than meaningful.
var logVocabulary = []struct {
	msg  string
	cont []string
}{
	{"stage_start stage=EQ%d", nil},
	{"check_progress stage=EQ%d item=paragraph_ids files_checked=%d", nil},
	{"checklist_item_done key=CB_EQ%d_VERIFY_GREEN", nil},
	{"EQ%d artifact integrity", []string{"artifact=artifacts/eq/summary.json", "sha256=635dde0596fb9adbb0cca1f450d28f3e1ea6ef1b452f1de1c7f67b3dac5c204b", "size_bytes=%d"}},
	{"stage_blocked stage=EQ%d failed_metrics=clause_recall,table_recall", nil},
	{"retrying extraction of clause %d after a timeout", nil},
	{"stage_complete stage=EQ%d", nil},
	{"lock_acquired pid=%d run_id=20261101T080000Z", nil},
}

// logLines writes count entries starting at entry number first, with timestamps from clock(i).
func logLines(b *bufio.Writer, first, count int, clock func(i int) time.Time) int {
	lines := 0
	for i := first; i < first+count; i++ {
		v := logVocabulary[i%len(logVocabulary)]
		msg := v.msg
		if strings.Count(msg, "%d") == 2 {
			msg = fmt.Sprintf(msg, i%14, i%997)
		} else {
			msg = fmt.Sprintf(msg, i%14)
		}
		cont := make([]string, len(v.cont))
		for j, c := range v.cont {
			if strings.Contains(c, "%d") {
				c = fmt.Sprintf(c, 100+i%9000)
			}
			cont[j] = c
		}
		b.WriteString(logEntry(clock(i), msg, cont...))
		lines += 1 + len(cont)
	}
	return lines
}

// AppendLog appends run.log entries to path at about linesPerSec entries a second for d, writing in small
// batches (every 10 ms) the way a busy writer's buffered appends arrive. It returns the number of entries
// written. Timestamps are the wall clock.
func AppendLog(path string, linesPerSec int, d time.Duration) (int, error) {
	if linesPerSec <= 0 {
		return 0, fmt.Errorf("AppendLog: linesPerSec must be > 0, got %d", linesPerSec)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b := bufio.NewWriterSize(f, 256<<10)
	start := time.Now()
	written := 0
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		elapsed := time.Since(start)
		if elapsed > d {
			elapsed = d
		}
		due := int(float64(linesPerSec) * elapsed.Seconds())
		if due > written {
			now := time.Now()
			logLines(b, written, due-written, func(int) time.Time { return now })
			if err := b.Flush(); err != nil {
				return written, err
			}
			written = due
		}
		if elapsed >= d {
			return written, nil
		}
		<-tick.C
	}
}

// GrowLog appends entries to path as fast as it can until the file is at least size bytes, for benchmarks of
// large logs. Timestamps advance one second every 100 entries from a fixed epoch, so the bytes are repeatable.
// It returns the number of entries appended.
func GrowLog(path string, size int64) (int, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	b := bufio.NewWriterSize(f, 1<<20)
	have, entries := st.Size(), 0
	clock := func(i int) time.Time { return generatedEpoch.Add(time.Duration(i/100) * time.Second) }
	for have < size {
		const batch = 4096
		logLines(b, entries, batch, clock)
		have += int64(b.Buffered())
		if err := b.Flush(); err != nil {
			return entries, err
		}
		entries += batch
	}
	return entries, f.Close()
}

// padLogs is Shape.LogLines.
func padLogs(ws string, n int) error {
	logs, err := filepath.Glob(filepath.Join(ws, "reports", "*", "run.log"))
	if err != nil {
		return err
	}
	for _, p := range logs {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines := strings.SplitAfter(string(b), "\n")
		have := len(lines) - 1
		if have >= n || have < 1 {
			continue
		}
		// The first entry and its continuation lines (indented) stay first.
		first := 1
		for first < len(lines) && strings.HasPrefix(lines[first], "  ") {
			first++
		}
		stamp, _, _ := strings.Cut(lines[0], "]")
		var pad strings.Builder
		for i := 0; i < n-have; i++ {
			fmt.Fprintf(&pad, "%s] progress_note step=%d detail=padding-for-a-real-sized-log\n", stamp, i)
		}
		out := strings.Join(lines[:first], "") + pad.String() + strings.Join(lines[first:], "")
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			return err
		}
		if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
			return err
		}
	}
	return nil
}
